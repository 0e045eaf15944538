#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""rawrpc: hand-made ONC RPC records for the bad-input tests.

Each check sends bytes on a fresh TCP connection and says what came back:
a reply (its accept/reject status) or a closed connection.  Usage:
    rawrpc.py PORT CHECK     where CHECK is one of the names in CHECKS
Exit 0 when the server answered as RFC 5531 / RFC 1813 says, 1 otherwise.
"""
import socket
import struct
import sys

NFS_PROG, NFS_VERS = 100003, 3
MOUNT_PROG, MOUNT_VERS = 100005, 3


def call(xid, prog, vers, proc, args=b"", rpcvers=2, cred=None):
    if cred is None:
        machine = b"rawrpc"
        body = struct.pack(">II", 0, len(machine)) + machine + b"\0\0"
        body += struct.pack(">III", 0, 0, 0)
        cred = struct.pack(">II", 1, len(body)) + body
    hdr = struct.pack(">IIIIII", xid, 0, rpcvers, prog, vers, proc)
    return hdr + cred + struct.pack(">II", 0, 0) + args


def record(payload, last=True):
    mark = len(payload) | (0x80000000 if last else 0)
    return struct.pack(">I", mark) + payload


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s


def read_record(s):
    data = b""
    while True:
        hdr = recv_exact(s, 4)
        if hdr is None:
            return None
        (mark,) = struct.unpack(">I", hdr)
        frag = recv_exact(s, mark & 0x7FFFFFFF)
        if frag is None:
            return None
        data += frag
        if mark & 0x80000000:
            return data


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        try:
            chunk = s.recv(n - len(buf))
        except (ConnectionResetError, socket.timeout):
            return None
        if not chunk:
            return None
        buf += chunk
    return buf


def reply_status(rep):
    """('accepted', accept_stat, body) or ('denied', reject_stat, detail)."""
    xid, mtype, rstat = struct.unpack(">III", rep[:12])
    if rstat == 0:
        _flavor, vlen = struct.unpack(">II", rep[12:20])
        pos = 20 + ((vlen + 3) & ~3)
        (astat,) = struct.unpack(">I", rep[pos:pos + 4])
        return ("accepted", astat, rep[pos + 4:])
    (rej,) = struct.unpack(">I", rep[12:16])
    return ("denied", rej, rep[16:])


def expect_reply(port, payload, want):
    s = connect(port)
    s.sendall(record(payload))
    rep = read_record(s)
    s.close()
    if rep is None:
        print("no reply (connection closed)")
        return False
    got = reply_status(rep)
    print("reply:", got[0], got[1])
    return got[:2] == want


def expect_close(port, data):
    s = connect(port)
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        return True
    rep = read_record(s)
    s.close()
    print("closed" if rep is None else "got a reply")
    return rep is None


def null_works(port):
    return expect_reply(port, call(99, NFS_PROG, NFS_VERS, 0), ("accepted", 0))


CHECKS = {
    "garbage": lambda p: expect_close(p, record(b"\xde\xad\xbe\xef" * 3)),
    "huge-mark": lambda p: expect_close(p, struct.pack(">I", 0x80000000 | 0x7FFFFFFF) + b"x" * 64),
    "huge-mark-2g": lambda p: expect_close(p, struct.pack(">I", 0x80000000) + b"x"),
    "wrong-prog": lambda p: expect_reply(p, call(1, 123456, 1, 0), ("accepted", 1)),
    "wrong-vers": lambda p: expect_reply(p, call(2, NFS_PROG, 4, 0), ("accepted", 2)),
    # 22 is VAAI-NAS (nfs3/vaai.c): the first procedure past it.
    "wrong-proc": lambda p: expect_reply(p, call(3, NFS_PROG, NFS_VERS, 23), ("accepted", 3)),
    "vaai-empty": lambda p: expect_reply(p, call(7, NFS_PROG, NFS_VERS, 22), ("accepted", 4)),
    "vaai-v2": lambda p: expect_reply(p, call(8, NFS_PROG, 2, 22), ("accepted", 2)),
    "wrong-rpcvers": lambda p: expect_reply(p, call(4, NFS_PROG, NFS_VERS, 0, rpcvers=3), ("denied", 0)),
    "bad-cred": lambda p: expect_reply(p, call(5, NFS_PROG, NFS_VERS, 0, cred=struct.pack(">II", 1, 4) + b"\0\0\0\0"), ("denied", 1)),
    "truncated-args": lambda p: expect_reply(p, call(6, NFS_PROG, NFS_VERS, 1, args=struct.pack(">I", 56)), ("accepted", 4)),
    "forged-handle": lambda p: forged_handle(p),
    "null": null_works,
    "half-close": lambda p: half_close(p),
}


def half_close(port, n=64):
    """n NULLs and n GETATTRs pipelined, then shutdown(SHUT_WR): every
    call is answered, then the server closes (EOF, not a reset)."""
    fh = b"\x01" + b"\x55" * 31
    args = struct.pack(">I", len(fh)) + fh
    wire = b""
    for i in range(n):
        wire += record(call(1000 + i, NFS_PROG, NFS_VERS, 0))
        wire += record(call(2000 + i, NFS_PROG, NFS_VERS, 1, args=args))
    s = connect(port)
    s.sendall(wire)
    s.shutdown(socket.SHUT_WR)
    want = set(range(1000, 1000 + n)) | set(range(2000, 2000 + n))
    while want:
        rep = read_record(s)
        if rep is None:
            print("closed with %d replies missing" % len(want))
            return False
        (xid,) = struct.unpack(">I", rep[:4])
        want.discard(xid)
    try:
        end = s.recv(1)
    except ConnectionResetError:
        end = None
    s.close()
    print("all %d replies, then %s" % (2 * n, "EOF" if end == b"" else end))
    return end == b""


def forged_handle(port):
    """GETATTR of a handle we never issued: NFS3ERR_BADHANDLE or STALE."""
    fh = b"\x01" + b"\x55" * 31
    args = struct.pack(">I", len(fh)) + fh
    s = connect(port)
    s.sendall(record(call(7, NFS_PROG, NFS_VERS, 1, args=args)))
    rep = read_record(s)
    s.close()
    if rep is None:
        return False
    kind, astat, body = reply_status(rep)
    if kind != "accepted" or astat != 0:
        return False
    (status,) = struct.unpack(">I", body[:4])
    print("nfsstat3:", status)
    return status in (10001, 70)  # BADHANDLE, STALE


if __name__ == "__main__":
    port, check = int(sys.argv[1]), sys.argv[2]
    ok = CHECKS[check](port)
    sys.exit(0 if ok else 1)
