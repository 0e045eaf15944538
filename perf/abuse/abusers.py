#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The abusers of perf/abuse/abuse.sh, all at once, for SECONDS:
1,000 idle connections held open, 8 clients that pipeline READ calls and
never read a reply, and a loop that opens and closes connections (10,000
by default).  Prints what each did.

    abusers.py NFS_PORT MOUNT_PORT SECONDS [CHURN]
"""
import os
import resource
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "integ"))
from nfs3wire import (MountClient, NFS_PROGRAM, NFS_V3, Nfs3Client,  # noqa: E402
                      auth_sys, call_header, record_frame)

HOST = "127.0.0.1"


def idle(port, n, hold, out):
    socks = []
    for _ in range(n):
        try:
            socks.append(socket.create_connection((HOST, port)))
        except OSError:
            break
    out["idle_opened"] = len(socks)
    time.sleep(hold)
    alive = 0
    for s in socks:
        s.setblocking(False)
        try:
            alive += 0 if s.recv(1) == b"" else 1
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
        s.close()
    out["idle_alive_at_end"] = alive


def never_reads(port, fh, until, out, key):
    """READ 64 KiB again and again, never reading a reply."""
    s = socket.create_connection((HOST, port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    args = struct.pack(">I", len(fh)) + fh + b"\0" * ((4 - len(fh) % 4) % 4)
    args += struct.pack(">QI", 0, 65536)
    sent = 0
    s.settimeout(0.5)
    xid = 1
    while time.monotonic() < until:
        msg = record_frame(call_header(xid, NFS_PROGRAM, NFS_V3, 6, auth_sys()) + args)
        try:
            s.sendall(msg)
            sent += 1
            xid += 1
        except socket.timeout:
            continue  # the server stopped reading us: back-pressure
        except OSError:
            break
    out[key] = sent
    s.close()


def churn(port, count, until, out):
    done = 0
    while done < count and time.monotonic() < until:
        try:
            socket.create_connection((HOST, port)).close()
        except OSError:
            pass
        done += 1
    out["churned"] = done


def main():
    nfs_port, mount_port, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    churn_count = int(sys.argv[4]) if len(sys.argv) > 4 else 10000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    root = MountClient((HOST, mount_port)).mnt("/ds1").fhandle
    # READs of a real 256 MiB file: every reply carries 64 KiB.
    fh = Nfs3Client((HOST, nfs_port)).lookup(root, "big").object
    until = time.monotonic() + seconds
    out = {}
    threads = [threading.Thread(target=idle, args=(nfs_port, 1000, seconds, out))]
    for i in range(8):
        threads.append(threading.Thread(target=never_reads,
                                        args=(nfs_port, fh, until, out, "nr%d" % i)))
    threads.append(threading.Thread(target=churn, args=(nfs_port, churn_count, until, out)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sent = sum(v for k, v in out.items() if k.startswith("nr"))
    print("abusers: idle connections opened %d, still open at the end %d; "
          "never-reading clients sent %d READ calls; connections opened and closed %d"
          % (out.get("idle_opened", 0), out.get("idle_alive_at_end", 0), sent,
             out.get("churned", 0)))


if __name__ == "__main__":
    main()
