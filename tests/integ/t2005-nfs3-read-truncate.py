#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""READ replies queued while their file shrinks (t2005-nfs3-read-truncate.sh).

    t2005-nfs3-read-truncate.py NFS_PORT MOUNT_PORT FILE

FILE is ds1/big.bin, 16 MiB.  The script pipelines sixteen 1 MiB READs on
one connection without reading a reply, so that the server queues replies
it cannot send yet (with zero copy: file segments whose record marks are
written and whose data is still in the file), truncates FILE to 1 MiB +
12345 bytes behind the server's back, and then reads every reply.  Each
reply must parse, in the order of the calls; data before the truncation
point is the file's; past it a reply sized before the truncation carries
the file's old bytes or zeros, never anything else (the server pads to
the length it promised); a short reply (sized after the cut, or read
while ftruncate ran) says eof.  Then the connection still answers: GETATTR gives the new size and
a READ gives the file's bytes.  The checks hold whatever the timing; how
many replies were cut is printed, not asserted.
"""
import os
import socket
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403

HOST = "127.0.0.1"
MIB = 1 << 20
NCALLS = 16
CUT = MIB + 12345



def old_or_zeros(d, orig, off, start):
    """Where d[start:] holds a byte that is neither the file's old byte at
    that offset nor zero (truncation zeroes the tail of the last page in
    place, so one page may mix both), or None."""
    for j in range(start, len(d), 4096):
        chunk = d[j:j + 4096]
        if chunk == orig[off + j:off + j + len(chunk)] or not chunk.strip(b"\0"):
            continue
        for k, b in enumerate(chunk):
            if b != 0 and b != orig[off + j + k]:
                return j + k
    return None

def main():
    nfs_port, mount_port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    ck = Checks()
    with open(path, "rb") as f:
        orig = f.read()
    ck.check("the file is 16 MiB", len(orig) == NCALLS * MIB)
    m = MountClient((HOST, mount_port))
    root = m.mnt("/ds1").fhandle
    m.close()
    c = Nfs3Client((HOST, nfs_port), timeout=60.0)
    fh = c.lookup(root, "big.bin").object

    # All calls in one write: the server reads them at once and sizes
    # the replies of one batch together (up to its output limit).
    first = c.xid + 1
    calls = b""
    for i in range(NCALLS):
        c.xid += 1
        calls += record_frame(call_header(c.xid, c.prog, c.vers, 6, c.cred) +
                              encode_args(6, fh, i * MIB, MIB))
    c.sock.sendall(calls)
    # The replies wait for the client.  Once one byte of a reply can be
    # peeked, the batch is sized; then cut the file under the rest.
    c.sock.recv(1, socket.MSG_PEEK)
    os.truncate(path, CUT)

    in_order = True
    data_ok = True
    promised_cut = 0
    for i in range(NCALLS):
        data = c.recv_message()
        xid = struct.unpack(">I", data[:4])[0]
        if xid != first + i:
            in_order = False
            break
        u = parse_reply(data, xid)
        status = u.u32()
        r = decode_read(u, status)
        u.done()
        off = i * MIB
        if status != NFS3_OK:
            data_ok = False
            print("  reply %d: %s" % (i, status_name(status)))
            continue
        d = r["data"]
        if len(d) != r["count"]:
            data_ok = False
        if off + MIB <= CUT:
            good = len(d) == MIB and not r["eof"]
        elif len(d) == MIB:
            good = r["eof"] == (off + MIB == NCALLS * MIB)
            promised_cut += 1  # sized before the cut
        else:
            # Short: read while or after the file was cut (a read that
            # races ftruncate may stop anywhere past the new end), so it
            # says eof.
            good = len(d) >= max(0, CUT - off) and r["eof"]
        if not good:
            data_ok = False
            print("  reply %d: count %d eof %s" % (i, len(d), r["eof"]))
        keep = max(0, min(len(d), CUT - off))
        if d[:keep] != orig[off:off + keep]:
            data_ok = False
            print("  reply %d: bytes before the cut differ" % i)
        j = old_or_zeros(d, orig, off, keep)
        if j is not None:
            data_ok = False
            print("  reply %d: byte %d past the cut is neither the "
                  "file's nor zero" % (i, j))
    ck.check("%d READ replies come back whole, in order" % NCALLS, in_order)
    ck.check("data before the cut is the file's; past it old bytes or zeros",
             data_ok)
    print("  (%d replies were sized before the cut and sent after it)"
          % promised_cut)
    attr = c.getattr(fh)
    ck.status("GETATTR on the same connection", attr, NFS3_OK)
    ck.check("it has the new size", attr.attributes.size == CUT)
    r = c.read(fh, MIB, MIB)
    ck.status("READ on the same connection", r, NFS3_OK)
    ck.check("it stops at the new end with eof",
             r.count == CUT - MIB and r.eof and r.data == orig[MIB:CUT])
    c.close()
    ck.exit()


if __name__ == "__main__":
    main()
