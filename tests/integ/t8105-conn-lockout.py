#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Connection lockout (t8105-conn-lockout.sh starts dsnfsd with
max_conns = 64, max_conns_per_host = 32, idle_timeout_ms at its 6 min
default).

Two client addresses (127.0.0.2, 127.0.0.3) fill the server with 64 idle
connections.  A third address must still be served within a second, an
idle connection of the busiest host making room (logged, by name), and
when the third opens 32 connections of its own it ends with its share,
not with the others' connections.

    t8105-conn-lockout.py NFS_PORT DSNFSD_LOG
"""
import os
import re
import select
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (Checks, ConnectionClosed, NFS_PROGRAM,  # noqa: E402
                      NFS_V3, auth_sys, call_header, parse_reply,
                      read_record, record_frame)

SERVER = "127.0.0.1"
XID = [0x5105000]


def connect_from(src, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(5.0)
    s.connect((SERVER, port))
    return s


def null_call(s, timeout):
    """True when a NULL call on s is answered within timeout seconds."""
    XID[0] += 1
    xid = XID[0]
    s.settimeout(timeout)
    try:
        s.sendall(record_frame(call_header(xid, NFS_PROGRAM, NFS_V3, 0,
                                           auth_sys())))
        parse_reply(read_record(s), xid)
        return True
    except (OSError, ConnectionClosed, socket.timeout):
        return False


def is_closed(s):
    """True when the server has closed s (EOF or reset is readable)."""
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        return False
    try:
        return s.recv(1) == b""
    except OSError:
        return True


def alive(socks):
    return [s for s in socks if not is_closed(s)]


def main():
    port = int(sys.argv[1])
    log_path = sys.argv[2]
    ck = Checks()
    hosts = {"127.0.0.2": [], "127.0.0.3": []}
    names = {}

    # Each connection answers one NULL, so the server has counted it.
    for src, socks in hosts.items():
        for _ in range(32):
            s = connect_from(src, port)
            if not null_call(s, 5.0):
                ck.check("filling: %s connection %d answered"
                         % (src, len(socks) + 1), False)
                ck.exit()
            names["%s:%d" % s.getsockname()] = s
            socks.append(s)
    time.sleep(0.3)

    newcomer = "127.0.0.4"
    start = time.monotonic()
    s = connect_from(newcomer, port)
    served = null_call(s, 1.0)
    took = time.monotonic() - start
    ck.check("a new address is served at max_conns (%.3f s)" % took,
             served and took < 1.0)
    new_socks = [s]

    time.sleep(0.5)
    closed = [n for n, sock in names.items() if is_closed(sock)]
    ck.check("one idle connection made room (%d closed)" % len(closed),
             len(closed) == 1)
    with open(log_path, errors="replace") as f:
        log = f.read()
    m = re.search(r"net: (\S+): idle for [0-9.]+ s; closed to admit "
                  r"127\.0\.0\.4 \(max_conns 64 reached", log)
    ck.check("the log names the closed connection (%s)"
             % (m.group(1) if m else "no line"),
             m is not None and m.group(1) in closed)

    # The newcomer opens 32 (its cap): each is served, and the room comes
    # from the busiest host, then from its own once it is as big.
    answered = 1
    for _ in range(31):
        s = connect_from(newcomer, port)
        answered += null_call(s, 1.0)
        new_socks.append(s)
    time.sleep(0.5)
    shares = {src: len(alive(socks)) for src, socks in hosts.items()}
    shares[newcomer] = len(alive(new_socks))
    total = sum(shares.values())
    ck.check("all 32 connections of the newcomer were served (%d)"
             % answered, answered == 32)
    ck.check("shares stay fair at the limit: %s (total %d)"
             % (shares, total),
             total <= 64 and all(18 <= v <= 26 for v in shares.values()))

    # An incumbent at its share gains one at most: the room comes from
    # the busiest host, and the total stays at the limit.
    s = connect_from("127.0.0.2", port)
    ck.check("an incumbent's new connection is served", null_call(s, 1.0))
    hosts["127.0.0.2"].append(s)
    time.sleep(0.5)
    after = {src: len(alive(socks)) for src, socks in hosts.items()}
    after[newcomer] = len(alive(new_socks))
    ck.check("... and the shares stay even: %s" % after,
             sum(after.values()) <= 64 and
             after["127.0.0.2"] <= shares["127.0.0.2"] + 1 and
             max(after.values()) - min(after.values()) <= 2)
    for socks in list(hosts.values()) + [new_socks]:
        for s in socks:
            s.close()
    ck.exit()


if __name__ == "__main__":
    main()
