#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The NFS, MOUNT and portmapper walls of issue 23, from outside, on the
wire (driven by t2007-nfs3-trust.sh; dsnfsd runs with its own defaults,
not the lab's).

    t2007-nfs3-trust.py defaults  HOST NFS_PORT MOUNT_PORT DS1_DIR
    t2007-nfs3-trust.py nonlocal  HOST NFS_PORT MOUNT_PORT SRC_ADDR
    t2007-nfs3-trust.py snapdir   HOST NFS_PORT MOUNT_PORT on|off
    t2007-nfs3-trust.py portmap   HOST PORTMAP_PORT NFS_PORT

"defaults": -e ds1=DIR with nothing else: a client on an unprivileged
port is refused at MNT and on NFS calls (the issue's "CREATE as uid 0
from a port above 1024 made a root-owned file" now fails); on a
privileged port uid 0 is squashed (no CREATE in the root-owned root, a
file made in a 1777 directory belongs to 65534); MKNOD of block and
character devices is refused to uid 1000 and to squashed root
(NFS3ERR_PERM), a FIFO is not.
"nonlocal": a client whose address is not loopback (SRC_ADDR, bound in
the test's network namespace) is refused at MNT and on NFS calls.
"snapdir": with snapshot_dir off, MNT of /ds1/.snapshot and LOOKUP of
.snapshot answer NOENT; on, they answer, and changes under it are
NFS3ERR_ROFS.
"portmap": SET and UNSET from an unprivileged port answer FALSE and
change nothing (GETPORT still names dsnfsd's NFS port); from a
privileged port they work.
"""
import os
import stat
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403

ROOT = auth_sys(uid=0, gid=0)
USER = auth_sys(uid=1000, gid=1000)


def mnt(host, mount_port, path, src_port="priv"):
    with MountClient((host, mount_port), src_port=src_port) as m:
        return m.mnt(path)


def bound_to(src, host, port):
    """A TCP socket from address src and a free privileged port to
    host:port: only the address can be what a refusal is about."""
    import random
    import socket
    for p in random.sample(range(600, 1024), 424):
        s = socket.socket(addr_family(host), socket.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.bind((src, p))
            s.connect((host, port))
            return s
        except OSError:
            s.close()
    raise OSError("no free privileged port on " + src)


def mnt_from(src, host, mount_port, path):
    with MountClient((host, mount_port)) as m:
        m.close()
        m.sock = bound_to(src, host, mount_port)
        return m.mnt(path)


def defaults(ck, host, nfs_port, mount_port, ds1):
    r = mnt(host, mount_port, "/ds1", src_port=None)
    ck.check("MNT /ds1 from an unprivileged port -> MNT3ERR_ACCES (secure)",
             r.status == MNT3ERR_ACCES, "got %d" % r.status)
    r = mnt(host, mount_port, "/ds1")
    ck.check("MNT /ds1 from a privileged port -> MNT3_OK", r.status == MNT3_OK,
             "got %d" % r.status)
    if r.status != MNT3_OK:
        return
    root = r.fhandle

    # The exploit: CREATE as uid 0 from a port above 1024.
    with Nfs3Client((host, nfs_port), cred=ROOT) as c:
        ck.status("CREATE as uid 0 from an unprivileged port", c.create(root, "x0", mode=0o644),
                  NFS3ERR_ACCES)
    ck.check("... made no file", not os.path.exists(os.path.join(ds1, "x0")))

    with Nfs3Client((host, nfs_port), cred=ROOT, src_port="priv") as c:
        ck.status("CREATE as uid 0 (squashed) in the root-owned 0755 root",
                  c.create(root, "x1", mode=0o644), NFS3ERR_ACCES)
        ck.check("... made no file", not os.path.exists(os.path.join(ds1, "x1")))
        pub = c.lookup(root, "pub").object
        ck.status("CREATE as uid 0 in a 1777 directory", c.create(pub, "r", mode=0o644), NFS3_OK)
        st = os.stat(os.path.join(ds1, "pub", "r"))
        ck.check("... the file belongs to 65534, not root (root_squash)",
                 st.st_uid == 65534 and st.st_gid == 65534, "uid %d gid %d" % (st.st_uid, st.st_gid))
        ck.status("MKNOD block device 7:0 as squashed uid 0",
                  c.mknod(pub, "b0", NF3BLK, (7, 0), mode=0o666), NFS3ERR_PERM)
    with Nfs3Client((host, nfs_port), cred=USER, src_port="priv") as c:
        ck.status("MKNOD block device 7:0 as uid 1000",
                  c.mknod(pub, "b1", NF3BLK, (7, 0), mode=0o666), NFS3ERR_PERM)
        ck.status("MKNOD char device 1:3 as uid 1000",
                  c.mknod(pub, "c1", NF3CHR, (1, 3), mode=0o666), NFS3ERR_PERM)
        ck.check("... no device node on disk",
                 not any(os.path.lexists(os.path.join(ds1, "pub", n)) for n in ("b0", "b1", "c1")))
        ck.status("MKNOD FIFO as uid 1000 (as before)", c.mknod(pub, "p1", NF3FIFO, mode=0o644),
                  NFS3_OK)
        ck.check("... a FIFO on disk", stat.S_ISFIFO(os.lstat(os.path.join(ds1, "pub", "p1")).st_mode))


def nonlocal_client(ck, host, nfs_port, mount_port, src):
    r = mnt_from("127.0.0.1", "127.0.0.1", mount_port, "/ds1")
    ck.check("MNT /ds1 from 127.0.0.1 -> MNT3_OK", r.status == MNT3_OK, "got %d" % r.status)
    r2 = mnt_from("127.0.0.2", "127.0.0.1", mount_port, "/ds1")
    ck.check("MNT /ds1 from 127.0.0.2 (still loopback) -> MNT3_OK", r2.status == MNT3_OK,
             "got %d" % r2.status)
    r3 = mnt_from(src, host, mount_port, "/ds1")
    ck.check("MNT /ds1 from %s (not loopback, not listed) -> MNT3ERR_ACCES" % src,
             r3.status == MNT3ERR_ACCES, "got %d" % r3.status)
    if r.status != MNT3_OK:
        return
    with Nfs3Client((host, nfs_port), cred=USER) as c:
        c.close()
        c.sock = bound_to(src, host, nfs_port)
        ck.status("GETATTR of the root handle from %s" % src, c.getattr(r.fhandle),
                  NFS3ERR_ACCES)


def snapdir(ck, host, nfs_port, mount_port, on):
    r = mnt(host, mount_port, "/ds1/.snapshot")
    if not on:
        ck.check("snapshot_dir off: MNT /ds1/.snapshot -> MNT3ERR_NOENT",
                 r.status == MNT3ERR_NOENT, "got %d" % r.status)
        r = mnt(host, mount_port, "/ds1/./.snapshot/s1")
        ck.check("snapshot_dir off: MNT /ds1/./.snapshot/s1 -> MNT3ERR_NOENT",
                 r.status == MNT3ERR_NOENT, "got %d" % r.status)
        root = mnt(host, mount_port, "/ds1").fhandle
        with Nfs3Client((host, nfs_port), cred=ROOT, src_port="priv") as c:
            ck.status("snapshot_dir off: LOOKUP .snapshot", c.lookup(root, ".snapshot"),
                      NFS3ERR_NOENT)
        return
    ck.check("snapshot_dir on: MNT /ds1/.snapshot -> MNT3_OK", r.status == MNT3_OK,
             "got %d" % r.status)
    root = mnt(host, mount_port, "/ds1").fhandle
    with Nfs3Client((host, nfs_port), cred=USER, src_port="priv") as c:
        area = c.lookup(root, ".snapshot").object
        s1 = c.lookup(area, "s1").object
        f = c.lookup(s1, "disk.vmdk").object
        ck.status("WRITE under .snapshot", c.write(f, 0, b"x"), NFS3ERR_ROFS)
        ck.status("SETATTR under .snapshot", c.setattr(f, mode=0o600), NFS3ERR_ROFS)
        ck.status("CREATE under .snapshot", c.create(s1, "n", mode=0o644), NFS3ERR_ROFS)
        ck.status("MKDIR in .snapshot (a planted daily-0601)",
                  c.mkdir(area, "daily-0601", mode=0o755), NFS3ERR_ROFS)
        ck.status("REMOVE under .snapshot", c.remove(s1, "disk.vmdk"), NFS3ERR_ROFS)
        ck.status("RENAME out of .snapshot", c.rename(s1, "disk.vmdk", root, "out"),
                  NFS3ERR_ROFS)
        ck.status("LINK out of .snapshot", c.link(f, root, "out"), NFS3ERR_ROFS)
        ck.status("COMMIT under .snapshot (harmless)", c.commit(f), NFS3_OK)


PMAP_SET, PMAP_UNSET, PMAP_GETPORT = 1, 2, 3
IPPROTO_TCP = 6


def pmap(host, port, proc, prog, vers, prot, p, src_port):
    with RpcClient((host, port), 100000, 2, cred=ROOT, src_port=src_port) as c:
        pk = Packer()
        for v in (prog, vers, prot, p):
            pk.u32(v)
        u = c.call(proc, pk.bytes())
        v = u.u32()
        u.done()
        return v


def portmap(ck, host, pmap_port, nfs_port):
    def getport():
        return pmap(host, pmap_port, PMAP_GETPORT, 100003, 3, IPPROTO_TCP, 0, None)

    ck.check("GETPORT names dsnfsd's NFS port", getport() == nfs_port, str(getport()))
    ok = pmap(host, pmap_port, PMAP_UNSET, 100003, 3, 0, 0, None)
    ck.check("UNSET of NFS v3 from an unprivileged port -> FALSE", ok == 0)
    ok = pmap(host, pmap_port, PMAP_SET, 100003, 3, IPPROTO_TCP, 4444, None)
    ck.check("SET of NFS v3 from an unprivileged port -> FALSE", ok == 0)
    ck.check("... GETPORT still names dsnfsd's port", getport() == nfs_port, str(getport()))
    ok = pmap(host, pmap_port, PMAP_SET, 400123, 1, IPPROTO_TCP, 4444, None)
    ck.check("SET of a new program from an unprivileged port -> FALSE", ok == 0)
    ok = pmap(host, pmap_port, PMAP_SET, 400123, 1, IPPROTO_TCP, 4444, "priv")
    ck.check("SET of a new program from a privileged port -> TRUE", ok == 1)
    got = pmap(host, pmap_port, PMAP_GETPORT, 400123, 1, IPPROTO_TCP, 0, None)
    ck.check("... GETPORT names it", got == 4444, str(got))
    ok = pmap(host, pmap_port, PMAP_UNSET, 400123, 1, 0, 0, None)
    ck.check("UNSET of it from an unprivileged port -> FALSE", ok == 0)
    ok = pmap(host, pmap_port, PMAP_UNSET, 400123, 1, 0, 0, "priv")
    ck.check("UNSET of it from a privileged port -> TRUE", ok == 1)


def main():
    ck = Checks()
    mode, host = sys.argv[1], sys.argv[2]
    if mode == "defaults":
        defaults(ck, host, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif mode == "nonlocal":
        nonlocal_client(ck, host, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif mode == "snapdir":
        snapdir(ck, host, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "on")
    elif mode == "portmap":
        portmap(ck, host, int(sys.argv[3]), int(sys.argv[4]))
    else:
        raise SystemExit("unknown mode " + mode)
    ck.exit()


if __name__ == "__main__":
    main()
