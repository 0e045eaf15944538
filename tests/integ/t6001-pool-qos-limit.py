#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ds1's 40 MiB/s QoS limit against four concurrent flows (t6001).

Two clients READ 256 KiB and two WRITE 256 KiB (UNSTABLE, over the same
64 MiB so the disk does not fill), each on its own connection, for 5 s.
The first second is left out of the measure (start-up); over the next
four the bytes moved, reads and writes together, are at most the limit
+ 5% (the bucket's burst and one request are all it may exceed by) and
at least 80% of it (a loaded machine may keep the clients below it).

    t6001-pool-qos-limit.py NFS_PORT MOUNT_PORT
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import Checks  # noqa: E402
from poolload import Load, root_of, sparse_file  # noqa: E402

LIMIT = 40.0
KIB = 1024


def main():
    nfs_port, mount_port = int(sys.argv[1]), int(sys.argv[2])
    ck = Checks()
    root = root_of(mount_port, "ds1")
    rfile = sparse_file(nfs_port, root, "read.img")
    wfile = sparse_file(nfs_port, root, "write.img")

    load = Load(nfs_port)
    for fh, op in ((rfile, "read"), (rfile, "read"),
                   (wfile, "write"), (wfile, "write")):
        load.add(fh, op, 256 * KIB, "ds1")
    t0 = load.start(seconds=5)
    res = load.wait()
    ck.check("no connection broke", not res.errors, "; ".join(res.errors))
    got = res.mibps("ds1", t0 + 1, t0 + 5)
    print("  ds1: %.2f MiB/s over 4 s (limit %.0f), %d calls"
          % (got, LIMIT, res.calls("ds1")))
    ck.check("at most the limit + 5%% (%.2f)" % (LIMIT * 1.05),
             got <= LIMIT * 1.05, "%.2f MiB/s" % got)
    ck.check("at least 80%% of the limit (%.2f)" % (LIMIT * 0.8),
             got >= LIMIT * 0.8, "%.2f MiB/s" % got)
    ck.exit()


if __name__ == "__main__":
    main()
