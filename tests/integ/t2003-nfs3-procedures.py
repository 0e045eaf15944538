#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every NFSv3 procedure over the wire (driven by t2003-nfs3-procedures.sh).

    t2003-nfs3-procedures.py NFS_PORT MOUNT_PORT TEST_TMP

Each procedure gets its main success case and the errors RFC 1813 names
for it, asserted as exact nfsstat3 values.  Where the RFC leaves the
choice to the server, the check names the choice dsnfsd documents.  The
datastores are $TEST_TMP/ds1 and $TEST_TMP/ds2; the script also looks at
them directly to see that a reply tells the truth.
"""
import os
import stat
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403

HOST = "127.0.0.1"
LONG_NAME = "n" * 256   # one byte over PATHCONF name_max
MAX_NAME = "m" * 255
DIR_ENTRIES = 2000
# ds1's largest file (FSINFO maxfilesize): 2^63 - 1 on a local datastore,
# the cluster's max_file_size on CephFS (t2003-*.sh reads it).
MAX_FILE_BYTES = int(os.environ.get("DS1_MAX_FILE_BYTES", 2**63 - 1))


class Ctx:
    """What every group of checks needs: the client, the roots, the disk."""

    def __init__(self, nfs_port, mount_port, tmp):
        self.ck = Checks()
        self.nfs_port = nfs_port
        self.c = Nfs3Client((HOST, nfs_port))
        with MountClient((HOST, mount_port)) as m:
            self.root = m.mnt("/ds1").fhandle
            self.root2 = m.mnt("/ds2").fhandle
        self.ds1 = os.path.join(tmp, "ds1")
        self.ds2 = os.path.join(tmp, "ds2")

    def fh(self, path, root=None):
        return self.c.walk(root or self.root, path)

    def disk(self, path):
        return os.path.join(self.ds1, path)


def test_null(x):
    x.c.null()
    x.ck.check("NULL answers an empty SUCCESS", True)


def test_getattr(x):
    ck, c = x.ck, x.c
    r = c.getattr(x.root)
    ck.status("GETATTR root", r, NFS3_OK)
    ck.check("root is a directory", r.attributes.type == NF3DIR)
    r = c.getattr(x.fh("data.bin"))
    st = os.stat(x.disk("data.bin"))
    ck.status("GETATTR data.bin", r, NFS3_OK)
    a = r.attributes
    ck.check("fattr3 is the file's: type, size, mode, nlink, fileid",
             (a.type, a.size, a.mode, a.nlink, a.fileid) ==
             (NF3REG, st.st_size, stat.S_IMODE(st.st_mode), st.st_nlink, st.st_ino),
             repr(a))
    ck.check("mtime with nanoseconds", a.mtime == (int(st.st_mtime), st.st_mtime_ns % 10**9))
    f1, f2 = c.getattr(x.root).attributes.fsid, c.getattr(x.root2).attributes.fsid
    ck.check("one fsid within ds1, another for ds2", a.fsid == f1 and f1 != f2,
             "ds1 %d/%d ds2 %d" % (a.fsid, f1, f2))


def test_setattr(x):
    ck, c = x.ck, x.c
    fh = x.fh("attr.txt")
    r = c.setattr(fh, mode=0o640)
    ck.status("SETATTR mode 0640", r, NFS3_OK)
    ck.check("wcc_data before and after", r.obj_wcc.before is not None and
             r.obj_wcc.after is not None and r.obj_wcc.after.mode == 0o640)
    ck.check("mode on disk is 0640", stat.S_IMODE(os.stat(x.disk("attr.txt")).st_mode) == 0o640)
    r = c.setattr(fh, size=3)
    ck.status("SETATTR size 3", r, NFS3_OK)
    ck.check("size is 3, wcc says 11 -> 3",
             r.obj_wcc.before.size == 11 and r.obj_wcc.after.size == 3 and
             os.path.getsize(x.disk("attr.txt")) == 3)
    r = c.setattr(fh, size=100000)
    ck.check("SETATTR size 100000 extends the file",
             r.status == NFS3_OK and os.path.getsize(x.disk("attr.txt")) == 100000)
    r = c.setattr(fh, atime=(1000000000, 5), mtime=(1200000000, 999999999))
    ck.status("SETATTR atime and mtime to client times", r, NFS3_OK)
    a = c.getattr(fh).attributes
    ck.check("GETATTR shows both times exactly",
             a.atime == (1000000000, 5) and a.mtime == (1200000000, 999999999),
             "atime %r mtime %r" % (a.atime, a.mtime))
    before = int(time.time())
    r = c.setattr(fh, mtime=SET_TO_SERVER_TIME)
    a = c.getattr(fh).attributes
    ck.check("SETATTR mtime to server time", r.status == NFS3_OK and
             abs(a.mtime[0] - before) <= 5, "mtime %r" % (a.mtime,))
    ctime = a.ctime
    r = c.setattr(fh, guard_ctime=ctime, mode=0o600)
    ck.status("SETATTR guarded by the current ctime", r, NFS3_OK)
    r = c.setattr(fh, guard_ctime=(ctime[0] - 1, ctime[1]), mode=0o777)
    ck.status("SETATTR guard mismatch", r, NFS3ERR_NOT_SYNC)
    ck.check("... and the mode is unchanged",
             stat.S_IMODE(os.stat(x.disk("attr.txt")).st_mode) == 0o600)
    ck.check("... the NOT_SYNC reply carries wcc_data",
             r.obj_wcc.before is not None and r.obj_wcc.after is not None)
    with Nfs3Client((HOST, x.nfs_port), cred=auth_sys(uid=1000, gid=1000)) as u:
        ck.status("SETATTR mode of root's file as uid 1000", u.setattr(fh, mode=0o666), NFS3ERR_PERM)


def test_lookup(x):
    ck, c = x.ck, x.c
    r = c.lookup(x.root, "data.bin")
    ck.status("LOOKUP data.bin", r, NFS3_OK)
    ck.check("with obj_attributes and dir_attributes",
             r.obj_attributes is not None and r.obj_attributes.type == NF3REG and
             r.dir_attributes is not None and r.dir_attributes.type == NF3DIR)
    r = c.lookup(x.root, "no-such-name")
    ck.status("LOOKUP no-such-name", r, NFS3ERR_NOENT)
    ck.check("... with dir_attributes", r.dir_attributes is not None)
    ck.status("LOOKUP in a regular file", c.lookup(x.fh("data.bin"), "x"), NFS3ERR_NOTDIR)
    sub = x.fh("sub")
    r = c.lookup(sub, "..")
    ck.check("LOOKUP .. in sub gives the root handle", r.status == NFS3_OK and r.object == x.root)
    r = c.lookup(sub, ".")
    ck.check("LOOKUP . gives the directory itself", r.status == NFS3_OK and r.object == sub)
    ck.status("LOOKUP of a 255-byte name", c.lookup(x.root, MAX_NAME), NFS3ERR_NOENT)
    ck.status("LOOKUP of a 256-byte name", c.lookup(x.root, LONG_NAME), NFS3ERR_NAMETOOLONG)
    ck.status("LOOKUP of a name with '/' (sub/inner.txt)", c.lookup(x.root, "sub/inner.txt"),
              NFS3ERR_ACCES)


def test_access(x):
    ck, c = x.ck, x.c
    r = c.access(x.fh("data.bin"), ACCESS3_ALL)
    ck.status("ACCESS data.bin", r, NFS3_OK)
    ck.check("root may read, modify, extend a 0644 file, not execute it",
             r.access == ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND,
             "access %#x" % r.access)
    r = c.access(x.root, ACCESS3_ALL)
    ck.check("root may read, look up, modify, extend, delete in a directory",
             r.status == NFS3_OK and r.access == (ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY |
                                                  ACCESS3_EXTEND | ACCESS3_DELETE),
             "access %#x" % r.access)
    r = c.access(x.fh("data.bin"), ACCESS3_READ)
    ck.check("the answer is within what was asked", r.access == ACCESS3_READ)
    with Nfs3Client((HOST, x.nfs_port), cred=auth_sys(uid=1000, gid=1000)) as u:
        r = u.access(x.fh("data.bin"), ACCESS3_ALL)
        ck.check("uid 1000 may only read root's 0644 file",
                 r.status == NFS3_OK and r.access == ACCESS3_READ, "access %#x" % r.access)
        r = u.access(x.fh("secret.txt"), ACCESS3_ALL)
        ck.check("uid 1000 may do nothing to root's 0600 file",
                 r.status == NFS3_OK and r.access == 0, "access %#x" % r.access)
        ck.status("READ of root's 0600 file as uid 1000", u.read(x.fh("secret.txt"), 0, 10),
                  NFS3ERR_ACCES)
        priv = x.fh("private")
        ck.status("LOOKUP in root's 0700 directory as uid 1000", u.lookup(priv, "inner.txt"),
                  NFS3ERR_ACCES)
        ck.status("READDIR of root's 0700 directory as uid 1000", u.readdir(priv), NFS3ERR_ACCES)
        ck.status("CREATE in root's 0755 directory as uid 1000",
                  u.create(x.root, "by-1000", GUARDED), NFS3ERR_ACCES)
        ck.status("REMOVE in root's 0755 directory as uid 1000",
                  u.remove(x.root, "data.bin"), NFS3ERR_ACCES)
        ck.check("... data.bin is still there", os.path.exists(x.disk("data.bin")))


def test_readlink(x):
    ck, c = x.ck, x.c
    r = c.readlink(x.fh("link-to-data"))
    ck.status("READLINK link-to-data", r, NFS3_OK)
    ck.check("... gives the target and symlink attributes",
             r.data == "data.bin" and r.symlink_attributes.type == NF3LNK)
    ck.status("READLINK of a regular file", c.readlink(x.fh("data.bin")), NFS3ERR_INVAL)
    ck.status("READLINK of a directory", c.readlink(x.root), NFS3ERR_INVAL)


def test_read(x):
    ck, c = x.ck, x.c
    fh = x.fh("data.bin")
    with open(x.disk("data.bin"), "rb") as f:
        want = f.read()
    size = len(want)

    def rd(off, count, want_count, want_eof):
        r = c.read(fh, off, count)
        ok = (r.status == NFS3_OK and r.count == want_count and
              r.eof == want_eof and r.data == want[off:off + want_count] and
              len(r.data) == r.count)
        ck.check("READ offset %d count %d -> %d bytes, eof %s" % (off, count, want_count, want_eof),
                 ok, repr(r))

    rd(0, size, size, True)
    rd(0, 100, 100, False)
    rd(size - 2, 1, 1, False)
    rd(size - 1, 1, 1, True)
    rd(size - 1, 100, 1, True)
    rd(size, 100, 0, True)
    rd(size + 12345, 100, 0, True)
    rd(0, 0, 0, False)
    r = c.read(fh, 0, 10)
    ck.check("READ carries the file's post-op attributes",
             r.file_attributes is not None and r.file_attributes.size == size)
    ck.status("READ of a directory", c.read(x.root, 0, 10), NFS3ERR_ISDIR)
    for off in (2**63 - 1, 2**63, 2**64 - 1):
        r = c.read(fh, off, 100)
        ck.check("READ at offset %d -> 0 bytes, eof" % off,
                 r.status == NFS3_OK and r.count == 0 and r.eof, repr(r))
    big = x.fh("big.bin")
    rtmax = c.fsinfo(x.root).rtmax
    r = c.read(big, 0, 4 * 1024 * 1024)
    ck.check("READ of 4 MiB is cut to rtmax (%d), eof false" % rtmax,
             r.status == NFS3_OK and r.count == rtmax and not r.eof, repr(r))


def test_write(x):
    ck, c = x.ck, x.c
    fh = x.fh("w.bin")
    verfs = set()
    for stable, name, allowed in ((UNSTABLE, "UNSTABLE", (UNSTABLE, DATA_SYNC, FILE_SYNC)),
                                  (DATA_SYNC, "DATA_SYNC", (DATA_SYNC, FILE_SYNC)),
                                  (FILE_SYNC, "FILE_SYNC", (FILE_SYNC,))):
        data = (name.encode() + b"-") * 100
        off = 4096 * stable
        r = c.write(fh, off, data, stable)
        ck.status("WRITE %s of %d bytes" % (name, len(data)), r, NFS3_OK)
        ck.check("... count %d, committed %s" % (len(data), "|".join(str(a) for a in allowed)),
                 r.count == len(data) and r.committed in allowed,
                 "count %d committed %d" % (r.count, r.committed))
        ck.check("... wcc_data says the size grew to %d" % (off + len(data)),
                 r.file_wcc.before is not None and r.file_wcc.after is not None and
                 r.file_wcc.after.size == off + len(data))
        with open(x.disk("w.bin"), "rb") as f:
            f.seek(off)
            ck.check("... the bytes are in the file", f.read(len(data)) == data)
        verfs.add(r.verf)
    ck.check("one write verifier for all three", len(verfs) == 1)
    r = c.commit(fh, 0, 0)
    ck.status("COMMIT of the whole file", r, NFS3_OK)
    ck.check("... with the writes' verifier", r.verf in verfs)
    r = c.write(fh, 0, b"x" * 5, FILE_SYNC, count=10)
    ck.status("WRITE count 10 with 5 bytes of data", r, NFS3ERR_INVAL)
    r = c.write(fh, 0, b"", FILE_SYNC)
    ck.check("WRITE of 0 bytes succeeds with count 0", r.status == NFS3_OK and r.count == 0)
    ck.status("WRITE to a directory", c.write(x.root, 0, b"x", FILE_SYNC), NFS3ERR_ISDIR)
    size = c.getattr(fh).attributes.size
    ck.status("WRITE ending past maxfilesize (%d: 2 bytes at maxfilesize - 1)"
              % MAX_FILE_BYTES,
              c.write(fh, MAX_FILE_BYTES - 1, b"xy", FILE_SYNC), NFS3ERR_FBIG)
    ck.status("SETATTR size maxfilesize + 1",
              c.setattr(fh, size=MAX_FILE_BYTES + 1), NFS3ERR_FBIG)
    ck.check("... the file is as it was", c.getattr(fh).attributes.size == size)


def test_create(x):
    ck, c = x.ck, x.c
    r = c.create(x.root, "new-unchecked", UNCHECKED, mode=0o600)
    ck.status("CREATE UNCHECKED new-unchecked", r, NFS3_OK)
    ck.check("... with a handle, attributes (mode 0600) and dir_wcc",
             r.object is not None and r.obj_attributes.mode == 0o600 and
             r.dir_wcc.after is not None)
    ck.check("... the file is on disk", os.path.isfile(x.disk("new-unchecked")))
    fh = r.object
    c.write(fh, 0, b"some bytes", FILE_SYNC)
    r = c.create(x.root, "new-unchecked", UNCHECKED, size=0)
    ck.status("CREATE UNCHECKED of an existing file", r, NFS3_OK)
    ck.check("... gives the same file, truncated by sattr size 0",
             r.object == fh and os.path.getsize(x.disk("new-unchecked")) == 0)
    ck.status("CREATE GUARDED of an existing name", c.create(x.root, "new-unchecked", GUARDED),
              NFS3ERR_EXIST)
    ck.status("CREATE GUARDED new-guarded", c.create(x.root, "new-guarded", GUARDED), NFS3_OK)
    ck.status("CREATE UNCHECKED over a directory", c.create(x.root, "sub", UNCHECKED), NFS3ERR_EXIST)
    va, vb = b"verf-AAA", b"verf-BBB"
    r1 = c.create(x.root, "new-excl", EXCLUSIVE, verf=va)
    ck.status("CREATE EXCLUSIVE new-excl", r1, NFS3_OK)
    r2 = c.create(x.root, "new-excl", EXCLUSIVE, verf=va)
    ck.status("CREATE EXCLUSIVE retry with the same verifier", r2, NFS3_OK)
    ck.check("... gives the same file", r2.status == NFS3_OK and r1.object == r2.object)
    ck.status("CREATE EXCLUSIVE with another verifier", c.create(x.root, "new-excl", EXCLUSIVE, verf=vb),
              NFS3ERR_EXIST)
    ck.status("CREATE EXCLUSIVE over a file made without a verifier",
              c.create(x.root, "new-guarded", EXCLUSIVE, verf=va), NFS3ERR_EXIST)
    ck.status("CREATE of a 256-byte name", c.create(x.root, LONG_NAME, GUARDED), NFS3ERR_NAMETOOLONG)
    ck.check("CREATE of a 255-byte name",
             c.create(x.root, MAX_NAME, GUARDED).status == NFS3_OK and
             os.path.exists(x.disk(MAX_NAME)))
    ck.status("CREATE in a regular file", c.create(x.fh("data.bin"), "x", GUARDED), NFS3ERR_NOTDIR)


def test_mkdir(x):
    ck, c = x.ck, x.c
    r = c.mkdir(x.root, "newdir", mode=0o750)
    ck.status("MKDIR newdir", r, NFS3_OK)
    ck.check("... a directory of mode 0750 with a handle",
             r.object is not None and r.obj_attributes.type == NF3DIR and
             r.obj_attributes.mode == 0o750 and os.path.isdir(x.disk("newdir")))
    ck.check("... dir_wcc shows the parent's link count grew",
             r.dir_wcc.after is not None and r.dir_wcc.after.nlink == os.stat(x.ds1).st_nlink)
    ck.status("MKDIR of an existing name", c.mkdir(x.root, "newdir"), NFS3ERR_EXIST)
    ck.status("MKDIR of an existing file's name", c.mkdir(x.root, "data.bin"), NFS3ERR_EXIST)
    ck.status("MKDIR of a 256-byte name", c.mkdir(x.root, LONG_NAME), NFS3ERR_NAMETOOLONG)


def test_symlink(x):
    ck, c = x.ck, x.c
    r = c.symlink(x.root, "new-link", "sub/inner.txt")
    ck.status("SYMLINK new-link -> sub/inner.txt", r, NFS3_OK)
    ck.check("... on disk with its target", os.readlink(x.disk("new-link")) == "sub/inner.txt")
    ck.check("... READLINK of the new handle gives the target",
             r.object is not None and c.readlink(r.object).data == "sub/inner.txt")
    ck.status("SYMLINK of an existing name", c.symlink(x.root, "new-link", "x"), NFS3ERR_EXIST)


def test_mknod(x):
    ck, c = x.ck, x.c
    r = c.mknod(x.root, "fifo", NF3FIFO, mode=0o644)
    ck.status("MKNOD FIFO", r, NFS3_OK)
    ck.check("... is a FIFO on disk and in fattr3",
             stat.S_ISFIFO(os.lstat(x.disk("fifo")).st_mode) and r.obj_attributes.type == NF3FIFO)
    for t, name in ((NF3REG, "NF3REG"), (NF3DIR, "NF3DIR"), (NF3LNK, "NF3LNK")):
        ck.status("MKNOD of type %s" % name, c.mknod(x.root, "bad-" + name, t), NFS3ERR_BADTYPE)
        ck.check("... made nothing", not os.path.lexists(x.disk("bad-" + name)))
    ck.status("MKNOD FIFO of an existing name", c.mknod(x.root, "fifo", NF3FIFO), NFS3ERR_EXIST)
    # An open(2) of a FIFO would block the server: data calls refuse it.
    fifo = r.object
    ck.status("READ of the FIFO", c.read(fifo, 0, 10), NFS3ERR_INVAL)
    ck.status("WRITE to the FIFO", c.write(fifo, 0, b"x", FILE_SYNC), NFS3ERR_INVAL)


def test_remove(x):
    ck, c = x.ck, x.c
    doomed = x.fh("doomed.txt")
    r = c.remove(x.root, "doomed.txt")
    ck.status("REMOVE doomed.txt", r, NFS3_OK)
    ck.check("... is gone, dir_wcc carried",
             not os.path.exists(x.disk("doomed.txt")) and r.dir_wcc.after is not None)
    ck.status("... its handle afterwards: GETATTR", c.getattr(doomed), NFS3ERR_STALE)
    ck.status("... its handle afterwards: READ", c.read(doomed, 0, 1), NFS3ERR_STALE)
    ck.status("REMOVE of a missing name", c.remove(x.root, "doomed.txt"), NFS3ERR_NOENT)
    ck.status("REMOVE of a directory", c.remove(x.root, "emptydir"), NFS3ERR_ISDIR)
    ck.check("... the directory is still there", os.path.isdir(x.disk("emptydir")))
    ck.status("REMOVE in a regular file", c.remove(x.fh("data.bin"), "x"), NFS3ERR_NOTDIR)
    ck.status("REMOVE of a 256-byte name", c.remove(x.root, LONG_NAME), NFS3ERR_NAMETOOLONG)


def test_rmdir(x):
    ck, c = x.ck, x.c
    ck.status("RMDIR of a non-empty directory", c.rmdir(x.root, "sub"), NFS3ERR_NOTEMPTY)
    ck.status("RMDIR of a regular file", c.rmdir(x.root, "data.bin"), NFS3ERR_NOTDIR)
    ck.status("RMDIR of a missing name", c.rmdir(x.root, "no-such-dir"), NFS3ERR_NOENT)
    r = c.rmdir(x.root, "emptydir")
    ck.status("RMDIR emptydir", r, NFS3_OK)
    ck.check("... is gone", not os.path.exists(x.disk("emptydir")))


def test_rename(x):
    ck, c = x.ck, x.c
    fh = x.fh("mv-src.txt")
    sub = x.fh("sub")
    r = c.rename(x.root, "mv-src.txt", sub, "mv-dst.txt")
    ck.status("RENAME mv-src.txt -> sub/mv-dst.txt", r, NFS3_OK)
    ck.check("... both wcc_data carried", r.fromdir_wcc.after is not None and
             r.todir_wcc.after is not None)
    ck.check("... moved on disk", not os.path.exists(x.disk("mv-src.txt")) and
             os.path.exists(x.disk("sub/mv-dst.txt")))
    ck.check("... the old handle still reads it", c.read(fh, 0, 100).data == b"moving\n")
    ck.status("RENAME of a missing name", c.rename(x.root, "mv-src.txt", x.root, "x"), NFS3ERR_NOENT)
    ck.status("RENAME across datastores ds1 -> ds2",
              c.rename(sub, "mv-dst.txt", x.root2, "mv-dst.txt"), NFS3ERR_XDEV)
    ck.check("... left the file where it was", os.path.exists(x.disk("sub/mv-dst.txt")) and
             not os.path.exists(os.path.join(x.ds2, "mv-dst.txt")))
    ck.status("RENAME a directory into itself", c.rename(x.root, "sub", sub, "sub2"), NFS3ERR_INVAL)
    ck.status("RENAME onto a 256-byte name", c.rename(sub, "mv-dst.txt", sub, LONG_NAME),
              NFS3ERR_NAMETOOLONG)
    ck.status("RENAME a file onto a directory", c.rename(x.root, "data.bin", x.root, "sub"),
              NFS3ERR_ISDIR)
    ck.status("RENAME a directory onto a file", c.rename(x.root, "sub", x.root, "data.bin"),
              NFS3ERR_NOTDIR)
    c.mkdir(x.root, "mv-dir")
    ck.status("RENAME a directory onto a non-empty one", c.rename(x.root, "mv-dir", x.root, "sub"),
              (NFS3ERR_NOTEMPTY, NFS3ERR_EXIST))
    victim = x.fh("mv-victim.txt")
    r = c.rename(x.root, "mv-other.txt", x.root, "mv-victim.txt")
    ck.status("RENAME over an existing file", r, NFS3_OK)
    ck.check("... the name now holds the moved bytes",
             c.read(x.fh("mv-victim.txt"), 0, 100).data == b"other\n")
    ck.status("... the replaced file's handle: GETATTR", c.getattr(victim), NFS3ERR_STALE)


def test_link(x):
    ck, c = x.ck, x.c
    fh = x.fh("data.bin")
    r = c.link(fh, x.root, "hard-link")
    ck.status("LINK data.bin -> hard-link", r, NFS3_OK)
    ck.check("... file_attributes show 2 links",
             r.file_attributes is not None and r.file_attributes.nlink == 2)
    ck.check("... same inode on disk",
             os.stat(x.disk("hard-link")).st_ino == os.stat(x.disk("data.bin")).st_ino)
    ck.status("LINK onto an existing name", c.link(fh, x.root, "sub"), NFS3ERR_EXIST)
    ck.status("LINK across datastores (file in ds1, dir in ds2)",
              c.link(fh, x.root2, "hard-link"), NFS3ERR_XDEV)
    ck.check("... made nothing in ds2", not os.path.exists(os.path.join(x.ds2, "hard-link")))
    r = c.remove(x.root, "hard-link")
    ck.status("REMOVE of the link", r, NFS3_OK)


def page_through(x, plus, count):
    """READDIR(PLUS) of bigdir with small pages -> (names seen, pages, ok)."""
    c, fh = x.c, x.fh("bigdir")
    seen, cookies, verfs, pages, cookie, verf = [], set(), set(), 0, 0, ZERO_VERF
    ok = True
    while pages < 10000:
        if plus:
            r = c.readdirplus(fh, cookie, verf, dircount=count // 4, maxcount=count)
        else:
            r = c.readdir(fh, cookie, verf, count)
        if r.status != NFS3_OK:
            x.ck.check("READDIR%s page %d" % ("PLUS" if plus else "", pages), False,
                       status_name(r.status))
            return seen, pages, False
        pages += 1
        if c.last_result_bytes > count:
            x.ck.check("READDIR%s page %d fits in %d bytes" % ("PLUS" if plus else "", pages, count),
                       False, "%d bytes" % c.last_result_bytes)
            ok = False
        verfs.add(r.cookieverf)
        for e in r.entries:
            seen.append(e.name)
            if e.cookie in cookies or e.cookie == 0:
                ok = False
            cookies.add(e.cookie)
            if plus and (e.name_handle is None or e.name_attributes is None or
                         e.name_attributes.fileid != e.fileid):
                ok = False
        if r.eof:
            break
        cookie, verf = r.entries[-1].cookie, r.cookieverf
    x.ck.check("READDIR%s pages within %d bytes, cookies non-zero and unique, "
               "one cookieverf%s" % ("PLUS" if plus else "", count,
                                     ", handle and attributes per entry" if plus else ""),
               ok and len(verfs) == 1)
    return seen, pages, True


def test_readdir(x):
    ck, c = x.ck, x.c
    want = sorted(["f%05d-%s" % (i, "x" * (i % 37)) for i in range(DIR_ENTRIES)] + [".", ".."])
    for plus, count in ((False, 1024), (True, 4096)):
        what = "READDIRPLUS" if plus else "READDIR"
        seen, pages, ok = page_through(x, plus, count)
        ck.check("%s of %d entries in pages of %d bytes: every name exactly once" %
                 (what, DIR_ENTRIES, count), ok and sorted(seen) == want,
                 "%d names, %d distinct" % (len(seen), len(set(seen))))
        ck.check("... in many pages (%d)" % pages, pages >= 20)
    fh = x.fh("bigdir")
    r = c.readdir(fh, 0, ZERO_VERF, 1024)
    good = r.cookieverf
    bad = bytes(b ^ 0xFF for b in good)
    cookie = r.entries[-1].cookie
    ck.status("READDIR with another directory's cookieverf", c.readdir(fh, cookie, bad, 1024),
              NFS3ERR_BAD_COOKIE)
    ck.status("READDIRPLUS with a wrong cookieverf",
              c.readdirplus(fh, cookie, bad, 1024, 4096), NFS3ERR_BAD_COOKIE)
    ck.status("READDIR with count 16", c.readdir(fh, 0, ZERO_VERF, 16), NFS3ERR_TOOSMALL)
    ck.status("READDIRPLUS with maxcount 64", c.readdirplus(fh, 0, ZERO_VERF, 64, 64),
              NFS3ERR_TOOSMALL)
    ck.status("READDIR of a regular file", c.readdir(x.fh("data.bin")), NFS3ERR_NOTDIR)
    r = c.readdir(fh, 0, ZERO_VERF, 1024)
    ck.check("READDIR from cookie 0 again gives the same first page",
             r.status == NFS3_OK and r.cookieverf == good and r.entries[-1].cookie == cookie)
    # Cookies stay valid while the directory changes: list half, remove
    # every third name (seen or not), list the rest.
    seen, cookie, verf = [], 0, ZERO_VERF
    for _ in range(40):
        r = c.readdir(fh, cookie, verf, 1024)
        seen += [e.name for e in r.entries]
        cookie, verf = r.entries[-1].cookie, r.cookieverf
    names = sorted(n for n in want if n not in (".", ".."))
    gone = set(names[::3])
    for n in gone:
        os.unlink(os.path.join(x.disk("bigdir"), n))
    errs = []
    while True:
        r = c.readdir(fh, cookie, verf, 1024)
        if r.status != NFS3_OK:
            errs.append(status_name(r.status))
            break
        seen += [e.name for e in r.entries]
        if r.eof:
            break
        cookie, verf = r.entries[-1].cookie, r.cookieverf
    kept = set(want) - gone
    ck.check("READDIR goes on after names are removed mid-listing: no error, no name "
             "twice, every kept name seen",
             not errs and len(seen) == len(set(seen)) and kept <= set(seen),
             "errors %s, %d names, %d distinct, %d kept missing" %
             (errs, len(seen), len(set(seen)), len(kept - set(seen))))


def test_fs(x):
    ck, c = x.ck, x.c
    r = c.fsstat(x.root)
    ck.status("FSSTAT", r, NFS3_OK)
    sv = os.statvfs(x.ds1)
    ck.check("... abytes <= fbytes <= tbytes = the disk's size",
             r.abytes <= r.fbytes <= r.tbytes and r.tbytes == sv.f_blocks * sv.f_frsize,
             repr(r))
    ck.check("... afiles <= ffiles <= tfiles (RFC 1813 3.3.18)",
             r.afiles <= r.ffiles <= r.tfiles, repr(r))
    r = c.fsinfo(x.root)
    ck.status("FSINFO", r, NFS3_OK)
    ck.check("... rtmax = wtmax = 1 MiB, preferred = max, multiples of 4096",
             (r.rtmax, r.wtmax, r.rtpref, r.wtpref, r.rtmult, r.wtmult) ==
             (1 << 20, 1 << 20, 1 << 20, 1 << 20, 4096, 4096), repr(r))
    ck.check("... maxfilesize the backend's (%d), time_delta 1 ns" % MAX_FILE_BYTES,
             r.maxfilesize == MAX_FILE_BYTES and r.time_delta == (0, 1),
             "maxfilesize %d" % r.maxfilesize)
    want = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME
    ck.check("... properties LINK SYMLINK HOMOGENEOUS CANSETTIME", r.properties == want,
             "%#x" % r.properties)
    r = c.pathconf(x.fh("data.bin"))
    ck.status("PATHCONF", r, NFS3_OK)
    ck.check("... name_max 255, no_trunc, case preserving and sensitive",
             r.name_max == 255 and r.no_trunc and r.case_preserving and not r.case_insensitive,
             repr(r))


def test_export_boundary(x):
    ck, c = x.ck, x.c
    r = c.lookup(x.root, "..")
    ck.check("LOOKUP .. at the export root gives the root itself",
             r.status == NFS3_OK and r.object == x.root and
             r.obj_attributes.fileid == os.stat(x.ds1).st_ino, repr(r))
    r2 = c.lookup(r.object if r.status == NFS3_OK else x.root, "..")
    ck.check("... and again", r2.status == NFS3_OK and r2.object == x.root)
    ck.status("SYMLINK etc-link -> /etc (only stores the text)",
              c.symlink(x.root, "etc-link", "/etc"), NFS3_OK)
    ck.status("SYMLINK up-link -> ../../../..", c.symlink(x.root, "up-link", "../../../.."), NFS3_OK)
    ck.status("SYMLINK passwd-link -> /etc/passwd", c.symlink(x.root, "passwd-link", "/etc/passwd"),
              NFS3_OK)
    etc = x.fh("etc-link")
    ck.check("LOOKUP of etc-link gives the link, not /etc",
             c.getattr(etc).attributes.type == NF3LNK)
    ck.status("LOOKUP passwd through etc-link", c.lookup(etc, "passwd"), NFS3ERR_NOTDIR)
    ck.status("LOOKUP through up-link", c.lookup(x.fh("up-link"), "etc"), NFS3ERR_NOTDIR)
    ck.status("READDIR of etc-link", c.readdir(etc), NFS3ERR_NOTDIR)
    ck.status("CREATE inside etc-link", c.create(etc, "owned", GUARDED), NFS3ERR_NOTDIR)
    ck.check("... nothing was made in /etc", not os.path.exists("/etc/owned"))
    pw = x.fh("passwd-link")
    r = c.read(pw, 0, 4096)
    ck.status("READ of passwd-link", r, NFS3ERR_INVAL)
    ck.check("... returns no /etc/passwd bytes", b"root:" not in getattr(r, "data", b""))
    ck.status("WRITE to passwd-link", c.write(pw, 0, b"x", FILE_SYNC), NFS3ERR_INVAL)
    ck.status("SETATTR size 0 of passwd-link", c.setattr(pw, size=0), NFS3ERR_INVAL)
    ck.check("... /etc/passwd is intact", os.path.getsize("/etc/passwd") > 0)
    ck.check("READLINK of etc-link gives only its text",
             c.readlink(etc).data == "/etc")
    outside = os.path.join(os.path.dirname(x.ds1), "outside.txt")
    before = os.stat(outside)
    ol = x.fh("outside-link")
    for kw in ({"mode": 0o777}, {"uid": 1234, "gid": 4321}, {"mtime": (1000, 0)}):
        r = c.setattr(ol, **kw)
        after = os.stat(outside)
        ck.check("SETATTR %s of a link to a file outside the export leaves that file alone" %
                 ",".join(kw), (after.st_mode, after.st_uid, after.st_gid, after.st_mtime_ns) ==
                 (before.st_mode, before.st_uid, before.st_gid, before.st_mtime_ns),
                 "status %s" % status_name(r.status))


GROUPS = [test_null, test_getattr, test_setattr, test_lookup, test_access,
          test_readlink, test_read, test_write, test_create, test_mkdir,
          test_symlink, test_mknod, test_remove, test_rmdir, test_rename,
          test_link, test_readdir, test_fs, test_export_boundary]


def main():
    x = Ctx(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
    for group in GROUPS:
        print("%s:" % group.__name__[5:])
        try:
            group(x)
        except (XdrError, RpcError, ConnectionClosed, LookupError, AttributeError) as e:
            x.ck.check("%s ran to its end" % group.__name__, False, "%s: %s" % (type(e).__name__, e))
            x.c.connect()
    x.c.close()
    x.ck.exit()


if __name__ == "__main__":
    main()
