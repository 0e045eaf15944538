#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One connection, two datastores (t6006-pool-shared-conn.sh).

On one Nfs3Client (one TCP connection): ds1's file is written 1 MiB at a
time until NOSPC (or DQUOT) at its 4 MiB quota; then ds2's writes on the
same connection succeed and read back, interleaved with ds1's, which stay
refused.  /flows: two flows on this connection's client port (ds1 and
ds2), its "connections" group carries both; three more connections
GETATTR ds1's root and its "nconnect" group counts all four.

    t6006-pool-shared-conn.py NFS_PORT MOUNT_PORT ADMIN_PORT
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admintoken import urlopen  # noqa: E402
from nfs3wire import (FILE_SYNC, NFS3_OK, NFS3ERR_DQUOT,  # noqa: E402
                      NFS3ERR_NOSPC, Checks, Nfs3Client)
from poolload import HOST, MIB, root_of  # noqa: E402

FULL = (NFS3ERR_NOSPC, NFS3ERR_DQUOT)


def chunk(i):
    return bytes([0x41 + i % 26]) * MIB


def flows(admin_port):
    with urlopen("http://%s:%d/flows" % (HOST, admin_port)) as r:
        return json.load(r)


def main():
    nfs_port, mount_port, admin_port = (int(x) for x in sys.argv[1:4])
    ck = Checks()
    root1, root2 = root_of(mount_port, "ds1"), root_of(mount_port, "ds2")
    c = Nfs3Client((HOST, nfs_port))
    a = c.create(root1, "a").object
    b = c.create(root2, "b").object
    n, last = 0, None
    while n < 16:
        last = c.write(a, n * MIB, chunk(n), FILE_SYNC)
        if last.status != NFS3_OK:
            break
        n += 1
    print("  ds1 took %d MiB before %d" % (n, last.status))
    ck.check("ds1 answers NOSPC/DQUOT at its 4 MiB quota",
             last.status in FULL and 2 <= n <= 4, (n, last.status))
    good = True
    for i in range(8):
        r = c.write(b, i * MIB, chunk(i), FILE_SYNC)
        good = good and r.status == NFS3_OK
        again = c.write(a, (n + i) * MIB, chunk(i), FILE_SYNC)
        good = good and again.status in FULL
    ck.check("on the same connection ds2 takes 8 MiB while ds1 stays "
             "full", good)
    same = all(c.read(b, i * MIB, MIB).data == chunk(i) for i in range(8))
    ck.check("ds2's 8 MiB read back intact", same)
    ck.check("ds1's data intact",
             all(c.read(a, i * MIB, MIB).data == chunk(i)
                 for i in range(n)))

    port = c.sock.getsockname()[1]
    d = flows(admin_port)
    mine = sorted(f["volume"] for f in d["flows"]
                  if f["host"] == HOST and f["port"] == port)
    ck.check("/flows: one flow per datastore on this connection",
             mine == ["ds1", "ds2"], mine)
    conn = [g for g in d["connections"]
            if g["host"] == HOST and g["port"] == port]
    ck.check("/flows connections: this one carries ds1 and ds2",
             len(conn) == 1 and conn[0]["datastores"] == 2 and
             sorted(conn[0]["volumes"]) == ["ds1", "ds2"], conn)

    more = [Nfs3Client((HOST, nfs_port)) for _ in range(3)]
    for m in more:
        ck.status("GETATTR of ds1's root on another connection",
                  m.getattr(root1), NFS3_OK)
    ports = {port} | {m.sock.getsockname()[1] for m in more}
    d = flows(admin_port)
    grp = [g for g in d["nconnect"]
           if g["host"] == HOST and g["volume"] == "ds1"]
    ck.check("/flows nconnect: (127.0.0.1, ds1) -> its connections, "
             "all four of ours", len(grp) == 1 and
             ports <= set(grp[0]["ports"]) and
             grp[0]["connections"] == len(grp[0]["ports"]), grp)
    print("  nconnect group:", grp)
    for m in more:
        m.close()
    c.close()
    ck.exit()


if __name__ == "__main__":
    main()
