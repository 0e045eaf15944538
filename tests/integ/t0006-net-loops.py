#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""t0006: where dsnfsd puts TCP connections (two event loops).

    t0006-net-loops.py NFS_PORT MOUNT_PORT ADMIN_PORT

Eight times, as libnfs and ESXi do, a MOUNT connection (a NULL call) and
then an NFS one (a NULL call), the MOUNT one closed after: the eight NFS
connections must lie four and four on the two loops
(dsnfs_loop_connections on /metrics), however the MOUNT ones fell; once
the NFS ones close, both loops hold none.
"""
import sys
import time
import admintoken
import nfs3wire

MOUNT_PROG, MOUNT_VERS = 100005, 3
NFS_PROG, NFS_VERS = 100003, 3
PAIRS = 8


def loop_conns(admin_port):
    """{loop: connections} from /metrics."""
    url = "http://127.0.0.1:%d/metrics" % admin_port
    text = admintoken.urlopen(url, timeout=10).read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith('dsnfs_loop_connections{loop="'):
            loop = int(line.split('"')[1])
            out[loop] = int(float(line.split()[-1]))
    return out


def wait_for(admin_port, want, seconds=10.0):
    """Closes are counted by the loops, a moment later: polls."""
    got = None
    end = time.time() + seconds
    while time.time() < end:
        got = loop_conns(admin_port)
        if got == want:
            return got
        time.sleep(0.05)
    return got


def main():
    nfs_port, mount_port, admin_port = (int(a) for a in sys.argv[1:4])
    failures = 0

    def check(what, ok, detail=""):
        nonlocal failures
        print("  %s   %s%s" % ("ok" if ok else "FAIL", what,
                               "" if ok else ": " + detail))
        failures += 0 if ok else 1

    nfs = []
    for _ in range(PAIRS):
        mnt = nfs3wire.RpcClient(("127.0.0.1", mount_port), MOUNT_PROG,
                                 MOUNT_VERS)
        mnt.call(0)
        c = nfs3wire.RpcClient(("127.0.0.1", nfs_port), NFS_PROG, NFS_VERS)
        c.call(0)
        nfs.append(c)
        mnt.close()
    want = {0: PAIRS // 2, 1: PAIRS // 2}
    got = wait_for(admin_port, want)
    check("%d NFS connections after MOUNT ones: %d and %d on the two loops"
          % (PAIRS, PAIRS // 2, PAIRS // 2), got == want, repr(got))
    for c in nfs:
        c.close()
    got = wait_for(admin_port, {0: 0, 1: 0})
    check("closed, both loops hold none", got == {0: 0, 1: 0}, repr(got))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
