#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The RADOS intent log under crashes (t2110-cephfs-rados-log.sh).

    t2110-cephfs-rados-log.py DSNFSD TEST_TMP GW_CONF CEPH_CONF DS GATEWAY
"""
import os
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403

DSNFSD, TMP, CONF, CEPH_CONF, DS, GW = sys.argv[1:7]
OID = "dsnfs.ilog.%s.%s" % (DS, GW)
POOL = "cephfs_data"
BLOCK = 8192
RUN = [0]


class Gateway:
    """One dsnfsd on 127.0.0.1 (ports 0: any), state dir kept across runs
    (its handle key)."""

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
                raise SystemExit("gateway died: " + open(self.log).read())
            time.sleep(0.05)
        raise SystemExit("gateway did not start: " + open(self.log).read())

    def text(self):
        return open(self.log).read()

    def root(self):
        with MountClient(("127.0.0.1", self.mount)) as m:
            return m.mnt("/" + DS).fhandle

    def kill(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.wait(30)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            self.p.wait(60)


def pattern(tag, n=BLOCK):
    seed = ("%08d" % tag).encode()
    return (seed * (n // len(seed) + 1))[:n]


def rados(*args, **kw):
    return subprocess.run(["rados", "-c", CEPH_CONF, "-p", POOL] +
                          list(args), check=True, capture_output=True, **kw)


def main():
    ck = Checks()
    a = Gateway()
    ck.check("A logs stable writes in RADOS",
             "stable writes logged in %s/%s" % (POOL, OID) in a.text(),
             a.text()[-400:])
    c = Nfs3Client(("127.0.0.1", a.nfs))
    root = a.root()
    r = c.create(root, "log.bin")
    ck.status("CREATE", r, NFS3_OK)
    fh = r.object
    n = 256
    acked = 0
    for i in range(n):
        r = c.write(fh, i * BLOCK, pattern(i), stable=FILE_SYNC)
        if r.status == NFS3_OK and r.committed == FILE_SYNC:
            acked += 1
    ck.check("%d FILE_SYNC writes acknowledged through the log" % n,
             acked == n, "%d" % acked)
    a.kill()
    # An hour to the next checkpoint and an 8 MiB ring 2 MiB full: the
    # data are in A's cache and its log only (B must replay all 256).
    ck.check("A's checkpoint interval is an hour",
             "checkpoint every 3600000 ms" in a.text(), a.text()[-400:])

    b = Gateway()
    t = b.text()
    ck.check("B fences A's clients before the replay", "fenced its clients"
             in t, t[-600:])
    m = re.search(r"replayed (\d+) records", t)
    ck.check("B replays A's %d records" % n, m and int(m.group(1)) == n,
             t[-600:])
    c = Nfs3Client(("127.0.0.1", b.nfs))
    lost = 0
    for i in range(n):
        r = c.read(fh, i * BLOCK, BLOCK)
        if r.status != NFS3_OK or r.data != pattern(i):
            lost += 1
    ck.check("every acknowledged write reads back through B (%d lost)" %
             lost, lost == 0)

    # A record corrupted in the object: the replay stops there.
    for i in range(3):
        r = c.write(fh, (n + i) * BLOCK, pattern(1000 + i), stable=FILE_SYNC)
        ck.status("FILE_SYNC write %d through B" % i, r, NFS3_OK)
    b.kill()
    img = os.path.join(TMP, "log.img")
    rados("get", OID, img)
    data = bytearray(open(img, "rb").read())
    # The ring starts at 4096 with the first record; its data starts after
    # the 56-byte header and the handle: flip a byte of record 2's data.
    rec_len = 56 + len(fh) + BLOCK
    rec_len += (-rec_len) % 8
    data[4096 + rec_len + 56 + len(fh) + 100] ^= 0xff
    open(img, "wb").write(bytes(data))
    rados("put", OID, img)
    d = Gateway()
    t = d.text()
    ck.check("one log line names the corrupt record",
             t.count("is corrupt (checksum)") == 1, t[-600:])
    m = re.search(r"replayed (\d+) records", t)
    ck.check("only the record before it is replayed",
             m and int(m.group(1)) == 1, t[-600:])
    d.stop()
    ck.check("a clean stop marks the log closed",
             re.search(r"closed: \d+ records", d.text()) is not None,
             d.text()[-400:])
    e = Gateway()
    ck.check("after a clean stop no one is fenced",
             "fenced" not in e.text(), e.text()[-400:])
    e.stop()
    rados("rm", OID)
    ck.exit()


main()
