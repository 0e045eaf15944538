#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Flows are isolated (t6003-pool-isolation.sh).

one-connection: ds1 is limited to 1 MiB/s.  On ONE connection, without
waiting for replies: four 1 MiB READs of ds1, then a GETATTR of ds1, then
a 1 MiB READ and a GETATTR of ds2.  ds2's calls are another flow of the
same connection: they must be answered at once, before ds1's second
READ.  ds1's GETATTR waits behind ds1's READs (one FIFO per flow), and
those take about 3 s (1 MiB each at 1 MiB/s, the first one at once).
Then a connection closes with calls still waiting in its queue: they are
dropped (the server's exit under ASan shows nothing leaked) and the
server goes on serving.

two-volumes: ds2 (12 MiB/s, a rate two clients reach even on a loaded
machine) is read by two clients for 3 s alone, then for 3 s while four
clients hammer ds1 (1 MiB/s, all of them waiting in their queues).  ds2
keeps at least 80% of what it did alone.

    t6003-pool-isolation.py NFS_PORT MOUNT_PORT one-connection|two-volumes
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (NFS3_OK, NFS_PROGRAM, NFS_V3, Checks,  # noqa: E402
                      Nfs3Client, auth_sys, call_header, encode_args,
                      parse_reply, read_record, record_frame)
from poolload import HOST, MIB, Load, root_of, sparse_file  # noqa: E402

KIB = 1024
GETATTR, READ = 1, 6


def one_connection(ck, nfs_port, mount_port):
    f1 = sparse_file(nfs_port, root_of(mount_port, "ds1"), "slow.img")
    f2 = sparse_file(nfs_port, root_of(mount_port, "ds2"), "fast.img")
    calls = [("ds1 READ %d" % i, READ, (f1, i * MIB, MIB)) for i in range(4)]
    calls += [("ds1 GETATTR", GETATTR, (f1,)),
              ("ds2 READ", READ, (f2, 0, MIB)),
              ("ds2 GETATTR", GETATTR, (f2,))]
    sock = socket.create_connection((HOST, nfs_port), timeout=30)
    cred = auth_sys()
    xids = {}
    wire = b""
    for i, (name, proc, args) in enumerate(calls):
        xid = 0x60030000 + i
        xids[xid] = name
        wire += record_frame(call_header(xid, NFS_PROGRAM, NFS_V3, proc, cred)
                             + encode_args(proc, *args))
    start = time.monotonic()
    sock.sendall(wire)
    order, when = [], {}
    while len(order) < len(calls):
        data = read_record(sock)
        (xid,) = struct.unpack(">I", data[:4])
        name = xids[xid]
        u = parse_reply(data, xid)
        ck.check("%s answered NFS3_OK" % name, u.u32() == NFS3_OK)
        order.append(name)
        when[name] = time.monotonic() - start
    sock.close()
    print("  replies: " + ", ".join("%s %.2fs" % (n, when[n]) for n in order))
    ck.check("ds2's READ is answered before ds1's second READ",
             order.index("ds2 READ") < order.index("ds1 READ 1"), str(order))
    ck.check("ds2's calls are answered within a second",
             when["ds2 READ"] < 1.0 and when["ds2 GETATTR"] < 1.0)
    ck.check("ds1's calls keep their order, the GETATTR last",
             [n for n in order if n.startswith("ds1")] ==
             ["ds1 READ 0", "ds1 READ 1", "ds1 READ 2", "ds1 READ 3",
              "ds1 GETATTR"], str(order))
    ck.check("ds1's 4 MiB take about 3 s at 1 MiB/s",
             2.5 <= when["ds1 READ 3"] <= 6.0, "%.2f s" % when["ds1 READ 3"])

    sock = socket.create_connection((HOST, nfs_port), timeout=30)
    sock.sendall(b"".join(
        record_frame(call_header(0x60031000 + i, NFS_PROGRAM, NFS_V3, READ,
                                 cred) + encode_args(READ, f1, 0, MIB))
        for i in range(4)))
    read_record(sock)  # the first one, at once: the rest wait
    sock.close()
    c = Nfs3Client((HOST, nfs_port))
    ck.status("after a close with calls queued, the server serves",
              c.getattr(f2), NFS3_OK)
    c.close()


def ds2_alone_and_beside_ds1(ck, nfs_port, mount_port):
    f1 = sparse_file(nfs_port, root_of(mount_port, "ds1"), "slow2.img")
    f2 = sparse_file(nfs_port, root_of(mount_port, "ds2"), "fast2.img")
    load = Load(nfs_port)
    for _ in range(2):
        load.add(f2, "read", 256 * KIB, "ds2")
    t0 = load.start(3)
    alone = load.wait()
    load = Load(nfs_port)
    for _ in range(2):
        load.add(f2, "read", 256 * KIB, "ds2")
    for _ in range(4):
        load.add(f1, "read", 256 * KIB, "ds1")
    t1 = load.start(3)
    beside = load.wait()
    errors = alone.errors + beside.errors
    ck.check("no connection broke", not errors, "; ".join(errors))
    a = alone.mibps("ds2", t0 + 0.5, t0 + 3)
    b = beside.mibps("ds2", t1 + 0.5, t1 + 3)
    s = beside.mibps("ds1", t1 + 0.5, t1 + 3)
    print("  ds2 alone %.2f MiB/s, beside a throttled ds1 %.2f MiB/s; "
          "ds1 %.2f MiB/s" % (a, b, s))
    ck.check("ds2 beside ds1 keeps 80% of ds2 alone", b >= 0.8 * a,
             "%.2f vs %.2f" % (b, a))
    ck.check("ds1 stays at its 1 MiB/s (+5% and one call)",
             s <= 1.05 + 0.25 / 2.5, "%.2f" % s)


def main():
    nfs_port, mount_port, what = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    ck = Checks()
    if what == "one-connection":
        one_connection(ck, nfs_port, mount_port)
    else:
        ds2_alone_and_beside_ds1(ck, nfs_port, mount_port)
    ck.exit()


if __name__ == "__main__":
    main()
