#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""OSDs hung under load, and back (t2108-*.sh).

    t2108-cephfs-osd-stop.py NFS_PORT MOUNT_PORT CLUSTER_SH CEPH_DIR

A writer does 64 KiB FILE_SYNC writes on /cephds, resending on
NFS3ERR_JUKEBOX as the kernel client does.  One OSD of three is
SIGSTOPped: writes must go on once the cluster marks it down; then two
of three (below min_size): calls answer JUKEBOX within the bound and the
writes go on once they resume (the writer's own call waits it out; a
probe, a 4 KiB FILE_SYNC write on a connection of its own every 0.5 s,
sees JUKEBOX).  Then the leader of the three mons hangs: the others
elect a leader and the writes go on (an MDS that beaconed to the hung
leader is marked laggy past its grace: JUKEBOX replies then, in 2 runs
of 6).  Every acknowledged write reads
back.
"""
import functools
import json
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403
import syncwriter  # noqa: E402
from syncwriter import (  # noqa: E402
    ADDR, BOUND_S, SyncWriter, check_probes, hang_mon, probe_while)

NFS_PORT, MOUNT_PORT, CLUSTER_SH, CEPH_DIR = syncwriter.fault_test_args()
DOWN_S = 30.0  # mark-down (heartbeat grace 5 s) and peering, with margin
HUNG_S = 10.0  # how long two OSDs stay hung
MON_HUNG_S = 20.0  # past the MDS's beacon grace (15 s)
PROMPT_S = 2.0  # what "at once" allows on a loaded machine



def root(path):
    return mount_root((ADDR, MOUNT_PORT), path)


cluster = functools.partial(syncwriter.cluster, CLUSTER_SH, CEPH_DIR)


ceph = functools.partial(syncwriter.ceph_cli, CEPH_DIR)


def osds_up():
    return ceph("osd", "stat").strip()


def quorum():
    """-> (leader, members) of the mons' quorum (the CLI hunts to a mon
    that answers)."""
    q = json.loads(ceph("quorum_status"))
    return q["quorum_leader_name"], sorted(q["quorum_names"])


def mon_leader_stop(ck, w):
    """3. The leader of three mons hung for MON_HUNG_S, past the MDS's
    beacon grace: the two others elect a new leader, the MDS and the
    gateway's clients hunt to them, the writes go on; FSSTAT, which asks
    a mon, answers."""
    croot = root("/cephds")
    leader, members = quorum()
    ck.check("three mons in quorum", members == ["a", "b", "c"],
             repr(members))
    # FSSTAT's last figures are what it answers while the mons hunt.
    with Nfs3Client((ADDR, NFS_PORT)) as c:
        st = c.fsstat(croot).status
    ck.check("FSSTAT answers with the mons up", st == NFS3_OK, repr(st))
    resumed, _, (new_leader, left) = hang_mon(
        ck, w, (ADDR, NFS_PORT), croot, cluster, "mon." + leader,
        MON_HUNG_S, PROMPT_S, meanwhile=quorum, laggy_mds=True)
    ck.check("the two other mons elect a leader (%s, then %s of %s)"
             % (leader, new_leader, left),
             new_leader != leader and leader not in left)
    took = w.wait_oks_after(resumed, 20, 60)
    ck.check("after SIGCONT the writes go on", took is not None)
    cluster("wait-clean")


def main():
    ck = Checks()
    w = SyncWriter((ADDR, NFS_PORT), root("/cephds"), "osd-stop.bin")
    w.start()
    time.sleep(3.0)
    ck.check("the writer runs on a healthy cluster", w.oks_after(0) > 0,
             "%d writes" % w.oks_after(0))

    # 1. One OSD of three hung.
    stopped = time.time()
    cluster("signal", "osd.1", "STOP")
    took = w.wait_oks_after(stopped, 20, DOWN_S + 30)
    state = osds_up()
    ck.check("one OSD of three hung: the writes go on (20 acknowledged "
             "within %.0f s)" % (DOWN_S + 30), took is not None,
             "took %s s; %s" % (took, state))
    ck.check("the cluster marked it down", "2 up" in state, state)
    cluster("signal", "osd.1", "CONT")
    cluster("wait-clean")
    if took is not None:
        print("    one OSD hung: 20 writes acknowledged %.1f s after the "
              "SIGSTOP" % took)

    # 2. Two of three hung: below min_size, the PGs stop serving.
    # After wait-clean the MDS may still be catching up: a CREATE can
    # answer JUKEBOX, and is sent again as a client would.
    c = Nfs3Client((ADDR, NFS_PORT), timeout=300)
    pfh = create_retry(c, root("/cephds"), "probe.bin")
    c.close()
    stopped = time.time()
    cluster("signal", "osd.1", "STOP")
    cluster("signal", "osd.2", "STOP")
    probes = []
    probe_threads = probe_while((ADDR, NFS_PORT), pfh, stopped + HUNG_S,
                                probes)
    resumed = time.time()
    cluster("signal", "osd.1", "CONT")
    cluster("signal", "osd.2", "CONT")
    took = w.wait_oks_after(resumed, 20, 60)
    for t in probe_threads:
        t.join(300)
    first_jb = check_probes(ck, "two OSDs of three hung", probes, stopped,
                            BOUND_S)
    ck.check("they resume: the writes go on by themselves (20 within "
             "60 s)", took is not None, "took %s s" % took)
    if took is not None and first_jb is not None:
        print("    two OSDs hung %.0f s: first JUKEBOX after %.1f s, 20 "
              "writes %.1f s after SIGCONT" % (HUNG_S, first_jb, took))
    cluster("wait-clean")

    mon_leader_stop(ck, w)
    w.finish_checked(ck)
    ck.exit()


if __name__ == "__main__":
    main()
