#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""NFSv3 over UDP (t2006-nfs3-udp.sh): one datagram per call.

    t2006-nfs3-udp.py NFS_PORT MOUNT_PORT PORTMAP_PORT
    t2006-nfs3-udp.py NFS_PORT --none     (nfs_udp = false: no answer)
"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (Checks, ConnectionClosed, FILE_SYNC, MountClient, NFS3_OK,  # noqa: E402
                      NFS_PROGRAM, NFS_V3, Nfs3Client, Packer, RpcClient,
                      UNSTABLE, Unpacker, auth_sys, call_header,
                      decode_remove, encode_args, parse_reply)

HOST = "127.0.0.1"
UDP_MAX = 32 * 1024


def getport_udp(pmap_port, prog, vers):
    """PMAPPROC_GETPORT over UDP -> the port (0: not registered)."""
    c = RpcClient((HOST, pmap_port), 100000, 2, proto="udp", timeout=3.0)
    p = Packer()
    for v in (prog, vers, socket.IPPROTO_UDP, 0):
        p.u32(v)
    u = c.call(3, p.bytes())
    c.close()
    return u.u32()


def remove_twice(port, dir_fh, name):
    """REMOVE sent twice with one XID, as a client retransmits: the
    second reply must be the first's (the DRC), not NOENT."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3.0)
    s.connect((HOST, port))
    xid = 0x2006001
    msg = call_header(xid, NFS_PROGRAM, NFS_V3, 12, auth_sys()) + \
        encode_args(12, dir_fh, name)
    statuses = []
    for _ in range(2):
        s.send(msg)
        u = parse_reply(s.recv(65536), xid)
        status = u.u32()
        decode_remove(u, status)
        statuses.append(status)
    s.close()
    return statuses


def no_answer(nfs_port):
    udp = Nfs3Client((HOST, nfs_port), proto="udp", timeout=1.0)
    try:
        udp.null()
        return 1
    except ConnectionClosed:
        return 0


def main():
    if sys.argv[2] == "--none":
        sys.exit(no_answer(int(sys.argv[1])))
    nfs_port, mount_port, pmap_port = (int(a) for a in sys.argv[1:4])
    ck = Checks()
    root = MountClient((HOST, mount_port), proto="udp").mnt("/ds1").fhandle
    tcp = Nfs3Client((HOST, nfs_port))
    udp = Nfs3Client((HOST, nfs_port), proto="udp", timeout=5.0)

    if pmap_port > 0:
        got = getport_udp(pmap_port, NFS_PROGRAM, NFS_V3)
        ck.check("the portmapper maps nfs 3 udp to %d (got %d)"
                 % (nfs_port, got), got == nfs_port)
    udp.null()
    ck.check("NULL over UDP", True)
    ck.status("GETATTR over UDP", udp.getattr(root), NFS3_OK)

    fi_udp, fi_tcp = udp.fsinfo(root), tcp.fsinfo(root)
    ck.check("FSINFO over UDP: rtmax/wtmax/rtpref/wtpref fit a datagram "
             "(%d %d %d %d, dtpref %d)"
             % (fi_udp.rtmax, fi_udp.wtmax, fi_udp.rtpref, fi_udp.wtpref,
                fi_udp.dtpref),
             fi_udp.rtmax == fi_udp.wtmax == fi_udp.rtpref ==
             fi_udp.wtpref == UDP_MAX and fi_udp.dtpref <= UDP_MAX)
    ck.check("FSINFO over TCP keeps 1 MiB (%d)" % fi_tcp.rtmax,
             fi_tcp.rtmax == 1024 * 1024)

    r = udp.create(root, "udp.bin", mode=0o644)
    ck.status("CREATE over UDP", r, NFS3_OK)
    fh = r.object
    data = bytes((i * 7) & 0xFF for i in range(UDP_MAX))
    w = udp.write(fh, 0, data, stable=FILE_SYNC)
    ck.check("a 32 KiB FILE_SYNC WRITE over UDP (work thread)",
             w.status == NFS3_OK and w.count == UDP_MAX and
             w.committed == FILE_SYNC)
    rd = udp.read(fh, 0, UDP_MAX)
    ck.check("READ back over UDP gives the same bytes",
             rd.status == NFS3_OK and rd.data == data)
    w2 = udp.write(fh, UDP_MAX, data[:4096] * 10, stable=UNSTABLE)
    ck.check("a WRITE larger than wtmax is cut to 32 KiB (%d)"
             % getattr(w2, "count", -1),
             w2.status == NFS3_OK and w2.count == UDP_MAX)
    c = udp.commit(fh)
    ck.check("COMMIT over UDP (work thread) with the WRITE's verifier",
             c.status == NFS3_OK and c.verf == w.verf)
    big = udp.read(fh, 0, 1024 * 1024)
    ck.check("a 1 MiB READ over UDP is clamped to 32 KiB (%d bytes)"
             % len(getattr(big, "data", b"")),
             big.status == NFS3_OK and big.count == UDP_MAX and
             len(big.data) == UDP_MAX and not big.eof)
    rd = udp.readdir(root, count=1024 * 1024)
    ck.check("READDIR over UDP, its count cut to a datagram (%d bytes)"
             % udp.last_result_bytes,
             rd.status == NFS3_OK and udp.last_result_bytes <= UDP_MAX)

    ck.status("CREATE a file to remove", udp.create(root, "gone", mode=0o644),
              NFS3_OK)
    first, second = remove_twice(nfs_port, root, "gone")
    ck.check("a retransmitted REMOVE gets the first reply from the DRC "
             "(%d, %d)" % (first, second), first == second == NFS3_OK)
    tcp.close()
    udp.close()
    ck.exit()


if __name__ == "__main__":
    main()
