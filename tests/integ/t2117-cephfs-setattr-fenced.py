#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A SETATTR whose gateway is fenced while it syncs (t2117-cephfs-setattr-fenced.sh).

    t2117-cephfs-setattr-fenced.py DSNFSD TEST_TMP CONF CLUSTER_SH \
        CLUSTER_DIR FUSE_PATH

Gateway A writes a file it alone has open: the MDS grants it the file's
caps exclusive, and libcephfs applies a SETATTR that grows the file in
its own cache, then sends the new size with the caps' flush that
ceph_ll_sync_inode waits for.  The MDS is SIGKILLed, A gets a SETATTR to
1 MiB and waits in that sync; A's client is blocklisted (what a takeover
or an eviction does) and the MDS started again: it drops A's session,
and libcephfs drops the size it was flushing and ends the sync with 0.
A must not answer that SETATTR NFS3_OK unless the file has the new size
(read through ceph-fuse, FUSE_PATH, once the MDS is back); mounted anew,
A then takes the client's retry.
"""
import json
import os
import select
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (NFS3_OK, NFS3ERR_JUKEBOX, NFS_PROGRAM,  # noqa: E402
                      NFS_V3, Checks, call_header, create_retry,
                      decode_setattr, encode_args, parse_reply,
                      retry_jukebox, status_name)
from rlogload import Gateway  # noqa: E402

DSNFSD, TMP, CONF, CLUSTER_SH, CDIR, FUSE_PATH = sys.argv[1:7]
CEPH_CONF = os.path.join(CDIR, "ceph.conf")
SIZE = 1 << 20
T0 = time.monotonic()


def step(what):
    print("    %5.1f s %s" % (time.monotonic() - T0, what))


def ceph(*args):
    return subprocess.run(["timeout", "60", "ceph", "-c", CEPH_CONF] +
                          list(args), capture_output=True, text=True)


def cluster(*args):
    r = subprocess.run([CLUSTER_SH, args[0], CDIR] + list(args[1:]),
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("cluster.sh %s: %s" % (args[0], r.stderr))


def client_addr(pid):
    """The address of the libcephfs client of process @pid, from the
    MDS's sessions."""
    r = ceph("tell", "mds.a", "session", "ls", "-f", "json")
    for s in json.loads(r.stdout or "[]"):
        if s.get("client_metadata", {}).get("pid") == str(pid):
            addr = s["inst"].split(" ", 1)[1]  # "client.N [v1:]ADDR"
            return addr.split(":", 1)[1] if addr[:3] in ("v1:",
                                                          "v2:") else addr
    raise SystemExit("no MDS session of pid %d: %s" % (pid, r.stdout))


def fuse_size():
    """The file's size through ceph-fuse (the MDS's), or None."""
    r = subprocess.run(["timeout", "60", "stat", "-c", "%s", FUSE_PATH],
                       capture_output=True, text=True)
    return int(r.stdout) if r.returncode == 0 else None


def main():
    ck = Checks()
    a = Gateway(DSNFSD, TMP, CONF, "ds1", "a")
    try:
        run(ck, a)
    finally:
        # SIGTERM: a killed gateway's new session would hold the file's
        # caps, and the clean-up's rm through ceph-fuse wait for its
        # timeout (60 s).
        a.stop()
        cluster("wait-clean")
        step("the cluster is clean")
    ck.exit()


def run(ck, a):
    c = a.client()
    fh = create_retry(c, a.root(), os.path.basename(FUSE_PATH))
    r = c.write(fh, 0, b"x" * 4096)
    ck.status("A: a FILE_SYNC WRITE of 4 KiB", r, NFS3_OK)
    addr = client_addr(a.p.pid)
    step("A's client is %s; the MDS SIGKILLed" % addr)
    cluster("signal", "mds.a", "KILL")

    # The SETATTR, sent and not waited for.
    s = a.client()
    s.xid += 1
    s.send_message(call_header(s.xid, NFS_PROGRAM, NFS_V3, 2, s.cred) +
                   encode_args(2, fh, size=SIZE))
    ready, _, _ = select.select([s.sock], [], [], 2)
    ck.check("A's SETATTR to 1 MiB waits for the MDS (its sync)",
             not ready)

    r = ceph("osd", "blocklist", "add", addr, "600")
    ck.check("A's client %s blocklisted" % addr, r.returncode == 0,
             r.stderr)
    t0 = time.monotonic()
    step("the MDS started again")
    cluster("respawn", "mds.a")
    s.sock.settimeout(90)
    data = s.recv_message()
    u = parse_reply(data, s.xid)
    status = u.u32()
    decode_setattr(u, status)
    took = time.monotonic() - t0
    step("answered")
    size = fuse_size()
    print("    the SETATTR: %s %.1f s after the MDS was started again; "
          "the file's size through ceph-fuse: %s" % (
              status_name(status), took, size))
    ck.check("A answers the fenced SETATTR NFS3_OK only if the file has "
             "its size (answered %s, the file holds %s bytes)" % (
                 status_name(status), size),
             size is not None and (status != NFS3_OK or size == SIZE))
    ck.check("... and not with an error a client would not retry",
             status in (NFS3_OK, NFS3ERR_JUKEBOX), status_name(status))
    s.close()

    # The client retries; A, mounted anew (another client, not
    # blocklisted), applies it.
    r, seen = retry_jukebox(lambda: c.setattr(fh, size=SIZE), tries=300)
    step("the retry answered")
    ck.status("the client's retry through A (%d JUKEBOX first)" % seen, r,
              NFS3_OK)
    ck.check("the file has the new size (%s)" % fuse_size(),
             fuse_size() == SIZE)
    c.close()
    ceph("osd", "blocklist", "rm", addr)


main()
