#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A gateway cut off while another takes over (t2111-cephfs-partition.sh).

    t2111-cephfs-partition.py DSNFSD TMP CONF CEPH_CONF NETNS HOST_IF DS GW \
        SEED

First a brief cut (BRIEF_S) with no other gateway, FILE_SYNC writes
through a gateway in NETNS: new calls answer JUKEBOX within the bound, it
serves again by itself on the same session, and nothing acknowledged is
lost (brief_cut).  Then the partition:

Gateway A runs in the network namespace NETNS (10.99.0.2), its only link
to the cluster a veth whose other end, HOST_IF (10.99.0.1), is in the
test's namespace with the cluster and gateway B.  A client on A's side of
the link (its sockets made in NETNS) writes through A, then keeps a load
in flight (rlogload.py: FILE_SYNC and DATA_SYNC writes, up to 9 in
flight over three more files, overlapping, extending); the link is cut;
B is started with A's intent_log_gateway GW, fences A and replays its
log; the link comes back.  Checked: what A acknowledged reads back at B
(the load's files as rlogmodel.py allows); what A accepted after the
cut, and what is sent to A after it comes back, never lands (the load's
files through B and their RADOS objects unchanged); an answer A sends
late is for a write B had replayed; A logs the fence once, stops
serving the datastore (NFS3ERR_JUKEBOX), shows it fenced in /metrics,
and does not come back by itself.
"""
import copy
import ctypes
import os
import random
import re
import select
import signal
import struct
import subprocess
import sys
import time
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403
from rlogload import (Writer, ops_pending, rados_objects,  # noqa: E402
                      read_back, stats_line)
from rlogmodel import Model  # noqa: E402
from syncwriter import SyncWriter, check_probes, probe_while  # noqa: E402

DSNFSD, TMP, CONF, CEPH_CONF, NETNS, HOST_IF, DS, GW = sys.argv[1:9]
SEED = int(sys.argv[9])
A_ADDR = "10.99.0.2"
BLOCK = 8192
NBLOCKS = 32
LOAD_FILES = 3
LOAD_MAX = 1 << 20  # each load file
LOAD_BYTES = 2 << 20  # with the 32 blocks, below half the 8 MiB ring
BRIEF_S = 10.0  # a cut the cluster sits out: its sessions stay
BOUND_S = 5.0  # STORE_CEPHFS_BOUND_MS
PIDS = os.path.join(TMP, "gw.pids")  # the shell's trap kills what is left
LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


def in_netns(fn):
    """Runs fn() with this thread in NETNS: the sockets it makes live
    there (a socket keeps the namespace it was made in)."""
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    ns = os.open("/run/netns/" + NETNS, os.O_RDONLY)
    try:
        if LIBC.setns(ns, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns " + NETNS)
        try:
            return fn()
        finally:
            if LIBC.setns(home, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(ns)
        os.close(home)


class Gateway:
    """One dsnfsd, in NETNS when netns, with a state dir of its own."""

    def __init__(self, name, listen, netns=False):
        self.name = name
        self.listen = listen
        self.netns = netns
        self.state = os.path.join(TMP, "state-" + name)
        os.makedirs(self.state, mode=0o700, exist_ok=True)
        self.log = os.path.join(TMP, "gw-%s.log" % name)
        out = os.path.join(TMP, "gw-%s.out" % name)
        cmd = [DSNFSD, "-f", "-l", listen, "-p", "0", "-m", "0", "-P", "off",
               "-A", "0", "-s", self.state, "-c", CONF]
        if netns:
            cmd = ["ip", "netns", "exec", NETNS] + cmd  # exec: same PID
        self.p = subprocess.Popen(cmd, stdout=open(out, "w"),
                                  stderr=open(self.log, "w"))
        with open(PIDS, "a") as f:
            f.write("%d\n" % self.p.pid)
        deadline = time.time() + 90
        while time.time() < deadline:
            m = re.search(r"nfs=(\d+) mount=(\d+).* admin=(\d+)",
                          open(out).read())
            if m:
                self.nfs, self.mount, self.admin = map(int, m.groups())
                return
            if self.p.poll() is not None:
                raise SystemExit("gateway %s died: %s" % (name, self.text()))
            time.sleep(0.05)
        raise SystemExit("gateway %s did not start: %s" %
                         (name, self.text()))

    def text(self):
        return open(self.log).read()

    def client(self):
        make = lambda: Nfs3Client((self.listen, self.nfs), timeout=60)
        return in_netns(make) if self.netns else make()

    def root(self):
        def mnt():
            with MountClient((self.listen, self.mount)) as m:
                return m.mnt("/" + DS).fhandle
        return in_netns(mnt) if self.netns else mnt()

    def metrics(self):
        token = open(os.path.join(self.state, "admin.token")).read().strip()
        req = urllib.request.Request(
            # admin_listen: 127.0.0.1 (in NETNS, A's own loopback).
            "http://127.0.0.1:%d/metrics" % self.admin,
            headers={"Authorization": "Bearer " + token})

        def get():
            return urllib.request.urlopen(req, timeout=10).read().decode()
        return in_netns(get) if self.netns else get()

    def wait_log(self, pattern, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if re.search(pattern, self.text()):
                return True
            time.sleep(0.2)
        return False

    def stop(self, seconds=60):
        """SIGTERM; True when it exits within @seconds."""
        if self.p.poll() is not None:
            return True
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(seconds)
            return True
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(30)
            return False


def pattern(tag, n=BLOCK):
    seed = ("%08d" % tag).encode()
    return (seed * (n // len(seed) + 1))[:n]


def link(state):
    subprocess.run(["ip", "link", "set", HOST_IF, state], check=True)


def write_msg(c, xid, fh, off, data):
    """The bytes of a FILE_SYNC WRITE with XID @xid (sent as is, to one
    gateway and then the other: a client's retransmission)."""
    return call_header(xid, NFS_PROGRAM, NFS_V3, 7, c.cred) + \
        encode_args(7, fh, off, data, FILE_SYNC)


def reply_status(c, xid, seconds):
    """The nfsstat3 of the reply to @xid on @c within @seconds, None when
    none came, "closed" when the connection was."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        r, _, _ = select.select([c.sock], [], [], deadline - time.time())
        if not r:
            return None
        try:
            data = c.recv_message()
        except (ConnectionClosed, OSError, EOFError):
            return "closed"
        if len(data) >= 4 and struct.unpack(">I", data[:4])[0] == xid:
            return parse_reply(data, xid).u32()
    return None


def share_key(gw, name):
    """Copies @gw's handle key into the state directory of the gateway
    @name, to be started: the datastore's handles are signed with it."""
    state = os.path.join(TMP, "state-" + name)
    os.makedirs(state, mode=0o700, exist_ok=True)
    with open(os.path.join(gw.state, "cephfs.key"), "rb") as src:
        key = src.read()
    fd = os.open(os.path.join(state, "cephfs.key"),
                 os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, key)
    os.close(fd)


def brief_cut(ck, a):
    """The link down for BRIEF_S under FILE_SYNC writes through A, then up,
    and no other gateway: new calls answer JUKEBOX within the bound, A
    serves again by itself, on the same session (neither evicted nor
    fenced), and every acknowledged write reads back."""
    def connect():
        return in_netns(lambda: Nfs3Client((A_ADDR, a.nfs), timeout=300))
    root = a.root()
    w = SyncWriter(None, root, "brief.bin", connect=connect)
    with connect() as c:
        pfh = c.create(root, "brief-probe.bin").object
    w.start()
    time.sleep(2.0)
    link("down")
    cut = time.time()
    probes = []
    threads = probe_while(None, pfh, cut + BRIEF_S, probes, connect=connect)
    link("up")
    up = time.time()
    for t in threads:
        t.join(120)
    took = w.wait_oks_after(up, 20, 60)
    first = check_probes(ck, "a brief cut (%.0f s)" % BRIEF_S, probes, cut,
                         BOUND_S)
    ck.check("the link back, A's writes go on by themselves (20 within "
             "60 s)", took is not None, "took %s s" % took)
    t = a.text()
    ck.check("A kept its session: neither evicted nor fenced",
             "evicted" not in t and "fenced" not in t and
             "answers again" in t, t[-800:])
    w.finish_checked(ck)
    if took is not None and first is not None:
        print("    brief cut: first JUKEBOX %.1f s after it, 20 writes "
              "%.1f s after the link came back" % (first, took))


def main():
    ck = Checks()
    # The brief cut first, through a gateway of its own that then stops
    # cleanly: its log closes empty, so B's replay below holds only the
    # partition's records.
    a0 = Gateway("a0", A_ADDR, netns=True)
    brief_cut(ck, a0)
    ck.check("that gateway stops cleanly, its log closed",
             a0.stop(60) and "closed: " in a0.text(), a0.text()[-600:])
    share_key(a0, "a")
    a = Gateway("a", A_ADDR, netns=True)
    t = a.text()
    ck.check("A logs its stable writes in RADOS as gateway %s" % GW,
             "stable writes logged in" in t and "gateway %s" % GW in t,
             t[-600:])
    ca = a.client()
    root = a.root()
    r = ca.create(root, "part.bin")
    ck.status("CREATE through A", r, NFS3_OK)
    fh = r.object
    acked = 0
    for i in range(NBLOCKS):
        r = ca.write(fh, i * BLOCK, pattern(i), stable=FILE_SYNC)
        acked += r.status == NFS3_OK and r.committed == FILE_SYNC
    ck.check("%d FILE_SYNC writes acknowledged by A" % NBLOCKS,
             acked == NBLOCKS, "%d" % acked)
    r = ca.read(fh, 0, BLOCK)
    ck.check("before the cut, a block written through A reads back",
             r.status == NFS3_OK and r.data == pattern(0))
    # The load, in flight when the link goes.
    model = Model(random.Random(SEED), random.Random(SEED).getrandbits(64),
                  LOAD_FILES, LOAD_MAX, mix=False)
    lfhs = []
    for f in range(LOAD_FILES):
        r = ca.create(root, "load%d.bin" % f)
        ck.status("CREATE load%d.bin through A" % f, r, NFS3_OK)
        lfhs.append(r.object)
    wa = Writer(a, lfhs, model, ck)
    while wa.sent_bytes < LOAD_BYTES:
        wa.step()

    # The cut.  A's client is on A's side: it still reaches A.
    link("down")
    cut = time.time()
    late_xid = 0x7a11000
    late = write_msg(ca, late_xid, fh, 0, pattern(900))
    ca.send_message(late)
    st = reply_status(ca, late_xid, 2.0)
    ck.check("a WRITE A takes after the cut is not acknowledged (%s)" %
             st, st is None or st != NFS3_OK)
    maybe = wa.drain(1)  # answers A sent before the cut are acks too
    acked = sum(o.ok for h in model.hist for o in h)
    ck.check("the load's writes before the cut answered as asked",
             wa.errors == 0, "%d did not" % wa.errors)
    print("    load (seed %d): %s; %d in flight at the cut" % (
        SEED, stats_line(model), len(maybe)))

    # B takes A's name over, fences A, replays its log.
    share_key(a, "b")
    b = Gateway("b", "127.0.0.1")
    t = b.text()
    ck.check("B fences A's clients before it replays",
             "fenced its clients" in t, t[-800:])
    m = re.search(r"replayed (\d+) records", t)
    # No checkpoint ran (an hour away, the ring under half full): the
    # log holds every acknowledged record, and maybe those in flight,
    # never the late one (the link was down when A took it).
    least = NBLOCKS + acked
    ck.check("B replays the %d acknowledged records (%d blocks, %d of the "
             "load), at most the %d in flight too, not the late one (%s)" %
             (least, NBLOCKS, acked, len(maybe), m and m.group(1)),
             m and least <= int(m.group(1)) <= least + len(maybe), t[-800:])
    cb = b.client()
    lost = 0
    for i in range(NBLOCKS):
        r = cb.read(fh, i * BLOCK, BLOCK)
        lost += r.status != NFS3_OK or r.data != pattern(i)
    ck.check("B serves %.1f s after the cut: every acknowledged block "
             "reads back (%d lost)" % (time.time() - cut, lost), lost == 0)
    after = copy.deepcopy(model)  # A's late answers go to @model
    bad, named, _, first = read_back(b, lfhs, after)
    ck.check("the load's files read back at B as A answered (%d bytes "
             "not)" % bad, bad == 0, "seed %d: %s" % (SEED,
                                                       "; ".join(named)))
    ids = [cb.getattr(h).attributes.fileid for h in lfhs]
    objs = rados_objects(CEPH_CONF, "cephfs_data", ids, 1)

    # The client moves to B and retransmits the WRITE A never answered,
    # same XID (B's reply cache has never seen it), then writes newer
    # data over it.
    cb.send_message(late)
    st = reply_status(cb, late_xid, 30.0)
    ck.check("the retransmitted WRITE is done by B", st == NFS3_OK,
             "%s" % st)
    r = cb.write(fh, 0, pattern(901), stable=FILE_SYNC)
    ck.status("a newer WRITE of the same block through B", r, NFS3_OK)

    # A partition, not a blip: past the 5 s bound, A's calls that wait on
    # the cluster mark the datastore down and new ones answer JUKEBOX.
    time.sleep(max(0.0, cut + 12 - time.time()))
    c3 = a.client()
    t0 = time.time()
    r = c3.getattr(root)
    ck.check("during the cut A answers NFS3ERR_JUKEBOX at once (%s in "
             "%.2f s)" % (status_name(r.status), time.time() - t0),
             r.status == NFS3ERR_JUKEBOX and time.time() - t0 < 2 and
             "does not answer" in a.text(), a.text()[-800:])
    c3.close()

    # The link comes back: A finds itself blocklisted.
    link("up")
    up = time.time()
    ck.check("A logs that it is fenced",
             a.wait_log(r"cephfs: %s: fenced: another gateway" % DS, 120),
             a.text()[-1200:])
    print("    cut %.1f s; A fenced %.1f s after the link came back" %
          (up - cut, time.time() - up))
    st = reply_status(ca, late_xid, 60.0)
    ck.check("A never acknowledges the WRITE it took during the cut (%s)" %
             (status_name(st) if isinstance(st, int) else st),
             st != NFS3_OK)
    wa.ck = None  # a fenced A's refusals are no failure
    left = wa.drain(5)
    late = [o for o in maybe if o not in left]
    res = [model.check(f, got, size) for f, (size, got) in
           enumerate(first)]
    ck.check("A's late answers to the load (%d, %d OK) are for writes B "
             "replayed (%d bytes not)" % (len(late),
                                          sum(o.ok for o in late),
                                          sum(r[0] for r in res)),
             not any(r[0] for r in res),
             "answered OK: %s; %s" % (ops_pending([o for o in late
                                                   if o.ok]),
                                      "; ".join(r[1] for r in res if r[1])))
    wa.close()
    r = ca.write(fh, BLOCK, pattern(902), stable=FILE_SYNC)
    ck.check("a WRITE sent to A after the link is back is refused (%s)" %
             status_name(r.status), r.status == NFS3ERR_JUKEBOX)
    r = ca.getattr(fh)
    ck.check("so is a GETATTR (%s)" % status_name(r.status),
             r.status == NFS3ERR_JUKEBOX)
    c2 = a.client()
    r = c2.write(fh, 2 * BLOCK, pattern(903), stable=FILE_SYNC)
    ck.check("and a WRITE on a new connection to A (%s)" %
             status_name(r.status), r.status == NFS3ERR_JUKEBOX)
    c2.close()

    time.sleep(5)  # anything of A's that could still land has
    want = {0: pattern(901), 1: pattern(1), 2: pattern(2)}
    for blk, data in want.items():
        r = cb.read(fh, blk * BLOCK, BLOCK)
        ck.check("B reads block %d as it was, none of A's late bytes" % blk,
                 r.status == NFS3_OK and r.data == data)
    # Past B's cache: the file's first RADOS object, as the OSDs have it.
    r = cb.getattr(fh)
    data = b""
    if r.status == NFS3_OK:
        obj = os.path.join(TMP, "obj0")
        subprocess.run(["rados", "-c", CEPH_CONF, "-p", "cephfs_data", "get",
                        "%x.00000000" % r.attributes.fileid, obj], check=True)
        data = open(obj, "rb").read()
    ck.check("the OSDs hold the same bytes (B's GETATTR: %s)" %
             status_name(r.status),
             r.status == NFS3_OK and
             all(data[b * BLOCK:(b + 1) * BLOCK] == d
                 for b, d in want.items()))
    _, _, _, now = read_back(b, lfhs, after)
    ck.check("the load's files read through B as B first read them, and "
             "their RADOS objects are unchanged",
             now == first and
             rados_objects(CEPH_CONF, "cephfs_data", ids, 1) == objs,
             "changed: %s" % [f for f in range(LOAD_FILES)
                              if now[f] != first[f]])

    t = a.text()
    ck.check("A logs the fence once",
             len(re.findall(r"fenced: another gateway", t)) == 1, t[-1200:])
    mt = a.metrics()
    ck.check("A's /metrics: dsnfs_volume_fenced 1, dsnfs_volume_up 0",
             re.search(r'^dsnfs_volume_fenced\{volume="%s"\} 1$' % DS, mt,
                       re.M) and
             re.search(r'^dsnfs_volume_up\{volume="%s"\} 0$' % DS, mt, re.M),
             "\n".join(l for l in mt.splitlines() if "volume_fenced" in l
                       or "volume_up" in l))
    time.sleep(5)
    r = ca.getattr(root)
    ck.check("A does not come back by itself (%s, no new mount)" %
             status_name(r.status),
             r.status == NFS3ERR_JUKEBOX and "mounted anew" not in a.text())
    ck.check("B still serves", cb.getattr(fh).status == NFS3_OK)
    ck.check("A stops on SIGTERM within 30 s", a.stop(30))
    ck.check("A did not mark B's log closed",
             "closed: " not in a.text() or "not clean" in a.text(),
             a.text()[-600:])
    ck.check("B stops cleanly", b.stop(60))
    ck.exit()


try:
    main()
finally:
    # Whatever happened: no gateway left (the shell kills by PID too).
    for pid in open(PIDS).read().split() if os.path.exists(PIDS) else []:
        try:
            if b"dsnfsd" in open("/proc/%s/cmdline" % pid, "rb").read():
                os.kill(int(pid), signal.SIGKILL)
        except (FileNotFoundError, ProcessLookupError):
            pass
