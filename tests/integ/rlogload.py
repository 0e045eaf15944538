# SPDX-License-Identifier: Apache-2.0
"""Gateways and a mixed NFSv3 load for the RADOS intent log's crash and
takeover tests (t2114, t2115, t2116); what may be read back is
rlogmodel.py's.

Gateway   one dsnfsd on 127.0.0.1 (ports 0: any) with a state directory
          of its own name (its handle key: a takeover copies it)
Writer    CONNS connections with DEPTH ops in flight on each, one thread:
          sends the model's ops, reads their replies into it
read_back every file's size and bytes through a gateway, checked by the
          model
"""
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import time
import urllib.request

from nfs3wire import (NFS3_OK, NFS3ERR_JUKEBOX, NFS_PROGRAM, NFS_V3,
                      ConnectionClosed, MountClient, Nfs3Client,
                      call_header, decode_commit, decode_setattr,
                      decode_write, encode_args, parse_reply, status_name)

CONNS, DEPTH = 3, 3  # up to 9 ops in flight
READ_CHUNK = 64 << 10
PROC = {"W": 7, "C": 21, "S": 2}


class Gateway:
    """One dsnfsd: `-s TMP/state-NAME`, its log TMP/gw-NAME-RUN.log."""

    runs = 0

    def __init__(self, dsnfsd, tmp, conf, ds, name, admin=False):
        Gateway.runs += 1
        self.ds, self.name = ds, name
        self.state = os.path.join(tmp, "state-" + name)
        os.makedirs(self.state, mode=0o700, exist_ok=True)
        self.log = os.path.join(tmp, "gw-%s-%d.log" % (name, Gateway.runs))
        out = os.path.join(tmp, "gw-%s-%d.out" % (name, Gateway.runs))
        self.p = subprocess.Popen(
            [dsnfsd, "-f", "-l", "127.0.0.1", "-p", "0", "-m", "0", "-P",
             "off", "-A", "0" if admin else "off", "-s", self.state,
             "-c", conf],
            stdout=open(out, "w"), stderr=open(self.log, "w"))
        self.t0 = time.monotonic()
        deadline = time.time() + 90
        while time.time() < deadline:
            m = re.search(r"nfs=(\d+) mount=(\d+)(?:.* admin=(\d+))?",
                          open(out).read())
            if m and (m.group(3) or not admin):
                self.nfs, self.mount = int(m.group(1)), int(m.group(2))
                self.admin = int(m.group(3) or 0)
                self.start_s = time.monotonic() - self.t0
                return
            if self.p.poll() is not None:
                raise SystemExit("gateway %s died: %s" % (name, self.text()))
            time.sleep(0.02)
        self.kill()
        raise SystemExit("gateway %s did not start: %s" % (name,
                                                           self.text()))

    @staticmethod
    def share_key(tmp, src, dst):
        """Gives gateway @dst the handle key of @src: a client's handles
        stay valid across the takeover."""
        d = os.path.join(tmp, "state-" + dst)
        os.makedirs(d, mode=0o700, exist_ok=True)
        shutil.copy2(os.path.join(tmp, "state-" + src, "cephfs.key"), d)

    def text(self):
        return open(self.log).read()

    def wait_log(self, pattern, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if re.search(pattern, self.text()):
                return True
            time.sleep(0.1)
        return False

    def root(self):
        with MountClient(("127.0.0.1", self.mount)) as m:
            return m.mnt("/" + self.ds).fhandle

    def client(self):
        return Nfs3Client(("127.0.0.1", self.nfs), timeout=60)

    def metrics(self):
        token = open(os.path.join(self.state,
                                  "admin.token")).read().strip()
        req = urllib.request.Request(
            "http://127.0.0.1:%d/metrics" % self.admin,
            headers={"Authorization": "Bearer " + token})
        return urllib.request.urlopen(req, timeout=10).read().decode()

    def signal(self, sig):
        if self.p.poll() is None:
            self.p.send_signal(sig)

    def kill(self):
        self.signal(signal.SIGCONT)  # a stopped one too
        self.signal(signal.SIGKILL)
        self.p.wait(30)

    def stop(self, seconds=60):
        """SIGTERM -> its exit status, or None when it did not end
        within @seconds (then killed)."""
        self.signal(signal.SIGTERM)
        try:
            return self.p.wait(seconds)
        except subprocess.TimeoutExpired:
            self.kill()
            return None


def op_message(xid, cred, fh, op):
    """The RPC call of @op on the file @fh."""
    head = call_header(xid, NFS_PROGRAM, NFS_V3, PROC[op.kind], cred)
    if op.kind == "W":
        return head + encode_args(7, fh, op.off, op.data, op.stable)
    if op.kind == "C":
        return head + encode_args(21, fh, 0, 0)  # the whole file
    return head + encode_args(2, fh, size=op.size)  # no guard


class Writer:
    """Sends the model's ops over CONNS connections, at most DEPTH in
    flight on each; a SETATTR waits until nothing of its file is in
    flight and bars the file until it is answered, unless @concurrent
    (t2116: SETATTRs among the writes in flight).  @fired(op) is called
    on each reply: the round's kill trigger."""

    def __init__(self, gw, fhs, model, ck, fired=None, concurrent=False):
        self.conns = [gw.client() for _ in range(CONNS)]
        self.out = [dict() for _ in range(CONNS)]  # xid -> op
        self.fhs, self.model, self.ck = fhs, model, ck
        self.fired = fired
        self.concurrent = concurrent
        self.barred = set()
        self.errors = 0
        self.sent_bytes = 0

    def inflight(self):
        return [op for out in self.out for op in out.values()]

    def reply(self, i, data):
        xid = struct.unpack(">I", data[:4])[0]
        op = self.out[i].pop(xid, None)
        if op is None:
            return
        u = parse_reply(data, xid)
        status = u.u32()
        if op.kind == "W":
            r = decode_write(u, status)
            ok = (status == NFS3_OK and r["count"] == op.n and
                  r["committed"] >= op.stable)
            self.model.replied(op, ok, r.get("committed"), r.get("verf"))
        elif op.kind == "C":
            r = decode_commit(u, status)
            ok = status == NFS3_OK
            self.model.replied(op, ok, verf=r.get("verf"))
        else:
            r = decode_setattr(u, status)
            ok = status == NFS3_OK
            self.model.replied(op, ok)
            self.barred.discard(op.f)
        if not ok:
            self.errors += 1
            if self.ck:  # None: refusals are expected (a fenced gateway)
                self.ck.check("%r answered" % op, False, "%s %r" % (
                    status_name(status), r))
        if self.fired:
            self.fired(op)

    def poll(self, timeout):
        """Takes the replies that come within @timeout s."""
        socks = [c.sock for i, c in enumerate(self.conns) if self.out[i]]
        if not socks:
            return
        ready, _, _ = select.select(socks, [], [], timeout)
        for i, c in enumerate(self.conns):
            if c.sock in ready:
                self.reply(i, c.recv_message())

    def step(self):
        """Sends the model's next op (waiting for room) -> it, or None
        when every file was barred (a reply was waited for instead)."""
        op = self.model.next_op(self.inflight(), self.barred)
        if op is None:
            self.poll(10)
            return None
        return self.send(op)

    def send(self, op):
        """Sends @op once there is room (and, for a SETATTR, nothing of
        its file in flight) -> @op."""
        while True:
            busy = not self.concurrent and (op.f in self.barred or (
                op.kind == "S" and any(o.f == op.f
                                       for o in self.inflight())))
            free = [i for i in range(CONNS) if len(self.out[i]) < DEPTH]
            if not busy and free:
                break
            self.poll(10)
        i = min(free, key=lambda k: len(self.out[k]))
        c = self.conns[i]
        c.xid = (c.xid + 1) & 0xFFFFFFFF
        self.model.sent(op, self.inflight())
        c.send_message(op_message(c.xid, c.cred, self.fhs[op.f], op))
        self.out[i][c.xid] = op
        if op.kind == "S" and not self.concurrent:
            self.barred.add(op.f)
        self.sent_bytes += op.n
        self.poll(0)
        return op

    def drain(self, seconds=2):
        """Reads the replies that come within @seconds (those already
        sent are acknowledgements too) -> the ops left in flight."""
        deadline = time.monotonic() + seconds
        dead = set()
        while True:
            left = deadline - time.monotonic()
            live = [i for i in range(CONNS) if self.out[i] and i not in dead]
            if left <= 0 or not live:
                break
            ready, _, _ = select.select([self.conns[i].sock for i in live],
                                        [], [], left)
            for i in live:
                c = self.conns[i]
                if c.sock not in ready:
                    continue
                c.sock.settimeout(max(left, 0.1))
                try:
                    self.reply(i, c.recv_message())
                except (ConnectionClosed, OSError):
                    dead.add(i)
        return self.inflight()

    def close(self):
        for c in self.conns:
            c.close()


def kill_at(ck, gw, fhs, model, how, give_up, concurrent=False):
    """Runs the model's load on @gw until the kill point @how = (kind,
    bytes, ops after): after @bytes sent, at once ("bytes") or once a
    SETATTR ("S"; "T": one that truncates) or COMMIT ("C") is answered,
    then @ops after more ops; without its event by @give_up bytes,
    anyway.  SIGKILLs @gw -> (bytes sent, the ops left in flight, the
    Writer's errors)."""
    kind, point, after = how
    state = {"fired": kind == "bytes", "left": after}
    w = None

    def fired(op):
        k = "T" if op.kind == "S" and not op.grow else op.kind
        if (kind in (op.kind, k) and op.ok and w is not None and
                w.sent_bytes >= point):
            state["fired"] = True

    w = Writer(gw, fhs, model, ck, fired, concurrent)
    try:
        while True:
            w.step()
            if w.sent_bytes < point and w.sent_bytes < give_up:
                continue
            if state["fired"] or w.sent_bytes >= give_up:
                if state["left"] <= 0:
                    break
                state["left"] -= 1
    except (OSError, EOFError) as e:
        ck.check("the load goes on until the kill", False, str(e))
    gw.kill()
    maybe = w.drain()
    w.close()
    return w.sent_bytes, maybe, w.errors


def read_file(c, fh, limit):
    """-> (the bytes of @fh to EOF, at most @limit, its size by GETATTR),
    retrying JUKEBOX (a gateway catching up)."""
    for _ in range(300):
        r = c.getattr(fh)
        if r.status != NFS3ERR_JUKEBOX:
            break
        time.sleep(0.1)
    if r.status != NFS3_OK:
        raise SystemExit("GETATTR: %s" % status_name(r.status))
    size = r.attributes.size
    got = bytearray()
    while len(got) < min(size, limit):
        r = c.read(fh, len(got), READ_CHUNK)
        if r.status != NFS3_OK or not r.data:
            break
        got += r.data
    return bytes(got), size


def read_back(gw, fhs, model, nofault=False):
    """Reads every file through @gw and checks it (@nofault: as
    Model.check) -> (bad bytes, the first failures named, bytes read,
    [(size, bytes)] as read)."""
    c = gw.client()
    bad, named, nread, seen = 0, [], 0, []
    for f, fh in enumerate(fhs):
        got, size = read_file(c, fh, model.file_max)
        nread += len(got)
        seen.append((size, got))
        b, first = model.check(f, got, size, nofault)
        bad += b
        if first:
            named.append(first)
    c.close()
    return bad, named, nread, seen


def rados_objects(ceph_conf, pool, fileids, nobj):
    """The first @nobj RADOS objects of each file (by inode number) as
    the OSDs hold them: what no gateway's cache hides."""
    out = []
    for ino in fileids:
        for k in range(nobj):
            r = subprocess.run(["rados", "-c", ceph_conf, "-p", pool, "get",
                                "%x.%08x" % (ino, k), "/dev/stdout"],
                               capture_output=True, check=False)
            out.append(r.stdout if r.returncode == 0 else None)
    return out


def stats_line(model):
    s = model.stats
    return ("%d durable writes checked (%d FILE_SYNC, %d DATA_SYNC, %d "
            "UNSTABLE+COMMIT), %d UNSTABLE left uncommitted or lost, %d "
            "COMMITs, %d truncates, %d extends by SETATTR, %d sent over a "
            "write in flight, %d KiB acknowledged" % (
                model.durable_writes(), s["FILE_SYNC"], s["DATA_SYNC"],
                s["UNSTABLE+COMMIT"], s["UNSTABLE"] - s["UNSTABLE+COMMIT"],
                s["COMMIT"], s["truncate"], s["extend"], s["overlapping"],
                s["bytes"] >> 10))


def ops_pending(ops):
    return ", ".join(repr(o) for o in ops[:6]) + (
        " ..." if len(ops) > 6 else "")

