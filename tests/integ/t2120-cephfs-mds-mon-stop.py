#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A hung MDS, then a hung mon, and back (t2120-*.sh).

    t2120-cephfs-mds-mon-stop.py NFS_PORT MOUNT_PORT CLUSTER_SH CEPH_DIR

A writer does 64 KiB FILE_SYNC writes on /cephds (syncwriter.py).  The
MDS is SIGSTOPped for HUNG_S.  Meanwhile a MNT of /cephds/by-tcp (TCP)
and one of /cephds/by-udp (UDP), directories the gateway has not looked
up, wait on the MDS; MOUNT's other calls and the local /ds2's NFS calls
must still answer at once, and the cephfs datastore's calls answer
NFS3ERR_JUKEBOX within the bound.  Then SIGCONT: the two MNTs are
answered with their handles, a new MNT works, the writes go on by
themselves.  Then the mon is SIGSTOPped for MON_HUNG_S: the writes, which
do not need it, go on without a JUKEBOX; FSSTATs, which ask it, answer
with its last figures.  Every acknowledged write reads back.
"""
import functools
import os
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403
import syncwriter  # noqa: E402
from syncwriter import (  # noqa: E402
    ADDR, BOUND_S, SyncWriter, check_probes, hang_mon, probe_while, timed)

NFS_PORT, MOUNT_PORT, CLUSTER_SH, CEPH_DIR = syncwriter.fault_test_args()
HUNG_S = 20.0  # past the mon's beacon grace (15 s): the MDS is laggy
# Below the MDS's beacon grace (15 s): past it the MDS, without the mon's
# replies, takes itself for laggy and holds its clients' requests, and
# the datastore goes down as with a hung MDS (measured: 12 s in).
MON_HUNG_S = 10.0
PROMPT_S = 2.0  # what "at once" allows on a loaded machine
BLOCK = syncwriter.BLOCK


cluster = functools.partial(syncwriter.cluster, CLUSTER_SH, CEPH_DIR)


class PendingMnt:
    """A MNT of `path` over `proto` on a thread of its own."""

    def __init__(self, path, proto):
        self.path, self.proto = path, proto
        self.result = None  # (status or error, seconds)
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        t0 = time.time()
        try:
            with MountClient((ADDR, MOUNT_PORT), proto=self.proto,
                             timeout=120) as m:
                st = m.mnt(self.path).status
        except (ConnectionClosed, OSError) as e:
            st = "error %r" % e
        self.result = (st, time.time() - t0)


def local_calls(ck, lroot):
    """MOUNT's other calls and ds2's NFS calls, each on a new connection:
    a connection lands on any worker loop, the MNT's included."""
    for proto in ("tcp", "udp"):
        def mnt():
            with MountClient((ADDR, MOUNT_PORT), proto=proto,
                             timeout=30) as m:
                return m.mnt("/ds2").status
        r, took = timed(mnt)
        ck.check("MNT /ds2 over %s answers at once (%.2f s)" % (proto, took),
                 r == MNT3_OK and took <= PROMPT_S, repr(r))

        def export():
            with MountClient((ADDR, MOUNT_PORT), proto=proto,
                             timeout=30) as m:
                return len(m.export())
        r, took = timed(export)
        ck.check("EXPORT over %s answers at once (%.2f s)" % (proto, took),
                 r == 3 and took <= PROMPT_S, repr(r))  # ds1 ds2 cephds
    slow = []
    for n in range(8):
        def io():
            with Nfs3Client((ADDR, NFS_PORT), timeout=30) as c:
                fh = c.create(lroot, "during-%d" % n).object
                w = c.write(fh, 0, tag_pattern(n, 4096), stable=FILE_SYNC)
                r = c.read(fh, 0, 4096)
                return (w.status, r.status, r.data == tag_pattern(n, 4096))
        r, took = timed(io)
        if r != (NFS3_OK, NFS3_OK, True) or took > PROMPT_S:
            slow.append((n, r, round(took, 2)))
    ck.check("ds2's CREATE, WRITE and READ on 8 connections answer at once",
             not slow, repr(slow))


def fsstat(croot):
    """An FSSTAT of cephds on a connection of its own -> (status,
    seconds)."""
    def call():
        with Nfs3Client((ADDR, NFS_PORT), timeout=120) as c:
            return c.fsstat(croot).status
    return timed(call)


def mon_stop(ck, w, croot):
    """The mon hung for MON_HUNG_S: the data path does not need it, so the
    writes go on and the datastore is not taken for down; FSSTAT, which
    asks the mon, answers with the last figures it gave."""
    before = fsstat(croot)
    ck.check("FSSTAT of cephds answers with the mon up", before[0] == 0,
             repr(before))
    resumed, oks, _ = hang_mon(ck, w, (ADDR, NFS_PORT), croot, cluster,
                               "mon.a", MON_HUNG_S, PROMPT_S)
    after = fsstat(croot)
    ck.check("FSSTAT after SIGCONT answers (%.2f s)" % after[1],
             after[0] == 0, repr(after))
    print("    mon hung %.0f s: %d writes acknowledged meanwhile, 20 more "
          "%.1f s after SIGCONT" % (MON_HUNG_S, oks,
                                    w.wait_oks_after(resumed, 20, 60) or -1))


def main():
    ck = Checks()
    croot = mount_root((ADDR, MOUNT_PORT), "/cephds")
    lroot = mount_root((ADDR, MOUNT_PORT), "/ds2")
    w = SyncWriter((ADDR, NFS_PORT), croot, "mds-stop.bin")
    with Nfs3Client((ADDR, NFS_PORT)) as c:
        pfh = create_retry(c, croot, "probe.bin")
    w.start()
    time.sleep(3.0)
    ck.check("the writer runs on a healthy cluster", w.oks_after(0) > 0,
             "%d writes" % w.oks_after(0))

    stopped = time.time()
    cluster("signal", "mds.a", "STOP")
    tcp = PendingMnt("/cephds/by-tcp", "tcp")
    udp = PendingMnt("/cephds/by-udp", "udp")
    time.sleep(1.0)
    ck.check("the MNTs of directories not looked up wait on the MDS",
             tcp.result is None and udp.result is None,
             "tcp %r, udp %r" % (tcp.result, udp.result))
    local_calls(ck, lroot)
    def getattr_root():
        with Nfs3Client((ADDR, NFS_PORT), timeout=60) as c:
            return c.getattr(croot).status
    probe, took = timed(getattr_root)
    ck.check("a GETATTR of cephds answers OK or JUKEBOX within the bound "
             "(%.2f s)" % took,
             probe in (NFS3_OK, NFS3ERR_JUKEBOX) and took <= BOUND_S + 2.0,
             repr(probe))
    # The writer's own call waits in libcephfs as long as the MDS does
    # (never abandoned); new calls must answer within the bound.
    probes = []
    probe_threads = probe_while((ADDR, NFS_PORT), pfh, stopped + HUNG_S,
                                probes)
    resumed = time.time()
    cluster("signal", "mds.a", "CONT")
    for t in probe_threads + [tcp.thread, udp.thread]:
        t.join(120)
    check_probes(ck, "the MDS hung", probes, stopped, BOUND_S)
    for m in (tcp, udp):
        st = m.result[0] if m.result else None
        ck.check("the MNT of %s over %s is answered once the MDS is back"
                 % (m.path, m.proto), st in (MNT3_OK, MNT3ERR_SERVERFAULT),
                 repr(m.result))
        if m.result:
            print("    MNT %s over %s: status %r after %.1f s"
                  % (m.path, m.proto, m.result[0], m.result[1]))
    mounted = None
    for _ in range(600):
        with MountClient((ADDR, MOUNT_PORT), timeout=30) as mc:
            if mc.mnt("/cephds/by-tcp").status == MNT3_OK:
                mounted = time.time() - resumed
                break
        time.sleep(0.1)
    ck.check("a new MNT of /cephds/by-tcp works within 60 s of SIGCONT",
             mounted is not None, "never")
    took = w.wait_oks_after(resumed, 20, 60)
    ck.check("the writes go on by themselves (20 within 60 s)",
             took is not None, "took %s s" % took)
    if took is not None and mounted is not None:
        print("    MDS hung %.0f s: MNT again %.1f s and 20 writes %.1f s "
              "after SIGCONT" % (HUNG_S, mounted, took))
    mon_stop(ck, w, croot)
    w.finish_checked(ck)
    ck.exit()


if __name__ == "__main__":
    main()
