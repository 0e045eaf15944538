#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Forged CephFS handles (t2107-*.sh).

    t2107-cephfs-handle-trust.py NFS_PORT MOUNT_PORT KEY_FILE
                                 INO_INSIDE INO_OUTSIDE INO_OTHER_DIR
                                 INO_PARENT V1_SECRET

With the key, a handle with a valid MAC can be made for any inode number
(as an attacker who stole or guessed the key could): one naming an inode
under ds1's ceph_path resolves (the forging is right), one naming an inode
elsewhere in the same CephFS -- a file, a directory beside ds1, ds1's
parent, the file system's root -- is refused by the subtree check.
Version-1 handles (keyed xxh3, with the secret the old xattr held) of a
file inside resolve after the upgrade; of a file outside, are refused.
"""
import ctypes
import hashlib
import hmac
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403

nfs_port, mount_port = int(sys.argv[1]), int(sys.argv[2])
key = open(sys.argv[3], "rb").read()
inside, outside, other_dir, parent = (int(x) for x in sys.argv[4:8])
v1_secret = open(sys.argv[8], "rb").read()
xxh = ctypes.CDLL("libxxhash.so.0")
xxh.XXH3_64bits_withSecret.restype = ctypes.c_uint64
xxh.XXH3_64bits_withSecret.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                       ctypes.c_char_p, ctypes.c_size_t]
ck = Checks()
with MountClient(("127.0.0.1", mount_port)) as m:
    root = m.mnt("/ds1").fhandle
c = Nfs3Client(("127.0.0.1", nfs_port))
ck.check("the root handle is version 2, 23 bytes", len(root) == 23 and
         root[0] == 2, repr(root))


def forge(ino):
    body = bytes([2]) + root[1:5] + bytes([0xCE, 8]) + ino.to_bytes(8, "big")
    return body + hmac.new(key, body, hashlib.sha256).digest()[:8]


ck.check("a forged root handle is the server's own", forge(
    int.from_bytes(root[7:15], "big")) == root)
r = c.getattr(forge(inside))
ck.status("GETATTR of a forged handle inside ds1 (a file two levels "
          "down, not looked up before)", r, NFS3_OK)
REFUSED = (NFS3ERR_STALE, NFS3ERR_BADHANDLE)
for what, ino in (("a file of another directory", outside),
                  ("a directory beside ds1", other_dir),
                  ("ds1's parent", parent),
                  ("the file system's root", 1)):
    r = c.getattr(forge(ino))
    ck.check("GETATTR of %s (inode %#x) is refused" % (what, ino),
             r.status in REFUSED, "status %d" % r.status)


def forge_snap(ino, snapid):
    body = (bytes([2]) + root[1:5] + bytes([0xCE, 16]) +
            ino.to_bytes(8, "big") + snapid.to_bytes(8, "big"))
    return body + hmac.new(key, body, hashlib.sha256).digest()[:8]


# The snapids of the two snapshots are small numbers this client cannot
# read (ceph-fuse shows made-up inode numbers in .snap): every one up to
# 256 is tried.  One of them finds the file of ds1's own snapshot (the
# forging is right); none finds the file of the other tree's snapshot.
ok_in = [s for s in range(1, 257)
         if c.getattr(forge_snap(inside, s)).status == NFS3_OK]
ok_out = [s for s in range(1, 257)
          if c.getattr(forge_snap(outside, s)).status == NFS3_OK]
ck.check("a forged handle of ds1's file in ds1's snapshot resolves",
         len(ok_in) >= 1, repr(ok_in))
ck.check("no forged handle of the other tree's file in a snapshot "
         "resolves", ok_out == [], repr(ok_out))


def forge_v1(ino):
    body = bytes([1]) + root[1:5] + bytes([0xCE, 8]) + ino.to_bytes(8, "big")
    tag = xxh.XXH3_64bits_withSecret(body, len(body), v1_secret,
                                     len(v1_secret))
    return body + tag.to_bytes(8, "big")


r = c.getattr(forge_v1(inside))
ck.status("a version-1 handle (old xattr's secret) of a file in ds1 still "
          "resolves", r, NFS3_OK)
r = c.getattr(forge_v1(outside))
ck.check("a version-1 handle of a file outside ds1 is refused",
         r.status in REFUSED, "status %d" % r.status)
r = c.read(forge(outside), 0, 4096)
ck.check("READ of the other directory's file is refused",
         r.status in REFUSED, "status %d" % r.status)
r = c.lookup(forge(other_dir), "payroll.txt")
ck.check("LOOKUP in the directory beside ds1 is refused",
         r.status in REFUSED, "status %d" % r.status)
ck.exit()
