#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A cephfs datastore under a key restricted to its path, evicted by an MDS
that does not blocklist (t2122-*.sh).

    t2122-cephfs-cephx.py NFS_PORT MOUNT_PORT recover|stuck CEPH_CONF SESSION
    t2122-cephfs-cephx.py NFS_PORT MOUNT_PORT rlog-write|rlog-check - - FILE

Both: the datastore serves (CREATE, 4 FILE_SYNC and 28 UNSTABLE WRITEs,
FSSTAT); then the gateway's session SESSION is evicted (with the admin
key of CEPH_CONF) holding the UNSTABLE writes, and the COMMIT that follows
waits in libcephfs.  The gateway finds the eviction through its mount's
admin socket, whatever its key.
recover: its key may blocklist: it blocklists itself and mounts anew; the
  COMMIT answers JUKEBOX within EVICT_FOUND_S, then OK with a new verifier;
  the client sends its writes again, as RFC 1813 3.3.7 has it, and
  everything reads back, the FILE_SYNC writes from before too.
stuck: its key may not: the COMMIT stays in libcephfs, unanswered; new
  calls answer JUKEBOX within EVICT_FOUND_S, and still STUCK_S later (the
  datastore stays down, the reason logged).
rlog-write: 8 KiB FILE_SYNC writes (the RADOS log's records) for
  RLOG_S, the acknowledged ones kept in FILE for rlog-check, which reads
  them back (after the shell's SIGKILL and restart).
"""
import json
import os
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (FILE_SYNC, NFS3_OK, NFS3ERR_JUKEBOX,  # noqa: E402
                      UNSTABLE, Checks, Nfs3Client, create_retry, mount_root,
                      status_name, tag_pattern)
from syncwriter import SyncWriter, timed  # noqa: E402

NFS_PORT, MOUNT_PORT = int(sys.argv[1]), int(sys.argv[2])
MODE, CEPH_CONF, SESSION = sys.argv[3], sys.argv[4], int(sys.argv[5])
ADDR = "127.0.0.1"
BLOCK = 65536
N = 32  # blocks written, the first 4 FILE_SYNC
# The bound (5 s), two asks of the admin socket 2 s apart and the
# blocklist's OSD map: 8-10 s here, measured.
EVICT_FOUND_S = 30.0
STUCK_S = 15.0
RLOG_S = 3.0
RLOG_BLOCK = 8192  # below intent_log_inplace_min_bytes: logged


def write_all(ck, c, fh):
    """The N writes -> their one verifier."""
    verfs = set()
    for i in range(N):
        stable = FILE_SYNC if i < 4 else UNSTABLE
        r = c.write(fh, i * BLOCK, tag_pattern(i, BLOCK), stable=stable)
        if r.status != NFS3_OK:
            raise SystemExit("WRITE %d: %s" % (i, status_name(r.status)))
        verfs.add(r.verf)
    ck.check("%d writes (4 FILE_SYNC) answered with one verifier" % N,
             len(verfs) == 1, repr(verfs))
    return verfs.pop()


def evict():
    """The gateway's session alone: ceph-fuse's, evicted so, would hang
    as the gateway's mount does."""
    subprocess.run(["ceph", "-c", CEPH_CONF, "tell", "mds.*", "client",
                    "evict", "id=%d" % SESSION], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=60)


def recovered(ck, c, fh, before, evicted):
    """The COMMIT answers OK on the new mount with a new verifier; the
    writes sent again under it all read back."""
    after, t0 = None, time.time()
    while time.time() < t0 + 60:
        r = c.commit(fh)
        if r.status == NFS3_OK:
            after = r.verf
            break
        time.sleep(0.5)
    ck.check("COMMIT answers OK on the new mount within 60 s, with a new "
             "verifier (%.1f s after the eviction)" % (time.time() - evicted),
             after is not None and after != before,
             "before %r after %r" % (before, after))
    for i in range(4, N):
        r = c.write(fh, i * BLOCK, tag_pattern(i, BLOCK), stable=UNSTABLE)
        if r.status != NFS3_OK or r.verf != after:
            ck.check("the UNSTABLE write %d sent again" % i, False, repr(r))
    r = c.commit(fh)
    ck.check("the writes sent again are committed under that verifier",
             r.status == NFS3_OK and r.verf == after, repr(r))
    bad = [i for i in range(N)
           if c.read(fh, i * BLOCK, BLOCK).data != tag_pattern(i, BLOCK)]
    ck.check("all %d blocks read back" % N, not bad, "bad %r" % bad)


def stays_down(ck, c, fh, evicted):
    """The COMMIT waits (a thread of its own, on c); new calls, on a
    connection of their own, answer JUKEBOX, and still STUCK_S later."""
    commit = []
    t = threading.Thread(target=lambda: commit.append(timed(
        lambda: c.commit(fh))), daemon=True)
    t.start()
    with Nfs3Client((ADDR, NFS_PORT), timeout=30) as c2:
        st = None
        while time.time() < evicted + EVICT_FOUND_S:
            st = c2.getattr(fh).status
            if st == NFS3ERR_JUKEBOX:
                break
            time.sleep(0.5)
        ck.check("new calls answer JUKEBOX within %.0f s of the eviction "
                 "(%.1f s)" % (EVICT_FOUND_S, time.time() - evicted),
                 st == NFS3ERR_JUKEBOX, status_name(st) if st else "none")
        time.sleep(STUCK_S)
        r, took = timed(lambda: c2.getattr(fh))
    st = getattr(r, "status", r)
    ck.check("%.0f s later a GETATTR still answers JUKEBOX, at once "
             "(%.2f s)" % (STUCK_S, took),
             st == NFS3ERR_JUKEBOX and took < 2.0, repr(r))
    ck.check("the COMMIT waiting in libcephfs is not answered OK",
             not commit or getattr(commit[0][0], "status", None) != NFS3_OK,
             repr(commit))


def rlog(ck, root, path):
    """rlog-write, then (another gateway process) rlog-check."""
    w = SyncWriter((ADDR, NFS_PORT), root, "logged.bin", block=RLOG_BLOCK)
    if MODE == "rlog-write":
        w.start()
        time.sleep(RLOG_S)
        w.finish()
        ck.check("%d writes acknowledged, no error but JUKEBOX"
                 % len(w.acked), len(w.acked) > 20 and not w.errors,
                 repr(w.errors[:3]))
        with open(path, "w") as f:
            json.dump(w.acked, f)
    else:
        with open(path) as f:
            w.acked = {int(k): v for k, v in json.load(f).items()}
        lost = w.lost()
        ck.check("the %d acknowledged writes read back" % len(w.acked),
                 lost == 0, "%d lost" % lost)
    ck.exit()


def main():
    ck = Checks()
    root = mount_root((ADDR, MOUNT_PORT), "/cephds")
    if MODE.startswith("rlog-"):
        rlog(ck, root, sys.argv[6])
    with Nfs3Client((ADDR, NFS_PORT), timeout=120) as c:
        fh = create_retry(c, root, "evicted-%s.bin" % MODE)
        before = write_all(ck, c, fh)
        st = c.fsstat(root)
        ck.check("FSSTAT answers with the restricted key",
                 st.status == NFS3_OK and st.tbytes > 0, repr(st))
        evict()
        evicted = time.time()
        if MODE != "recover":
            stays_down(ck, c, fh, evicted)
            ck.exit()
        first, took = timed(lambda: c.commit(fh))
        status = getattr(first, "status", first)
        ck.check("the COMMIT after the eviction answers JUKEBOX within "
                 "%.0f s (%.1f s)" % (EVICT_FOUND_S, took),
                 status == NFS3ERR_JUKEBOX and took <= EVICT_FOUND_S,
                 repr(first))
        print("    evicted without a blocklist: COMMIT answered JUKEBOX "
              "%.1f s after the eviction" % took)
        recovered(ck, c, fh, before, evicted)
    ck.exit()


if __name__ == "__main__":
    main()
