#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One WRITE through NFS into a disk's block (t5011-vmfs-zeroing.sh).

    t5011-vmfs-zeroing.py NFS_PORT MOUNT_PORT FILE OFFSET [EARLIER ...]

Writes 4 KiB of 0xab at OFFSET of FILE in /ds3 (FILE_SYNC), then READs the
1 MiB block holding it back: the data where it was written and at the
offsets of EARLIER writes (same bytes), zeros in the rest of the block,
whatever the server did to the block on the way.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403

HOST = "127.0.0.1"
MIB = 1 << 20


def main():
    nfs_port, mount_port = int(sys.argv[1]), int(sys.argv[2])
    name, off = sys.argv[3], int(sys.argv[4])
    earlier = [int(a) for a in sys.argv[5:]]
    ck = Checks()
    m = MountClient((HOST, mount_port))
    root = m.mnt("/ds3").fhandle
    m.close()
    c = Nfs3Client((HOST, nfs_port), timeout=30.0)
    fh = c.lookup(root, name).object
    data = b"\xab" * 4096
    w = c.write(fh, off, data, stable=FILE_SYNC)
    ck.status("WRITE 4 KiB at %d" % off, w, NFS3_OK)
    block = off // MIB * MIB
    got = b""
    while len(got) < MIB:
        r = c.read(fh, block + len(got), MIB - len(got))
        if not ck.status("READ the block", r, NFS3_OK) or not r.data:
            break
        got += r.data
    rel = off - block
    want = bytearray(MIB)
    for o in [off] + earlier:
        want[o - block:o - block + len(data)] = data
    first_bad = next((i for i in range(min(len(got), MIB)) if got[i] != want[i]), None)
    ck.check("the block reads back as data and zeros", got == want,
             "%d bytes, first difference at %s" % (len(got), first_bad))
    c.close()
    ck.exit()


if __name__ == "__main__":
    main()
