#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The RADOS intent log killed at many points (t2113-cephfs-rados-log-kill.sh).

    t2113-cephfs-rados-log-kill.py DSNFSD TEST_TMP GW_CONF CEPH_CONF DS \
        GATEWAY KILL_POINTS SEED

t8201's method on a cephfs datastore with intent_log = rados, a 100 ms
checkpoint and the smallest ring (8 MiB): a writer keeps up to CONNS *
DEPTH FILE_SYNC WRITEs in flight over FILES files (4 KiB .. 64 KiB, some
unaligned, overwriting earlier writes, extending the files past CephFS's
4 MiB objects); two writes in flight never overlap, so the last write
acknowledged for a byte is well defined.  The gateway is SIGKILLed after
a seeded number of bytes sent (0.02 to 2.5 rings: before the first
checkpoint, between checkpoints, after the ring wrapped), a few ms
later; the replies it sent before it died are read (they are
acknowledgements too).  A new gateway with the same intent_log_gateway
fences the old one's clients and replays its log before it serves; then
every byte ever acknowledged is read back through the handles from
before: it must hold what was acknowledged last for it, or, under a write
still in flight at the kill, that write's byte.  Each 16-byte unit of a
write names the write and its place in the file, so a FAIL says which
write was lost and what was read instead.
"""
import os
import random
import re
import select
import signal
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403
from rlogmodel import UNIT, op_data, who  # noqa: E402

DSNFSD, TMP, CONF, CEPH_CONF, DS, GW = sys.argv[1:7]
POINTS, SEED = int(sys.argv[7]), int(sys.argv[8])
RING = 8 << 20  # intent_log_mib in the .sh
FILES = 3
FILE_MAX = 5 << 20  # past the first 4 MiB object of each file
CONNS, DEPTH = 3, 3  # up to 9 WRITEs in flight
READ_CHUNK = 64 << 10
RUN = [0]
GATEWAYS = []  # those running, killed if the test ends early


class Gateway:
    """One dsnfsd on 127.0.0.1 (ports 0: any), its state directory (the
    handle key) kept across runs, as t2110's."""

    def __init__(self):
        RUN[0] += 1
        state = os.path.join(TMP, "state")
        os.makedirs(state, mode=0o700, exist_ok=True)
        self.log = os.path.join(TMP, "gw-%d.log" % RUN[0])
        out = os.path.join(TMP, "gw-%d.out" % RUN[0])
        self.p = subprocess.Popen(
            [DSNFSD, "-f", "-l", "127.0.0.1", "-p", "0", "-m", "0", "-P",
             "off", "-A", "off", "-s", state, "-c", CONF],
            stdout=open(out, "w"), stderr=open(self.log, "w"))
        deadline = time.time() + 60
        while time.time() < deadline:
            m = re.search(r"nfs=(\d+) mount=(\d+)", open(out).read())
            if m:
                self.nfs, self.mount = int(m.group(1)), int(m.group(2))
                return
            if self.p.poll() is not None:
                raise SystemExit("gateway died: " + self.text())
            time.sleep(0.02)
        self.kill()
        raise SystemExit("gateway did not start: " + self.text())

    def text(self):
        return open(self.log).read()

    def root(self):
        with MountClient(("127.0.0.1", self.mount)) as m:
            return m.mnt("/" + DS).fhandle

    def kill(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGKILL)
        self.p.wait(30)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        return self.p.wait(60)


class Op:
    def __init__(self, op_id, f, off, n, salt):
        self.id, self.f, self.off, self.n = op_id, f, off, n
        self.data = op_data(op_id, off, n, salt)

    def overlaps(self, other):
        return (self.f == other.f and self.off < other.off + other.n and
                other.off < self.off + self.n)

    def __repr__(self):
        return "write %d (file %d, %d+%d)" % (self.id, self.f, self.off,
                                              self.n)


class Model:
    """What was acknowledged: per file, the last acknowledged bytes and a
    mask of the bytes ever acknowledged."""

    def __init__(self, rng, salt):
        self.rng, self.salt = rng, salt
        self.acked = [bytearray(FILE_MAX) for _ in range(FILES)]
        self.known = [bytearray(FILE_MAX) for _ in range(FILES)]
        self.known_end = [0] * FILES
        self.sent_end = [0] * FILES
        self.next_id = 1
        self.ops = {}
        self.acked_ops = 0

    def next_op(self):
        """The next write: its file, size and place from the seeded rng."""
        rng = self.rng
        f = rng.randrange(FILES)
        if rng.random() < 0.5:
            n = 4096 * rng.randint(1, 16)
        else:
            n = rng.randint(4096, 65536)
        end = self.sent_end[f]
        kind = rng.random()
        if kind < 0.3 and end + n <= FILE_MAX:
            off = end  # extends the file
        elif kind < 0.4 and end + 8192 + n <= FILE_MAX:
            off = end + rng.randint(1, 8192)  # extends it past a hole
        elif end < n or kind < 0.7:
            # Overwrites, aligned (or anywhere while the file is short).
            off = 4096 * rng.randrange(max(1, min(end, FILE_MAX - n) // 4096))
        else:
            off = rng.randrange(end - n + 1)  # overwrites, unaligned
        off = min(off, FILE_MAX - n)
        op = Op(self.next_id, f, off, n, self.salt)
        self.next_id += 1
        self.sent_end[f] = max(self.sent_end[f], off + n)
        self.ops[op.id] = op
        return op

    def ack(self, op):
        self.acked[op.f][op.off:op.off + op.n] = op.data
        self.known[op.f][op.off:op.off + op.n] = b"\1" * op.n
        self.known_end[op.f] = max(self.known_end[op.f], op.off + op.n)
        self.acked_ops += 1

    def verify(self, c, fhs, maybe):
        """Reads every file back to its last acknowledged byte -> (bad
        byte count, the first bad ranges named, the writes in flight at
        the kill that read new / torn).  Afterwards the model holds what
        was read where no write was acknowledged (or one in flight at the
        kill landed): the next round must read the same."""
        bad, named = 0, []
        landed = {op.id: [0, 0] for op in maybe}  # bytes new, bytes old
        for f in range(FILES):
            alt = [op for op in maybe if op.f == f]
            for base in range(0, self.known_end[f], READ_CHUNK):
                n = min(READ_CHUNK, self.known_end[f] - base)
                r = c.read(fhs[f], base, n)
                got = r.data if r.status == NFS3_OK else b""
                want = self.acked[f][base:base + n]
                if got == want and not any(
                        op.off < base + n and base < op.off + op.n
                        for op in alt):
                    continue
                b, first = self.check_chunk(f, base, got, alt, landed)
                bad += b
                if first and len(named) < 5:
                    named.append(first)
        torn = sum(1 for v in landed.values() if v[0] and v[1])
        new = sum(1 for v in landed.values() if v[0] and not v[1])
        return bad, named, new, torn

    def name(self, label):
        """"op N" (rlogmodel.who) with its file and range, for a FAIL
        line."""
        m = re.fullmatch(r"op (\d+)", label)
        op = self.ops.get(int(m.group(1))) if m else None
        return repr(op) if op else label

    def check_chunk(self, f, base, got, alt, landed):
        """The slow path of one chunk, byte by byte."""
        acked, known = self.acked[f], self.known[f]
        n = min(READ_CHUNK, self.known_end[f] - base)
        over = {}
        for op in alt:
            for i in range(max(op.off, base), min(op.off + op.n, base + n)):
                over[i] = op
        bad, first = 0, None
        for i in range(base, base + n):
            g = got[i - base] if i - base < len(got) else None
            op = over.get(i)
            # Where the write in flight differs from what was there: did
            # it land?  (Both hold the same unit index, often the same
            # high bytes.)
            if op is not None and op.data[i - op.off] != acked[i]:
                landed[op.id][g != op.data[i - op.off]] += 1
            if not known[i]:
                if g is not None:
                    acked[i] = g
                continue
            if g == acked[i]:
                continue
            if op is not None and g == op.data[i - op.off]:
                acked[i] = g  # the in-flight write landed here
                continue
            bad += 1
            if first is None:
                first = ("file %d offset %d: acknowledged %s, read %s" %
                         (f, i, self.name(who(acked, i, i)),
                          "EOF" if g is None else
                          self.name(who(got, i - base, i))))
        return bad, first


class Writer:
    """CONNS connections, DEPTH WRITEs in flight on each, one thread."""

    def __init__(self, gw, fhs, model, ck):
        self.conns = [Nfs3Client(("127.0.0.1", gw.nfs))
                      for _ in range(CONNS)]
        self.out = [dict() for _ in range(CONNS)]  # xid -> op
        self.fhs, self.model, self.ck = fhs, model, ck
        self.errors = 0

    def inflight(self):
        return [op for out in self.out for op in out.values()]

    def reply(self, i, data):
        xid = struct.unpack(">I", data[:4])[0]
        op = self.out[i].pop(xid, None)
        if op is None:
            return
        u = parse_reply(data, xid)
        status = u.u32()
        fields = decode_write(u, status)
        if status == NFS3_OK and fields["committed"] == FILE_SYNC and \
                fields["count"] == op.n:
            self.model.ack(op)
        else:
            self.errors += 1
            self.ck.check("%r answered" % op, False, "%s %r" % (
                status_name(status), fields))

    def poll(self, timeout):
        """Takes the replies that came within @timeout s."""
        socks = [c.sock for i, c in enumerate(self.conns) if self.out[i]]
        if not socks:
            return
        ready, _, _ = select.select(socks, [], [], timeout)
        for i, c in enumerate(self.conns):
            if c.sock in ready:
                self.reply(i, c.recv_message())

    def send(self, op):
        """Sends @op once no write in flight overlaps it and a connection
        has room."""
        while True:
            busy = any(op.overlaps(o) for o in self.inflight())
            free = [i for i in range(CONNS) if len(self.out[i]) < DEPTH]
            if not busy and free:
                break
            self.poll(10)
        i = free[0]
        c = self.conns[i]
        c.xid = (c.xid + 1) & 0xFFFFFFFF
        c.send_message(call_header(c.xid, NFS_PROGRAM, NFS_V3, 7, c.cred) +
                       encode_args(7, self.fhs[op.f], op.off, op.data,
                                   FILE_SYNC))
        self.out[i][c.xid] = op

    def drain(self):
        """After the kill: the replies already sent are acknowledgements
        too; what is left was in flight."""
        for i, c in enumerate(self.conns):
            c.sock.settimeout(2)
            try:
                while self.out[i]:
                    self.reply(i, c.recv_message())
            except (ConnectionClosed, OSError):
                pass
            c.close()
        return self.inflight()


def kill_round(ck, gw, fhs, model, rng, rnd):
    """Writes until the round's kill point, kills the gateway -> the
    writes in flight at the kill."""
    # The kill point in bytes sent: round 1 always past two rings (the
    # log has wrapped twice), round 2 always early (256 KiB: a few ms of
    # writes, mostly before the round's first checkpoint).
    point = int(RING * rng.uniform(0.02, 2.5))
    if rnd == 1:
        point = int(RING * 2.2)
    elif rnd == 2:
        point = 256 << 10
    # At once (the last writes surely in flight) or a few ms later.
    delay = rng.choice((0, rng.uniform(0, 0.005)))
    w = Writer(gw, fhs, model, ck)
    sent = 0
    try:
        while sent < point:
            op = model.next_op()
            w.send(op)
            sent += op.n
        time.sleep(delay)
    except (ConnectionClosed, OSError) as e:
        ck.check("round %d: the writes go on until the kill" % rnd, False,
                 str(e))
    gw.kill()
    return w.drain(), sent, w.errors


def main():
    ck = Checks()
    salt = random.Random(SEED).getrandbits(64)
    rng = random.Random(SEED)
    model = Model(random.Random(SEED + 1), salt)
    print("seed %d (KILL_SEED=%d reproduces the kill points and the "
          "writes), %d kill points" % (SEED, SEED, POINTS))
    t0 = time.monotonic()
    gw = Gateway()
    try:
        run(ck, gw, model, rng)
    finally:
        for g in GATEWAYS:
            g.kill()
    print("%d acknowledged writes checked over %d kill points in %.0f s "
          "(seed %d)" % (model.acked_ops, POINTS, time.monotonic() - t0,
                         SEED))
    ck.exit()


def run(ck, gw, model, rng):
    GATEWAYS.append(gw)
    t = gw.text()
    ck.check("the log is a %d MiB ring, checkpointed every 100 ms" %
             (RING >> 20),
             "(ring %d MiB, checkpoint every 100 ms" % (RING >> 20) in t,
             t[-400:])
    root = gw.root()
    c = Nfs3Client(("127.0.0.1", gw.nfs))
    fhs = [create_retry(c, root, "f%d.bin" % f) for f in range(FILES)]
    c.close()
    wrapped = checkpointed = 0
    lost_total = 0
    for rnd in range(POINTS):
        maybe, sent, errors = kill_round(ck, gw, fhs, model, rng, rnd)
        GATEWAYS.remove(gw)
        gw = Gateway()
        GATEWAYS.append(gw)
        t = gw.text()
        fenced = "fenced its clients" in t
        m = re.search(r"replayed (\d+) records .*LSN (\d+) to (\d+)", t)
        records, head, end = map(int, m.groups()) if m else (-1, 0, 0)
        wrapped += end > RING
        checkpointed += head > 0
        c = Nfs3Client(("127.0.0.1", gw.nfs))
        bad, named, new, torn = model.verify(c, fhs, maybe)
        c.close()
        lost_total += bad
        print("  round %d: %d KiB sent, %d acknowledged writes so far, "
              "%d in flight at the kill (%d landed, %d torn); replayed %d "
              "records, LSN %d to %d" % (rnd, sent >> 10, model.acked_ops,
                                          len(maybe), new, torn, records,
                                          head, end))
        ck.check("round %d: the new gateway fenced the old one and "
                 "replayed its log" % rnd, fenced and m, t[-600:])
        ck.check("round %d: every acknowledged byte reads back (%d "
                 "lost)" %
                 (rnd, bad), bad == 0,
                 "seed %d: %s" % (SEED, "; ".join(named)))
        ck.check("round %d: every WRITE before the kill answered FILE_SYNC"
                 % rnd, errors == 0, "%d did not" % errors)
    ck.check("a kill after the ring wrapped (%d of %d)" % (wrapped, POINTS),
             wrapped > 0 or POINTS < 2)
    ck.check("a kill after a checkpoint (%d of %d)" % (checkpointed, POINTS),
             checkpointed > 0 or POINTS < 2)
    ck.check("0 acknowledged bytes lost over %d kill points" % POINTS,
             lost_total == 0, "seed %d" % SEED)
    rc = gw.stop()
    GATEWAYS.remove(gw)
    ck.check("the last gateway stops cleanly and closes the log",
             rc == 0 and re.search(r"closed: \d+ records", gw.text()),
             gw.text()[-400:])
    subprocess.run(["rados", "-c", CEPH_CONF, "-p",
                    "cephfs_data", "rm", "dsnfs.ilog.%s.%s" % (DS, GW)],
                   check=False, capture_output=True)


main()
