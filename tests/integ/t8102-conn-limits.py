#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Abuse limits on connections (t8102-conn-limits.sh starts dsnfsd with
max_conns_per_host = 8, record_timeout_ms = 1000, idle_timeout_ms = 2000).

    t8102-conn-limits.py NFS_PORT
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import Checks, ConnectionClosed, Nfs3Client  # noqa: E402

HOST = "127.0.0.1"


def closed_within(sock, seconds):
    """True when the server closes sock within seconds."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except (socket.timeout, TimeoutError):
        return False
    except ConnectionResetError:
        return True


def null_ok(port, patience=2.0):
    """NULL answered on a fresh connection within patience seconds (the
    server counts a closed connection out when its loop sees the close)."""
    deadline = time.monotonic() + patience
    while True:
        try:
            with Nfs3Client((HOST, port)) as c:
                c.null()
            return True
        except (ConnectionClosed, OSError):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)


def main():
    port = int(sys.argv[1])
    ck = Checks()

    held = [socket.create_connection((HOST, port)) for _ in range(8)]
    extra = socket.create_connection((HOST, port))
    ck.check("the 9th connection from one host is closed at once",
             closed_within(extra, 2.0))
    for s in held:
        s.close()
    time.sleep(0.2)
    ck.check("a connection is accepted again once others closed", null_ok(port))

    slow = socket.create_connection((HOST, port))
    start = time.monotonic()
    slow.sendall(struct.pack(">I", 0x80000000 | 100) + b"\0" * 10)
    # One byte every 300 ms never completes the record.
    closed = False
    for _ in range(20):
        time.sleep(0.3)
        try:
            slow.sendall(b"\0")
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
    if not closed:
        closed = closed_within(slow, 1.0)
    took = time.monotonic() - start
    ck.check("a record sent one byte at a time is cut off (%.1f s)" % took,
             closed and took < 4.0)

    idle = socket.create_connection((HOST, port))
    ck.check("an idle connection is closed after the idle timeout",
             closed_within(idle, 5.0))
    ck.check("a fresh connection is answered", null_ok(port))

    for _ in range(2000):
        s = socket.create_connection((HOST, port))
        s.close()
    ck.check("2000 connections opened and closed: still answered",
             null_ok(port))
    ck.exit()


if __name__ == "__main__":
    main()
