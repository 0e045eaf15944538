#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Two gateways on one CephFS datastore, and a failover (t2103-*.sh).

    t2103-cephfs-gateways.py DSNFSD TEST_TMP GW_CONF CEPH_CONF

Consistency a client gets: CephFS's.  The gateways are two CephFS clients;
the MDS hands out capabilities so that a read through one gateway after a
write acknowledged by the other sees it, UNSTABLE writes included (the
writer's cached data is flushed when the reader asks).  An NFS client's
own attribute and data caches come on top (close-to-open), as with one
server.
"""
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403

DSNFSD, TMP, CONF, CEPH_CONF = sys.argv[1:5]
BLOCK = 65536


class Gateway:
    """One dsnfsd serving GW_CONF on ADDR (ports 0: any)."""

    def __init__(self, name, addr, nfs_port=0, mount_port=0, key_from=None):
        self.name, self.addr = name, addr
        state = os.path.join(TMP, "state-" + name)
        os.makedirs(state, mode=0o700, exist_ok=True)
        if key_from is not None:
            copy_key(key_from, name)
        self.log = os.path.join(TMP, "gw-%s.log" % name)
        out = os.path.join(TMP, "gw-%s.out" % name)
        self.p = subprocess.Popen(
            [DSNFSD, "-f", "-l", addr, "-p", str(nfs_port), "-m",
             str(mount_port), "-P", "off", "-A", "off", "-s", state,
             "-c", CONF],
            stdout=open(out, "w"), stderr=open(self.log, "w"))
        deadline = time.time() + 30
        while time.time() < deadline:
            m = re.search(r"nfs=(\d+) mount=(\d+)", open(out).read())
            if m:
                self.nfs, self.mount = int(m.group(1)), int(m.group(2))
                break
            if self.p.poll() is not None:
                raise SystemExit("%s died: %s" % (name, open(self.log).read()))
            time.sleep(0.05)
        else:
            raise SystemExit("%s did not start" % name)
        m = re.search(r"session (\d+)", open(self.log).read())
        self.session = int(m.group(1)) if m else None

    def client(self):
        return Nfs3Client((self.addr, self.nfs))

    def root(self):
        with MountClient((self.addr, self.mount)) as m:
            return m.mnt("/ds1").fhandle

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            self.p.wait(30)


def copy_key(src, dst):
    """What the operator does for each new gateway: the handle key of the
    first one (state_dir/cephfs.key, 0600) into the new one's state dir."""
    data = open(os.path.join(TMP, "state-" + src, "cephfs.key"), "rb").read()
    path = os.path.join(TMP, "state-" + dst, "cephfs.key")
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, data)
    os.close(fd)


def refused_without_key(ck, addr):
    """A gateway whose state dir lacks the datastore's key does not serve
    it (the datastore is down, retried as a cluster that does not answer),
    says why, and makes no key of its own."""
    state = os.path.join(TMP, "state-nokey")
    os.makedirs(state, mode=0o700, exist_ok=True)
    log = os.path.join(TMP, "gw-nokey.log")
    p = subprocess.Popen(
        [DSNFSD, "-f", "-l", addr, "-p", "0", "-m", "0", "-P", "off",
         "-A", "off", "-s", state, "-c", CONF],
        stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    said = False
    deadline = time.time() + 30
    while time.time() < deadline and p.poll() is None and not said:
        said = "does not have: copy cephfs.key" in open(log).read()
        time.sleep(0.1)
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    p.wait(30)
    ck.check("a gateway without the datastore's key does not serve it, "
             "and says why", said, open(log).read()[-400:])
    ck.check("... and makes no key of its own",
             not os.path.exists(os.path.join(state, "cephfs.key")))


def pattern(tag, n=BLOCK):
    seed = ("%08d" % tag).encode()
    return (seed * (n // len(seed) + 1))[:n]


def two_gateways(ck, a, b):
    ra, rb = a.root(), b.root()
    ck.check("A and B give the same root handle", ra == rb)
    ca, cb = a.client(), b.client()
    r = ca.create(ra, "shared.bin")
    ck.status("CREATE through A", r, NFS3_OK)
    fa = r.object
    fb = cb.walk(rb, "shared.bin")
    ck.check("B looks it up under the same handle", fa == fb)
    data = pattern(1, 1 << 20)
    for off in range(0, len(data), BLOCK):
        r = ca.write(fa, off, data[off:off + BLOCK], stable=FILE_SYNC)
        if r.status != NFS3_OK:
            break
    ck.status("1 MiB of FILE_SYNC writes through A", r, NFS3_OK)
    got = b""
    while len(got) < len(data):
        r = cb.read(fb, len(got), BLOCK)
        if r.status != NFS3_OK or not r.data:
            break
        got += r.data
    ck.check("B reads what A wrote", got == data)
    r = cb.write(fb, 0, pattern(2), stable=UNSTABLE)
    ck.status("UNSTABLE write through B", r, NFS3_OK)
    r = ca.read(fa, 0, BLOCK)
    ck.check("A reads B's UNSTABLE write at once (CephFS caps)",
             r.status == NFS3_OK and r.data == pattern(2))
    r = ca.mkdir(ra, "dir")
    ck.status("MKDIR through A", r, NFS3_OK)
    d = r.object
    for i in range(200):
        ca.create(d, "e%03d-%s" % (i, "x" * (i % 30)))
    full, _ = ca.readdir_all(d, count=1024)
    page = ca.readdir(d, 0, ZERO_VERF, 1024)
    rest, cookie, verf = [], page.entries[-1].cookie, page.cookieverf
    while True:
        r = cb.readdir(d, cookie, verf, 1024)
        if r.status != NFS3_OK:
            break
        rest += r.entries
        if r.eof:
            break
        cookie, verf = r.entries[-1].cookie, r.cookieverf
    names = [e.name for e in page.entries + rest]
    ck.check("a READDIR started on A goes on from its cookie on B",
             names == [e.name for e in full] and len(names) == 202,
             "%d of %d" % (len(names), len(full)))
    ca.close()
    cb.close()
    return ra


def failover(ck, a, root):
    """Writer on A's address; A killed, fenced, C takes A's address."""
    c = a.client()
    fh = c.create(root, "failover.bin").object
    r = c.write(fh, 0, pattern(9), stable=UNSTABLE)
    verf_a = r.verf
    acked, stalls, stale, errors = {}, [], [], []
    killed_at = [None]
    stop = [False]

    def writer():
        off = BLOCK
        tag = 100
        while not stop[0]:
            try:
                r = c.write(fh, off, pattern(tag), stable=FILE_SYNC)
            except (ConnectionClosed, OSError):
                t0 = time.time()
                while True:
                    try:
                        c.connect()
                        r = c.write(fh, off, pattern(tag), stable=FILE_SYNC)
                        break
                    except (ConnectionClosed, OSError):
                        time.sleep(0.05)
                stalls.append(time.time() - (killed_at[0] or t0))
            if r.status == NFS3ERR_STALE:
                stale.append(off)
                return
            if r.status == NFS3ERR_JUKEBOX:
                time.sleep(0.1)
                continue
            if r.status != NFS3_OK:
                errors.append(status_name(r.status))
                return
            acked[off] = tag
            off += BLOCK
            tag += 1

    # What ESXi 8 would have seen: dsload with its client's rules and
    # timers (perf/dsload/esxi.c), on A's address through the failover.
    esxi_out = os.path.join(TMP, "dsload-esxi.out")
    esxi = subprocess.Popen(
        [os.path.join(os.path.dirname(DSNFSD), "dsload"), "-s", a.addr,
         "--nfs-port", str(a.nfs), "--mount-port", str(a.mount),
         "-D", "ds1", "--vmdks", "1", "--vmdk-size", "16m", "--bs", "64k",
         "--iodepth", "2", "--ramp", "0", "--runtime", "10", "--verify",
         "--esxi", "8"],
        stdout=open(esxi_out, "w"), stderr=subprocess.STDOUT)
    t = threading.Thread(target=writer)
    t.start()
    time.sleep(3.0)
    n_before = len(acked)
    a.p.send_signal(signal.SIGKILL)
    a.p.wait()
    killed_at[0] = time.time()
    # Fencing: the dead gateway's session goes (and its caps with it)
    # before another takes its address, so that nothing of it lands later.
    if a.session is not None:
        subprocess.run(["ceph", "-c", CEPH_CONF, "tell", "mds.*", "client",
                        "evict", "id=%d" % a.session],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=60)
    gw_c = Gateway("c", a.addr, a.nfs, a.mount, key_from="a")
    time.sleep(2.0)
    stop[0] = True
    t.join(60)
    ck.check("the writer went on after the failover",
             len(acked) > n_before and not t.is_alive(),
             "%d writes before, %d after" % (n_before, len(acked) - n_before))
    ck.check("no NFS3ERR_STALE with the old handle", not stale)
    rc = esxi.wait(120)
    with open(esxi_out) as f:
        report = f.read()
    line = re.search(r"esxi ds1: .*", report)
    print("    failover as ESXi 8 sees it (dsload --esxi 8): %s"
          % (line.group(0) if line else report[-400:]))
    ck.check("dsload (ESXi 8's rules, --verify) rode through: exit 0, no "
             "heartbeat failed, no APD",
             rc == 0 and line is not None and
             re.search(r"\(0 failed\), APD start 0,", line.group(0)),
             report[-400:])
    ck.check("no other error", not errors, repr(errors))
    stall = max(stalls) if stalls else 0.0
    print("    failover: %d FILE_SYNC writes acknowledged, client stalled "
          "%.2f s (SIGKILL to the first reply of C)" % (len(acked), stall))
    c2 = gw_c.client()
    lost = 0
    for off, tag in acked.items():
        r = c2.read(fh, off, BLOCK)
        if r.status != NFS3_OK or r.data != pattern(tag):
            lost += 1
    print("    failover: %d of %d acknowledged FILE_SYNC writes lost"
          % (lost, len(acked)))
    ck.check("every acknowledged FILE_SYNC write reads back", lost == 0,
             "%d lost" % lost)
    r = c2.commit(fh)
    ck.check("the write verifier changed (unstable writes get resent)",
             r.status == NFS3_OK and r.verf != verf_a)
    c.close()
    c2.close()
    return gw_c


def main():
    ck = Checks()
    a = Gateway("a", "127.0.0.2")
    refused_without_key(ck, "127.0.0.3")
    b = Gateway("b", "127.0.0.3", key_from="a")
    gw_c = None
    try:
        print("two gateways:")
        root = two_gateways(ck, a, b)
        print("failover:")
        gw_c = failover(ck, a, root)
    finally:
        for g in (gw_c, b, a):
            if g is not None:
                g.stop()
    ck.exit()


main()
