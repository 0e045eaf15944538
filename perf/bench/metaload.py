#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Metadata rates of an NFSv3 server (perf/bench/ceph-meta.sh).

    metaload.py OP SECONDS CONNS DEPTH [HOST NFS_PORT MOUNT_PORT EXPORT]

OP create: CREATE UNCHECKED of new names in a directory of its own;
OP setattr: SETATTR of the size of files made first (one per op in
flight, so no two SETATTRs of one file are in flight together), the
size each time another in [0, 1 MiB]: half grow the file, half cut it.
CONNS connections with DEPTH calls in flight on each, for SECONDS
(after one second not counted).  Prints one line: "OP ops/s errors
client-CPU-%" (the client is one Python thread: at 100% it is what
bounds the rate).
"""
import os
import random
import resource
import select
import struct
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../../tests/integ"))
from nfs3wire import (NFS3_OK, NFS_PROGRAM, NFS_V3,  # noqa: E402
                      MountClient, Nfs3Client, call_header, encode_args,
                      parse_reply)

OP, SECS, CONNS, DEPTH = sys.argv[1], float(sys.argv[2]), int(
    sys.argv[3]), int(sys.argv[4])
HOST = sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1"
NFS_PORT = int(sys.argv[6]) if len(sys.argv) > 6 else 2049
MOUNT_PORT = int(sys.argv[7]) if len(sys.argv) > 7 else 20048
EXPORT = sys.argv[8] if len(sys.argv) > 8 else "/ds1"
RAMP_S = 1.0


def main():
    with MountClient((HOST, MOUNT_PORT)) as m:
        root = m.mnt(EXPORT).fhandle
    conns = [Nfs3Client((HOST, NFS_PORT), timeout=60) for _ in range(CONNS)]
    c = conns[0]
    r = c.mkdir(root, "meta-%s-%d-%d" % (OP, os.getpid(), time.time()))
    if r.status != NFS3_OK:
        raise SystemExit("MKDIR: status %d" % r.status)
    top = r.object
    files = []
    if OP == "setattr":
        for i in range(CONNS * DEPTH):
            r = c.create(top, "s%d" % i)
            if r.status != NFS3_OK:
                raise SystemExit("CREATE: status %d" % r.status)
            files.append(r.object)
    rng = random.Random(1)
    seq = [0]

    def message(k, slot):
        xid = conns[k].xid = (conns[k].xid + 1) & 0xFFFFFFFF
        head = call_header(xid, NFS_PROGRAM, NFS_V3,
                           8 if OP == "create" else 2, conns[k].cred)
        if OP == "create":
            seq[0] += 1
            return xid, head + encode_args(8, top, "c%d" % seq[0])
        return xid, head + encode_args(2, files[slot],
                                       size=rng.randrange(1 << 20))

    out = [dict() for _ in conns]  # xid -> slot
    for k in range(CONNS):
        for d in range(DEPTH):
            xid, msg = message(k, k * DEPTH + d)
            conns[k].send_message(msg)
            out[k][xid] = k * DEPTH + d
    t0 = time.monotonic()
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    counted = errors = 0
    start = end = None
    while True:
        now = time.monotonic()
        if start is None and now - t0 >= RAMP_S:
            start, counted = now, 0
            cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        if start is not None and now - start >= SECS:
            end = now
            break
        ready, _, _ = select.select([x.sock for x in conns], [], [], 10)
        if not ready:
            raise SystemExit("no reply in 10 s")
        for k, x in enumerate(conns):
            if x.sock not in ready:
                continue
            data = x.recv_message()
            xid = struct.unpack(">I", data[:4])[0]
            slot = out[k].pop(xid)
            u = parse_reply(data, xid)
            if u.u32() == NFS3_OK:
                counted += 1
            else:
                errors += 1
            xid, msg = message(k, slot)
            x.send_message(msg)
            out[k][xid] = slot
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime -
           cpu0.ru_stime)
    print("%s %.0f %d %.0f" % (OP, counted / (end - start), errors,
                               100 * cpu / (end - start)))
    for x in conns:
        x.close()


main()
