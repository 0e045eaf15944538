#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Memory after abuse (t8106-net-memory-trim.sh starts dsnfsd with
read_zero_copy = false, so READ data is buffered, and memory_trim_ms =
300).

Records VmRSS after a warm-up, lets eight clients pipeline 1 MiB READs
without reading a reply until the server pauses them (max_output_bytes,
max_inflight), checks that RSS rose (else the test proves nothing), closes
them and checks that RSS comes back within 20% of the warm figure.

    t8106-net-memory-trim.py NFS_PORT MOUNT_PORT DSNFSD_PID
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from procstat import rss_kib  # noqa: E402
from nfs3wire import (Checks, MountClient, Nfs3Client, NFS_PROGRAM,  # noqa
                      NFS_V3, NFS3_OK, Packer, auth_sys, call_header,
                      encode_read, record_frame)

HOST = "127.0.0.1"
MIB = 1024 * 1024


def read_calls(fh, n, xid0):
    out = []
    for i in range(n):
        p = Packer()
        encode_read(p, fh, 0, MIB)
        out.append(record_frame(call_header(xid0 + i, NFS_PROGRAM, NFS_V3,
                                            6, auth_sys()) + p.bytes()))
    return b"".join(out)


def main():
    nfs_port, mount_port, pid = (int(a) for a in sys.argv[1:4])
    ck = Checks()
    root = MountClient((HOST, mount_port)).mnt("/ds1").fhandle
    with Nfs3Client((HOST, nfs_port)) as c:
        fh = c.lookup(root, "big").object
        # Warm-up: the loops, the pools and the file cache as in service.
        for _ in range(16):
            r = c.read(fh, 0, MIB)
            if r.status != NFS3_OK or len(r.data) != MIB:
                ck.check("warm-up READ of 1 MiB", False)
                ck.exit()
    time.sleep(1.0)  # past memory_trim_ms: the warm-up's close trimmed
    before = rss_kib(pid)

    abusers = []
    for k in range(8):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect((HOST, nfs_port))
        s.setblocking(False)
        calls = read_calls(fh, 200, 0x8106000 + k * 1000)
        sent = 0
        deadline = time.monotonic() + 2.0
        while sent < len(calls) and time.monotonic() < deadline:
            try:
                sent += s.send(calls[sent:])
            except BlockingIOError:
                time.sleep(0.01)
        abusers.append(s)
    # The server reads until each conn is over its output limit, then
    # pauses it; the peak is reached when RSS stops growing.
    peak, last = rss_kib(pid), 0
    for _ in range(40):
        time.sleep(0.1)
        last, peak = peak, max(peak, rss_kib(pid))
        if peak == last and peak > before + 16 * 1024:
            break
    ck.check("RSS rose under the abuse: %.1f -> %.1f MiB"
             % (before / 1024, peak / 1024), peak > before + 16 * 1024)
    for s in abusers:
        s.close()

    after = rss_kib(pid)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        time.sleep(0.2)
        after = rss_kib(pid)
        if after <= before * 1.2:
            break
    ck.check("RSS back within 20%% once they closed: %.1f MiB before, "
             "%.1f at the peak, %.1f after"
             % (before / 1024, peak / 1024, after / 1024),
             after <= before * 1.2)
    with Nfs3Client((HOST, nfs_port)) as c:
        ck.check("still serving", c.read(fh, 0, 4096).status == NFS3_OK)
    ck.exit()


if __name__ == "__main__":
    main()
