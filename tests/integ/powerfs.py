#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A disk that remembers what a power cut would keep (t8205-power-loss).

    powerfs.py MOUNTPOINT IMAGE LOG

Serves one file, MOUNTPOINT/disk, over FUSE: its bytes are IMAGE's, and
every write to it is appended to LOG, in the order it completed, as
W OFFSET LENGTH DATA; every fsync(2) of it appends F.  A loop device over
MOUNTPOINT/disk is then a block device whose writes and flushes are
logged, the method of dm-log-writes (xfstests generic/482), which this
machine's kernel lacks: replaying LOG onto the image IMAGE started as, up
to any F, gives what the disk held had the power gone right after that
flush (what was written since could be lost).  A loop device flushes its
file with fsync(2), so F is the disk's cache flush.  One thread: writes
and flushes are logged in the order the kernel completed them.

Debian's python3-fusepy (libfuse2); run with Debian's /usr/bin/python3.
"""
import errno
import os
import stat
import struct
import sys

from fusepy import FUSE, FuseOSError, Operations

RECORD = struct.Struct("<cQI")  # kind, offset, length


class PowerFS(Operations):
    def __init__(self, image, log):
        self.fd = os.open(image, os.O_RDWR)
        self.size = os.fstat(self.fd).st_size
        self.log = open(log, "wb", buffering=1 << 20)

    def getattr(self, path, fh=None):
        if path == "/":
            return {"st_mode": stat.S_IFDIR | 0o755, "st_nlink": 2}
        if path == "/disk":
            return {"st_mode": stat.S_IFREG | 0o600, "st_nlink": 1,
                    "st_size": self.size}
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", "disk"]

    def open(self, path, flags):
        if path != "/disk":
            raise FuseOSError(errno.ENOENT)
        return 0

    def read(self, path, size, offset, fh):
        return os.pread(self.fd, size, offset)

    def write(self, path, data, offset, fh):
        if offset + len(data) > self.size:
            raise FuseOSError(errno.ENOSPC)
        os.pwrite(self.fd, data, offset)
        self.log.write(RECORD.pack(b"W", offset, len(data)))
        self.log.write(data)
        return len(data)

    def fsync(self, path, datasync, fh):
        self.log.write(RECORD.pack(b"F", 0, 0))
        self.log.flush()
        return 0

    def truncate(self, path, length, fh=None):
        if length != self.size:
            raise FuseOSError(errno.EPERM)

    def destroy(self, path):
        self.log.close()
        os.close(self.fd)


def main():
    mnt, image, log = sys.argv[1:4]
    FUSE(PowerFS(image, log), mnt, foreground=True, nothreads=True,
         allow_other=False)


if __name__ == "__main__":
    main()
