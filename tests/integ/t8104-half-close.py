#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A client that shuts down its sending side after its calls
(shutdown(SHUT_WR)) gets every reply, then the server's close.

    t8104-half-close.py NFS_PORT MOUNT_PORT

On one connection: N FILE_SYNC WRITEs (their fsync runs on work threads,
so their replies come after the end of the input has been read), N
COMMITs and N NULLs, pipelined in one send, then SHUT_WR.  All 3N replies
must come, each once and NFS3_OK, then EOF (not a reset).
"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (FILE_SYNC, NFS3_OK, Checks, MountClient,  # noqa: E402
                      Nfs3Client, auth_sys, call_header, encode_args,
                      record_frame)

HOST = "127.0.0.1"
N = 32


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_reply(sock):
    """One single-fragment record, or None at EOF."""
    mark = read_exact(sock, 4)
    if mark is None:
        return None
    (m,) = struct.unpack(">I", mark)
    return read_exact(sock, m & 0x7FFFFFFF)


def nfs_status(rep):
    """The nfsstat3 of an accepted reply (NULL: 0)."""
    (vlen,) = struct.unpack(">I", rep[16:20])
    pos = 20 + ((vlen + 3) & ~3)
    (astat,) = struct.unpack(">I", rep[pos:pos + 4])
    if astat != 0:
        return -1
    body = rep[pos + 4:]
    return struct.unpack(">I", body[:4])[0] if body else 0


def main(argv):
    nfs_port, mount_port = int(argv[1]), int(argv[2])
    ck = Checks()
    root = MountClient((HOST, mount_port)).mnt("/ds1").fhandle
    with Nfs3Client((HOST, nfs_port)) as c:
        r = c.create(root, "halfclose.bin")
        fh = r.object
    cred = auth_sys()
    wire = b""
    kinds = {}
    for i in range(N):
        args = encode_args(7, fh, i * 4096, b"\x5a" * 4096, FILE_SYNC, None)
        wire += record_frame(call_header(1000 + i, 100003, 3, 7, cred) + args)
        kinds[1000 + i] = "WRITE"
        args = encode_args(21, fh, 0, 0)
        wire += record_frame(call_header(2000 + i, 100003, 3, 21, cred) + args)
        kinds[2000 + i] = "COMMIT"
        wire += record_frame(call_header(3000 + i, 100003, 3, 0, cred))
        kinds[3000 + i] = "NULL"
    sock = socket.create_connection((HOST, nfs_port), timeout=20)
    sock.sendall(wire)
    sock.shutdown(socket.SHUT_WR)
    seen, bad = set(), []
    while len(seen) < len(kinds):
        rep = read_reply(sock)
        if rep is None:
            break
        (xid,) = struct.unpack(">I", rep[:4])
        if xid in seen or xid not in kinds or nfs_status(rep) != NFS3_OK:
            bad.append(xid)
        seen.add(xid)
    ck.check("all %d replies after SHUT_WR (got %d)" % (len(kinds), len(seen)),
             len(seen) == len(kinds))
    ck.check("each once, each NFS3_OK", not bad)
    try:
        end = sock.recv(1)
    except ConnectionResetError:
        end = None
    ck.check("then EOF, not a reset", end == b"")
    sock.close()
    ck.exit()


if __name__ == "__main__":
    main(sys.argv)
