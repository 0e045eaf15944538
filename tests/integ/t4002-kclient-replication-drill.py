#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python half of t4002-kclient-replication-drill.sh.

  write NFSPORT MOUNTPORT EXPORT NAME OFFSET LEN SEED
      LEN seeded pseudo-random bytes at OFFSET of EXPORT's NAME over NFS
      (WRITE FILE_SYNC, 64 KiB a call)
  scatter NFSPORT MOUNTPORT EXPORT NAME COUNT LEN SEED
      COUNT such writes at seeded random 4 KiB-aligned offsets inside the
      file, none overlapping another
  blocks DIR
      one line per 64 KiB block of every regular file under DIR (sorted):
      "PATH INDEX MD5", what the guest prints for the same tree
"""
import hashlib
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import Nfs3Client, mount_root  # noqa: E402

BLOCK = 65536


def nfs_write(nfsport, mountport, export, name, writes):
    root = mount_root(("127.0.0.1", int(mountport)), export)
    with Nfs3Client(("127.0.0.1", int(nfsport))) as c:
        fh = c.lookup(root, name).object
        for off, data in writes:
            for i in range(0, len(data), BLOCK):
                r = c.write(fh, off + i, data[i:i + BLOCK])
                if r.status != 0:
                    raise SystemExit("WRITE %s at %d: status %d" %
                                     (name, off + i, r.status))


def size_of(nfsport, mountport, export, name):
    root = mount_root(("127.0.0.1", int(mountport)), export)
    with Nfs3Client(("127.0.0.1", int(nfsport))) as c:
        return c.getattr(c.lookup(root, name).object).attributes.size


def blocks(top):
    out = []
    for d, dirs, files in os.walk(top):
        dirs[:] = [x for x in dirs if x != ".snapshot"]
        for f in files:
            p = os.path.join(d, f)
            rel = "./" + os.path.relpath(p, top)
            with open(p, "rb") as fp:
                i = 0
                while True:
                    b = fp.read(BLOCK)
                    if not b:
                        break
                    out.append("%s %d %s" % (rel, i, hashlib.md5(b).hexdigest()))
                    i += 1
    for line in sorted(out):
        print(line)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "write":
        nfsport, mountport, export, name, off, length, seed = args
        rng = random.Random(int(seed))
        nfs_write(nfsport, mountport, export, name,
                  [(int(off), rng.randbytes(int(length)))])
    elif cmd == "scatter":
        nfsport, mountport, export, name, count, length, seed = args
        length = int(length)
        size = size_of(nfsport, mountport, export, name)
        rng = random.Random(int(seed))
        slots = size // (2 * length)
        writes = []
        for s in sorted(rng.sample(range(slots), int(count))):
            off = s * 2 * length + rng.randrange(0, length // 4096 + 1) * 4096
            writes.append((off, rng.randbytes(length)))
        nfs_write(nfsport, mountport, export, name, writes)
        print("%d writes of %d bytes" % (len(writes), length))
    elif cmd == "blocks":
        blocks(args[0])
    else:
        raise SystemExit("usage: see the module's docstring")


if __name__ == "__main__":
    main()
