#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A cephfs datastore's cluster lost mid-run, and back (t2105-*.sh).

    t2105-cephfs-outage.py NFS_PORT MOUNT_PORT CLUSTER_SH CEPH_DIR LOG

A writer does 64 KiB FILE_SYNC writes on /cephds; probes send a 4 KiB
FILE_SYNC write on a connection of their own every 0.2 s (a probe may wait
in libcephfs, so each runs in its thread), and another thread writes
FILE_SYNC on the local /ds2 in a loop.  Every daemon of the cluster is
SIGKILLed, left dead for OUTAGE_S, and started again from its data
(cluster.sh kill / revive).  Measured: the time from the kill to the
first NFS3ERR_JUKEBOX, the latency of JUKEBOX replies, ds2's slowest
call during the outage, and the time from the cluster's return to the
first probe answered OK.  Then every FILE_SYNC write acknowledged (writer
and probes) is read back.

Then the cluster evicts the gateway's session (ceph tell mds.* client
evict, as a fence would): that mount never answers again, so the gateway
mounts anew by itself; the client goes on with its old handles, every
acknowledged FILE_SYNC write reads back, and the write verifier changed
(the evicted client cache's UNSTABLE writes are gone: clients resend).
"""
import os
import re
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403

NFS_PORT, MOUNT_PORT = int(sys.argv[1]), int(sys.argv[2])
CLUSTER_SH, CEPH_DIR, LOG = sys.argv[3], sys.argv[4], sys.argv[5]
ADDR = "127.0.0.1"
BLOCK, PROBE = 65536, 4096
OUTAGE_S = 12.0
BOUND_S = 5.0  # STORE_CEPHFS_BOUND_MS
WAIT_S = 300  # a call may wait out the whole outage: no client timeout


pattern = tag_pattern


def root(path):
    return mount_root((ADDR, MOUNT_PORT), path)


class Load:
    def __init__(self, ceph_root, local_root):
        c = Nfs3Client((ADDR, NFS_PORT))
        self.wfh = c.create(ceph_root, "outage.bin").object
        self.pfh = c.create(ceph_root, "probe.bin").object
        c.close()
        lc = Nfs3Client((ADDR, NFS_PORT))
        self.lfh = lc.create(local_root, "local.bin").object
        lc.close()
        self.stop = False
        self.lock = threading.Lock()
        self.acked = {}  # writer: offset -> tag
        self.packed = {}  # probes: offset -> tag
        self.probes = []  # (sent, replied, status)
        self.local = []  # (sent, replied, status)
        self.errors = []
        self.probe_threads = []

    def writer(self):
        c = Nfs3Client((ADDR, NFS_PORT), timeout=WAIT_S)
        off, tag = 0, 1000
        while not self.stop:
            r = c.write(self.wfh, off, pattern(tag, BLOCK), stable=FILE_SYNC)
            if r.status == NFS3ERR_JUKEBOX:
                time.sleep(0.1)
                continue
            if r.status != NFS3_OK:
                self.errors.append("writer: " + status_name(r.status))
                return
            with self.lock:
                self.acked[off] = tag
            off += BLOCK
            tag += 1
        c.close()

    def probe_one(self, n):
        sent = time.time()
        try:
            with Nfs3Client((ADDR, NFS_PORT), timeout=WAIT_S) as c:
                r = c.write(self.pfh, n * PROBE, pattern(n, PROBE),
                            stable=FILE_SYNC)
            st = r.status
        except (ConnectionClosed, OSError) as e:
            st = "error %r" % e
        with self.lock:
            self.probes.append((sent, time.time(), st))
            if st == NFS3_OK:
                self.packed[n * PROBE] = n
            elif st != NFS3ERR_JUKEBOX:
                self.errors.append("probe: %s" % st)

    def prober(self):
        n = 0
        while not self.stop:
            t = threading.Thread(target=self.probe_one, args=(n,))
            t.start()
            self.probe_threads.append(t)
            n += 1
            time.sleep(0.2)

    def local_writer(self):
        c = Nfs3Client((ADDR, NFS_PORT), timeout=30)
        n = 0
        while not self.stop:
            sent = time.time()
            r = c.write(self.lfh, (n % 256) * PROBE, pattern(n, PROBE),
                        stable=FILE_SYNC)
            self.local.append((sent, time.time(), r.status))
            n += 1
            time.sleep(0.05)
        c.close()


def cluster(cmd):
    t0 = time.time()
    subprocess.run([CLUSTER_SH, cmd, CEPH_DIR], check=True,
                   stdout=sys.stdout, stderr=sys.stderr, timeout=180)
    return t0, time.time()


def outage(ck):
    load = Load(root("/cephds"), root("/ds2"))
    threads = [threading.Thread(target=f) for f in
               (load.writer, load.prober, load.local_writer)]
    for t in threads:
        t.start()
    time.sleep(3.0)
    n_before = len(load.acked)
    killed, _ = cluster("kill")
    time.sleep(OUTAGE_S)
    revive_t0, back = cluster("revive")
    # Recovered: a probe sent after the kill answered OK.
    deadline = time.time() + 60
    recovered = None
    while time.time() < deadline and recovered is None:
        with load.lock:
            oks = [rep for sent, rep, st in load.probes
                   if st == NFS3_OK and sent > killed + BOUND_S + 1]
        recovered = min(oks) if oks else None
        time.sleep(0.1)
    time.sleep(2.0)
    load.stop = True
    for t in threads:
        t.join(WAIT_S)
    for t in load.probe_threads:
        t.join(WAIT_S)

    jb = [(sent, rep) for sent, rep, st in load.probes
          if st == NFS3ERR_JUKEBOX]
    first_jb = min(rep for _, rep in jb) - killed if jb else None
    lat = sorted(rep - sent for sent, rep in jb)
    before = [rep - sent for sent, rep, st in load.probes
              if st == NFS3_OK and rep < killed]
    during = [rep - sent for sent, rep, st in load.local
              if killed <= sent <= back]
    local_bad = [st for _, _, st in load.local if st != NFS3_OK]
    ck.check("the writer went on after the outage",
             len(load.acked) > n_before,
             "%d writes before, %d after" % (n_before,
                                             len(load.acked) - n_before))
    ck.check("no error but JUKEBOX", not load.errors, repr(load.errors[:5]))
    ck.check("calls answer NFS3ERR_JUKEBOX within the bound (%.0f s) of "
             "the kill" % BOUND_S,
             first_jb is not None and first_jb <= BOUND_S + 1.5,
             "first after %s s" % first_jb)
    ck.check("JUKEBOX replies come at once (slowest under 1.5 s)",
             lat and lat[-1] < 1.5, "slowest %s" % (lat[-1] if lat else None))
    ck.check("the local datastore answered all along, every call under "
             "1 s", during and max(during) < 1.0 and not local_bad,
             "%d calls, slowest %.3f s, %d not OK" % (
                 len(during), max(during) if during else -1,
                 len(local_bad)))
    ck.check("the datastore recovers by itself within 30 s of the "
             "cluster's return",
             recovered is not None and recovered - back <= 30,
             "%s" % (recovered - back if recovered else None))
    if recovered is None:
        ck.exit()
    c = Nfs3Client((ADDR, NFS_PORT), timeout=60)
    lost = 0
    for off, tag in load.acked.items():
        r, _ = retry_jukebox(lambda: c.read(load.wfh, off, BLOCK))
        if r.status != NFS3_OK or r.data != pattern(tag, BLOCK):
            lost += 1
    plost = 0
    for off, n in load.packed.items():
        r, _ = retry_jukebox(lambda: c.read(load.pfh, off, PROBE))
        if r.status != NFS3_OK or r.data != pattern(n, PROBE):
            plost += 1
    c.close()
    ck.check("every acknowledged FILE_SYNC write reads back",
             lost == 0 and plost == 0,
             "%d of %d writer, %d of %d probe writes lost" % (
                 lost, len(load.acked), plost, len(load.packed)))
    print("    outage: daemons SIGKILLed, started again %.1f s after the "
          "kill began" % (revive_t0 - killed))
    if before:
        print("    outage: before the kill, %d probe FILE_SYNC writes, "
              "slowest %.1f ms" % (len(before), 1000 * max(before)))
    if first_jb is not None and lat:
        print("    outage: first JUKEBOX %.2f s after the kill; JUKEBOX "
              "latency median %.1f ms, max %.1f ms (%d replies)" % (
                  first_jb, 1000 * lat[len(lat) // 2], 1000 * lat[-1],
                  len(lat)))
    if during:
        print("    outage: ds2 (local) %d FILE_SYNC writes during the "
              "outage, slowest %.1f ms" % (len(during), 1000 * max(during)))
    if recovered:
        print("    outage: serving again %.2f s after the daemons were "
              "started again (%.2f s after the kill; cluster.sh saw the "
              "cluster serving after %.2f s)" % (
                  recovered - revive_t0, recovered - killed,
                  back - revive_t0))
    print("    outage: %d writer and %d probe FILE_SYNC writes "
          "acknowledged, %d lost" % (len(load.acked), len(load.packed),
                                     lost + plost))
    return recovered is not None


def evict(ck):
    sessions = re.findall(r"cephfs: cephds: mounted .* session (\d+)",
                          open(LOG).read())
    ck.check("the log names the session", bool(sessions))
    if not sessions:
        return
    c = Nfs3Client((ADDR, NFS_PORT), timeout=WAIT_S)
    fh = c.create(root("/cephds"), "evict.bin").object
    r = c.write(fh, 0, pattern(7, BLOCK), stable=UNSTABLE)
    verf = r.verf
    acked, jukebox, errors = {}, [], []
    t_evict = [None]
    stop = [False]

    def writer():
        off, tag = BLOCK, 5000
        while not stop[0]:
            sent = time.time()
            r = c.write(fh, off, pattern(tag, BLOCK), stable=FILE_SYNC)
            if r.status == NFS3ERR_JUKEBOX:
                jukebox.append(time.time())
                time.sleep(0.1)
                continue
            if r.status != NFS3_OK:
                errors.append(status_name(r.status))
                return
            acked[off] = (tag, sent)
            off += BLOCK
            tag += 1

    t = threading.Thread(target=writer)
    t.start()
    time.sleep(1.0)
    t_evict[0] = time.time()
    subprocess.run(["ceph", "-c", os.path.join(CEPH_DIR, "ceph.conf"),
                    "tell", "mds.*", "client", "evict",
                    "id=%s" % sessions[-1]],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=60)
    deadline = time.time() + 60
    while time.time() < deadline and not any(
            sent > t_evict[0] + 1 for _, sent in acked.values()):
        time.sleep(0.1)
    time.sleep(1.0)
    stop[0] = True
    t.join(WAIT_S)
    after = [sent for _, sent in acked.values() if sent > t_evict[0] + 1]
    ck.check("the writer goes on after the eviction (a new mount)",
             bool(after) and not errors, repr(errors[:3]))
    lost = 0
    for off, (tag, _) in acked.items():
        r, _ = retry_jukebox(lambda: c.read(fh, off, BLOCK))
        if r.status != NFS3_OK or r.data != pattern(tag, BLOCK):
            lost += 1
    ck.check("every acknowledged FILE_SYNC write reads back", lost == 0,
             "%d of %d lost" % (lost, len(acked)))
    r, _ = retry_jukebox(lambda: c.commit(fh))
    ck.check("the write verifier changed (unstable writes get resent)",
             r.status == NFS3_OK and r.verf != verf)
    c.close()
    if after:
        print("    eviction: serving again %.2f s after the evict command "
              "(%d JUKEBOX replies), %d FILE_SYNC writes acknowledged, "
              "%d lost" % (min(after) - t_evict[0], len(jukebox),
                           len(acked), lost))


def main():
    ck = Checks()
    if outage(ck):
        print("eviction:")
        evict(ck)
    ck.exit()


main()
