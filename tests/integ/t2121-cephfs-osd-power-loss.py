#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""OSDs losing power under stable writes, and back (t2121-*.sh).

    t2121-cephfs-osd-power-loss.py NFS_PORT MOUNT_PORT CLUSTER_SH CEPH_DIR

Three writers, each sending again on NFS3ERR_JUKEBOX as the kernel client
does: 64 KiB FILE_SYNC writes on /cephds (ceph_ll_fsync), UNSTABLE ones
with a COMMIT after every 16 on /cephds too (0.1 s apart: the volume to
read back), and 8 KiB FILE_SYNC writes on
/rlogds (records of the RADOS intent log: below intent_log_inplace_min_bytes).

1. One OSD of three loses power (cluster.sh power-cut: from then on it
   drops every write it has not flushed, and ends at its next flush): the
   writes go on once the cluster has marked it down; a deep fsck of its
   store finds nothing wrong; it starts again from its data and the
   cluster is clean again.
2. All three lose power at once: every write waits; new calls answer
   JUKEBOX within the bound; each store passes a deep fsck; they start
   again and the writes go on by themselves, under the same write
   verifier (nothing the gateway had answered was lost with them).

Then a deep scrub of every PG finds every copy alike, and every
acknowledged write reads back (a FILE_SYNC one, or an UNSTABLE one once a
COMMIT answered with its verifier).
"""
import functools
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import Checks, Nfs3Client, create_retry, mount_root  # noqa: E402
import syncwriter  # noqa: E402
from syncwriter import (  # noqa: E402
    ADDR, BOUND_S, CommitWriter, SyncWriter, check_probes, probe_while)

NFS_PORT, MOUNT_PORT, CLUSTER_SH, CEPH_DIR = syncwriter.fault_test_args()
OSDS = ("osd.0", "osd.1", "osd.2")
DOWN_S = 60.0  # mark-down (heartbeat grace 5 s), peering, with margin

cluster = functools.partial(syncwriter.cluster, CLUSTER_SH, CEPH_DIR)


def run(*argv, timeout=120):
    return subprocess.run(list(argv), capture_output=True, text=True,
                          timeout=timeout)


ceph = functools.partial(syncwriter.ceph_cli, CEPH_DIR)


def root(path):
    return mount_root((ADDR, MOUNT_PORT), path)


def fsck(ck, osd):
    """A deep fsck (every byte read and checked against its checksum) of
    the store of `osd`, which has lost power."""
    path = os.path.join(CEPH_DIR, "osd", "ceph-" + osd.split(".")[1])
    t0 = time.time()
    r = run("ceph-bluestore-tool", "fsck", "--deep", "1", "--path", path,
            timeout=300)
    ck.check("%s: its store passes a deep fsck after the power cut "
             "(%.1f s)" % (osd, time.time() - t0),
             r.returncode == 0 and "success" in r.stdout + r.stderr,
             (r.stdout + r.stderr)[-500:])


def dropped(osd):
    """How many writes `osd` dropped when its power went (its log)."""
    with open(os.path.join(CEPH_DIR, "log", osd + ".out"),
              errors="replace") as f:
        return sum("bdev_inject_crash: dropping io" in line for line in f)


def deep_scrub_all(ck):
    """Deep scrubs every PG and checks that no copy differs."""
    t0 = time.time()
    pgs = json.loads(ceph("pg", "ls", "-f", "json"))["pg_stats"]
    before = {p["pgid"]: p["last_deep_scrub_stamp"] for p in pgs}
    # Every PG has a copy on every OSD: one scrub at a time per OSD (the
    # default) scrubs them one after the other.  And an OSD starts asked
    # scrubs only on a third of its ticks (osd_scrub_backoff_ratio).
    ceph("config", "set", "osd", "osd_max_scrubs", "3")
    ceph("config", "set", "osd", "osd_scrub_backoff_ratio", "0")
    ceph("osd", "pool", "deep-scrub", *ceph("osd", "pool", "ls").split())
    deadline, left = time.time() + 240, list(before)
    while left and time.time() < deadline:
        time.sleep(1.0)
        now = json.loads(ceph("pg", "ls", "-f", "json"))["pg_stats"]
        left = [p["pgid"] for p in now
                if p["last_deep_scrub_stamp"] == before[p["pgid"]]]
    ck.check("a deep scrub of each of the %d PGs is done (%.0f s)"
             % (len(before), time.time() - t0), not left,
             "not scrubbed: %r" % left)
    bad = []
    for pool in ("cephfs_metadata", "cephfs_data"):
        out = run("rados", "-c", os.path.join(CEPH_DIR, "ceph.conf"),
                  "list-inconsistent-pg", pool).stdout
        bad += json.loads(out or "[]")
    health = ceph("health", "detail")
    ck.check("and finds every copy alike", not bad and
             "scrub error" not in health and "PG_DAMAGED" not in health,
             "%r; %s" % (bad, health[:500]))


def going(writers, since, n, limit_s):
    """Seconds until each writer has n writes acknowledged after `since`
    (the slowest), or None past limit_s."""
    took = [w.wait_oks_after(since, n, limit_s) for w in writers]
    return None if None in took else max(took)


def main():
    ck = Checks()
    croot, rroot = root("/cephds"), root("/rlogds")
    writers = [SyncWriter((ADDR, NFS_PORT), croot, "sync.bin"),
               CommitWriter((ADDR, NFS_PORT), croot, "commit.bin",
                            pause=0.1),
               SyncWriter((ADDR, NFS_PORT), rroot, "log.bin", block=8192)]
    names = ("FILE_SYNC 64 KiB", "UNSTABLE 64 KiB + COMMIT",
             "RADOS-logged FILE_SYNC 8 KiB")
    for w in writers:
        w.start()
    time.sleep(3.0)
    ck.check("the writers run on a healthy cluster",
             all(w.oks_after(0) > 0 for w in writers),
             repr([w.oks_after(0) for w in writers]))

    # 1. One OSD of three loses power.
    cut = time.time()
    cluster("power-cut", "osd.1")
    ended = time.time()
    print("    osd.1 ended %.1f s after the cut, %d writes dropped"
          % (ended - cut, dropped("osd.1")))
    took = going(writers, ended, 20, DOWN_S)
    ck.check("one OSD of three lost power: the writes go on (20 each "
             "within %.0f s)" % DOWN_S, took is not None, "took %s" % took)
    if took is not None:
        print("    20 writes each acknowledged %.1f s after it ended"
              % took)
    fsck(ck, "osd.1")
    cluster("respawn", "osd.1")
    cluster("wait-clean")

    # 2. All three at once.
    c = Nfs3Client((ADDR, NFS_PORT), timeout=300)
    pfh = create_retry(c, croot, "probe.bin")
    c.close()
    cut = time.time()
    cluster("power-cut", *OSDS)
    print("    all ended %.1f s after the cut; writes dropped: %s"
          % (time.time() - cut, ", ".join("%s %d" % (o, dropped(o))
                                          for o in OSDS)))
    probes = []
    threads = probe_while((ADDR, NFS_PORT), pfh, cut + 2 * BOUND_S, probes)
    for osd in OSDS:
        fsck(ck, osd)
    for osd in OSDS:
        cluster("respawn", osd)
    back = time.time()
    took = going(writers, back, 20, 120)
    for t in threads:
        t.join(300)
    check_probes(ck, "every OSD without power", probes, cut, BOUND_S)
    ck.check("power back: the writes go on by themselves (20 each within "
             "120 s)", took is not None, "took %s" % took)
    if took is not None:
        print("    power off %.0f s; 20 writes each acknowledged %.1f s "
              "after the OSDs started" % (back - cut, took))
    cluster("wait-clean")

    deep_scrub_all(ck)
    for w, name in zip(writers, names):
        t0 = time.time()
        print("  %s: %d acknowledged, %d JUKEBOX" % (name, len(w.acked),
                                                    len(w.jukebox_at)))
        w.finish_checked(ck, name)
        print("    read back in %.0f s" % (time.time() - t0))
    ck.check("the write verifier never changed (no write to send again)",
             writers[1].verifiers == 1, "%d verifiers" % writers[1].verifiers)
    ck.exit()


if __name__ == "__main__":
    main()
