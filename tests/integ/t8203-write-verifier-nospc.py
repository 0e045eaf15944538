#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One write verifier per datastore (driven by t8203-write-verifier-nospc.sh).

    t8203-write-verifier-nospc.py NFS_PORT MOUNT_PORT

ds1 is a small tmpfs, ds2 a directory.  A FILE_SYNC WRITE that ds1 refuses
with NOSPC before any byte reaches the file loses nothing acknowledged, so
neither datastore's verifier may change (RFC 1813 3.3.7: the verifier
changes when uncommitted data may be lost, and only then: every change
makes every client resend).  The two datastores answer verifiers of their
own, each the same for all of its WRITEs and COMMITs.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (FILE_SYNC, NFS3_OK, NFS3ERR_NOSPC, UNSTABLE,  # noqa: E402
                      Checks, MountClient, Nfs3Client)

HOST = "127.0.0.1"


def root_of(m, ck, path):
    r = m.mnt(path)
    ck.check("MNT %s" % path, r.status == 0)
    return r.fhandle


def new_file(c, ck, root, name):
    r = c.create(root, name)
    ck.status("CREATE %s" % name, r, NFS3_OK)
    return r.object


def verf_of(c, fh):
    w = c.write(fh, 0, b"v", UNSTABLE)
    return w.verf if w.status == NFS3_OK else None


def main():
    nfs_port, mount_port = int(sys.argv[1]), int(sys.argv[2])
    ck = Checks()
    with MountClient((HOST, mount_port)) as m, Nfs3Client((HOST, nfs_port)) as c:
        f1 = new_file(c, ck, root_of(m, ck, "/ds1"), "small")
        f2 = new_file(c, ck, root_of(m, ck, "/ds2"), "other")
        v1, v2 = verf_of(c, f1), verf_of(c, f2)
        ck.check("ds1 and ds2 answer verifiers", v1 is not None and v2 is not None)
        ck.check("each datastore has its own verifier", v1 != v2)
        cm = c.commit(f1)
        ck.check("COMMIT on ds1 answers ds1's verifier",
                 cm.status == NFS3_OK and cm.verf == v1)

        # 1 MiB FILE_SYNC writes until ds1 (a 256 KiB tmpfs) is full.
        refused = None
        for i in range(8):
            w = c.write(f1, i << 20, b"\xab" * (1 << 20), FILE_SYNC)
            if w.status != NFS3_OK:
                refused = w
                break
        ck.check("a FILE_SYNC WRITE on the full ds1 is refused with NOSPC",
                 refused is not None and refused.status == NFS3ERR_NOSPC,
                 "got %r" % (refused and refused.status))
        ck.check("ds1 keeps its verifier after the refused write",
                 verf_of(c, f1) == v1)
        ck.check("ds2 keeps its verifier after ds1's refused write",
                 verf_of(c, f2) == v2)
        cm = c.commit(f2)
        ck.check("COMMIT on ds2 answers ds2's unchanged verifier",
                 cm.status == NFS3_OK and cm.verf == v2)
    ck.exit()


if __name__ == "__main__":
    main()
