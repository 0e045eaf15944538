#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""READDIRPLUS over the raw wire (tests/integ/nfs3wire.py), for
perf/scale/scale.sh: lists one directory page by page, or creates files
in it over NFS, and prints one line of key=value figures.

    lsplus.py list NFS_PORT MOUNT_PORT EXPORT DIR EXPECT [MAXCOUNT [DIRCOUNT [REPEAT]]]
    lsplus.py create NFS_PORT MOUNT_PORT EXPORT DIR PREFIX N

list: every page's cookie is the last entry's; asserts that every name
f<NNNNNN> of EXPECT appears exactly once (cookies stable across the
listing), prints calls, entries, entries/s, bytes per reply, and
"names_ok=yes|NO"; REPEAT lists it that many times (for a server CPU
figure above the clock tick) and prints the last.  create: N sequential CREATEs (one call in flight),
prints files/s.  Exit status 1 when a check fails.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "integ"))
from nfs3wire import (MountClient, Nfs3Client, NFS3_OK, ZERO_VERF,  # noqa: E402
                      status_name)

HOST = "127.0.0.1"


def connect(nfs_port, mount_port, export, path):
    root = MountClient((HOST, mount_port)).mnt(export).fhandle
    c = Nfs3Client((HOST, nfs_port))
    return c, c.walk(root, path)


def list_dir(c, dfh, expect, maxcount, dircount):
    calls = entries = reply_bytes = 0
    seen = {}
    cookie, verf = 0, ZERO_VERF
    raw_recv = c.recv_message

    def counting_recv():
        nonlocal reply_bytes
        data = raw_recv()
        reply_bytes += len(data)
        return data

    c.recv_message = counting_recv
    t0 = time.monotonic()
    while True:
        r = c.readdirplus(dfh, cookie, verf, dircount, maxcount)
        calls += 1
        if r.status != NFS3_OK:
            print("lsplus: READDIRPLUS: %s" % status_name(r.status))
            return 1
        for e in r.entries:
            entries += 1
            seen[e.name] = seen.get(e.name, 0) + 1
        if r.eof:
            break
        cookie, verf = r.entries[-1].cookie, r.cookieverf
    secs = time.monotonic() - t0
    c.recv_message = raw_recv
    names = {"f%06d" % i for i in range(expect)}
    dups = sum(1 for n, k in seen.items() if k > 1)
    missing = len(names - set(seen))
    extra = len(set(seen) - names - {".", ".."})
    ok = dups == 0 and missing == 0 and extra == 0
    print("calls=%d entries=%d seconds=%.3f entries_per_s=%.0f "
          "bytes_per_reply=%.0f entries_per_call=%.1f dups=%d missing=%d "
          "extra=%d names_ok=%s"
          % (calls, entries, secs, entries / secs, reply_bytes / calls,
             entries / calls, dups, missing, extra, "yes" if ok else "NO"))
    return 0 if ok else 1


def create(c, dfh, prefix, n):
    t0 = time.monotonic()
    for i in range(n):
        r = c.create(dfh, "%s%06d" % (prefix, i))
        if r.status != NFS3_OK:
            print("lsplus: CREATE %s%06d: %s" % (prefix, i,
                                                status_name(r.status)))
            return 1
    secs = time.monotonic() - t0
    print("created=%d seconds=%.3f files_per_s=%.0f" % (n, secs, n / secs))
    return 0


def main(argv):
    if len(argv) < 7 or argv[1] not in ("list", "create"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    c, dfh = connect(int(argv[2]), int(argv[3]), argv[4], argv[5])
    if argv[1] == "create":
        return create(c, dfh, argv[6], int(argv[7]))
    maxcount = int(argv[7]) if len(argv) > 7 else 32768
    dircount = int(argv[8]) if len(argv) > 8 else maxcount
    repeat = int(argv[9]) if len(argv) > 9 else 1
    rc = 0
    for _ in range(repeat):
        rc |= list_dir(c, dfh, int(argv[6]), maxcount, dircount)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
