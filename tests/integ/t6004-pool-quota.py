#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A 16 MiB quota on ds1 (t6004-pool-quota.sh).

fill: b gets 4 MiB, then a is written 1 MiB at a time (FILE_SYNC, each
MiB its own byte) until the server answers NFS3ERR_NOSPC.  Then: what was
written stays (read back, size unchanged by the refused write); FSSTAT
says 16 MiB in all and less than 1 MiB free; overwriting a's first MiB
is fine on a full datastore; a sparse 1 GiB file can be made (thin
provisioning: the quota is on allocated bytes) but not written; after
REMOVE of b there is room for 2 MiB more.  The used figure is saved for
the second run, in STATE_FILE.

restarted: FSSTAT's used figure is the one before the restart (within
64 KiB: directory blocks), and a's data is all there.

    t6004-pool-quota.py NFS_PORT MOUNT_PORT fill|restarted STATE_FILE
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (FILE_SYNC, NFS3_OK, NFS3ERR_NOSPC, Checks,  # noqa: E402
                      Nfs3Client)
from poolload import HOST, MIB, root_of  # noqa: E402

QUOTA = 16 * MIB


def chunk(i):
    return bytes([0x41 + i % 26]) * MIB


def used(c, root):
    r = c.fsstat(root)
    assert r.status == NFS3_OK, r
    return r.tbytes, r.tbytes - r.fbytes, r.fbytes


def check_data(ck, c, fh, n, what):
    good = True
    for i in range(n):
        r = c.read(fh, i * MIB, MIB)
        want = bytes([0x61]) * MIB if i == 0 else chunk(i)
        good = good and r.status == NFS3_OK and r.data == want
    ck.check("%s: all %d MiB read back intact" % (what, n), good)


def fill(ck, c, root, state):
    b = c.create(root, "b").object
    for i in range(4):
        ck.status("b: MiB %d" % i, c.write(b, i * MIB, chunk(i), FILE_SYNC),
                  NFS3_OK)
    a = c.create(root, "a").object
    n, last = 0, None
    while n < 32:
        last = c.write(a, n * MIB, chunk(n), FILE_SYNC)
        if last.status != NFS3_OK:
            break
        n += 1
    print("  a took %d MiB beside b's 4 MiB" % n)
    ck.status("the write past the quota", last, NFS3ERR_NOSPC)
    ck.check("it came once the quota was (nearly) full", 10 <= n <= 12, n)
    ck.check("the refused write left a's size alone",
             c.getattr(a).attributes.size == n * MIB)
    total, u, free = used(c, root)
    print("  FSSTAT: %d bytes, %d used, %d free" % (total, u, free))
    ck.check("FSSTAT's size is the quota", total == QUOTA, total)
    ck.check("less than 1 MiB free", free < MIB, free)
    ck.status("a full datastore takes an overwrite of allocated data",
              c.write(a, 0, bytes([0x61]) * MIB, FILE_SYNC), NFS3_OK)
    check_data(ck, c, a, n, "a")
    thin = c.create(root, "thin-flat.vmdk").object
    ck.status("a sparse 1 GiB file (thin disk) is made",
              c.setattr(thin, size=1024 * MIB), NFS3_OK)
    ck.status("but writing into it is refused",
              c.write(thin, 512 * MIB, chunk(0), FILE_SYNC), NFS3ERR_NOSPC)
    ck.status("REMOVE b", c.remove(root, "b"), NFS3_OK)
    _, u2, free2 = used(c, root)
    ck.check("REMOVE gave b's 4 MiB back", free2 >= 4 * MIB, free2)
    for i in (n, n + 1):
        ck.status("a: MiB %d after the REMOVE" % i,
                  c.write(a, i * MIB, chunk(i), FILE_SYNC), NFS3_OK)
    _, u3, _ = used(c, root)
    with open(state, "w") as f:
        f.write("%d %d\n" % (u3, n + 2))


def restarted(ck, c, root, state):
    with open(state) as f:
        before, n = (int(x) for x in f.read().split())
    total, u, _ = used(c, root)
    print("  used before the restart %d, after %d" % (before, u))
    ck.check("FSSTAT's size is still the quota", total == QUOTA, total)
    ck.check("the scan finds the same usage (within 64 KiB)",
             abs(u - before) <= 64 * 1024, "%d vs %d" % (u, before))
    a = c.lookup(root, "a").object
    check_data(ck, c, a, n, "a after the restart")


def main():
    nfs_port, mount_port, what = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    state = sys.argv[4]
    ck = Checks()
    root = root_of(mount_port, "ds1")
    c = Nfs3Client((HOST, nfs_port))
    if what == "fill":
        fill(ck, c, root, state)
    else:
        restarted(ck, c, root, state)
    c.close()
    ck.exit()


if __name__ == "__main__":
    main()
