#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""VAAI-NAS in-band, NFSv3 procedure 22 (driven by t6120-vaai-nas-inband.sh
on a local datastore and t2109-cephfs-vaai-nas.sh on a CephFS one).

    t6120-vaai-nas-inband.py NFS_PORT MOUNT_PORT BACKEND

Everything goes over NFS, so the same checks hold on either backend: the
support queries; a full clone (started, followed to COMPLETE, read back
and compared); Extended Statistics; Reserve Space (local only); an abort;
and every refusal of the trust boundary (docs/security.md, "VAAI-NAS
procedure 22"), each followed by a look that nothing was written.
ds1 and ds2 are read-write with root kept, ds3 read-only, ds4 squashes
root, ds5 keeps `secure` (privileged source ports only), ds6 has a
quota of 8 MiB; the shell made ds3/empty.img and ds4/secret.img (0600, root's) and
ds4/empty.img (0666).
"""
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (FILE_SYNC, NF3FIFO, NFS3_OK, NFS3ERR_ACCES,  # noqa: E402
                      NFS3ERR_BADHANDLE, NFS3ERR_EXIST, NFS3ERR_INVAL,
                      NFS3ERR_ISDIR, NFS3ERR_NOENT, NFS3ERR_NOSPC,
                      NFS3ERR_NOTSUPP,
                      NFS3ERR_ROFS, NFS3ERR_STALE, NFS3ERR_XDEV, Checks,
                      MountClient, RpcError, auth_sys)
import vaainas as v  # noqa: E402

HOST = "127.0.0.1"
MIB = 1 << 20


def pattern(seed, n):
    """n bytes nobody would write by chance (and no block of zeros)."""
    out = bytearray()
    x = seed
    while len(out) < n:
        x = (x * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        out += x.to_bytes(8, "little")
    return bytes(out[:n])


def make_file(c, dir_fh, name, chunks, size):
    """Creates name with the data of chunks {offset: bytes}, then size."""
    r = c.create(dir_fh, name, mode=0o644)
    fh = r.object
    for off, data in sorted(chunks.items()):
        for i in range(0, len(data), MIB):
            c.write(fh, off + i, data[i:i + MIB], FILE_SYNC)
    c.setattr(fh, size=size)
    return fh


def read_all(c, fh, size):
    out = b""
    while len(out) < size:
        r = c.read(fh, len(out), min(MIB, size - len(out)))
        if r.status != NFS3_OK or not r.data:
            break
        out += r.data
    return out


def size_of(c, fh):
    return c.getattr(fh).attributes.size


def wait_clone(c, fh, limit_s=120):
    """Polls FCLNPROC as the plug-in does until COMPLETE or an error."""
    deadline = time.time() + limit_s
    seen = []
    while time.time() < deadline:
        r = c.progress(fh)
        seen.append((r.status, r.clone_flag, r.clone_offset))
        if r.status != NFS3_OK or r.clone_flag == v.CLONE_COMPLETE:
            return r, seen
        time.sleep(0.05)
    return None, seen


def support(ck, c, roots, backend):
    for what, cmd in (("clone", v.CLN_SUPPORT), ("stats", v.STAT_SUPPORT)):
        r = c.supported(roots["ds1"], cmd)
        ck.check("%s support query on ds1 -> OK, supported, 80 bytes, "
                 "version 1" % what,
                 r.status == NFS3_OK and r.result == v.SUPPORTED and
                 len(r.raw) == v.OUT_BYTES and r.version == 1, repr(r))
    r = c.supported(roots["ds1"], v.RSV_SUPPORT)
    want = v.SUPPORTED if backend == "local" else v.NOT_SUPPORTED
    ck.check("reserve support query on ds1 (%s) -> %s" %
             (backend, "supported" if want == 0 else "not supported"),
             r.status == NFS3_OK and r.result == want, repr(r))
    r = c.supported(roots["ds3"], v.CLN_SUPPORT)
    ck.check("clone support query on read-only ds3 -> not supported",
             r.status == NFS3_OK and r.result == v.NOT_SUPPORTED, repr(r))


def full_clone(ck, c, root):
    # Holes between and after, past CephFS's 4 MiB objects too.
    size = 16 * MIB + 12345
    chunks = {0: pattern(1, 2 * MIB), 12 * MIB: pattern(2, MIB + 100)}
    src = make_file(c, root, "src-flat.vmdk", chunks, size)
    want = read_all(c, src, size)
    # As the plug-in: CREATE the target, then procedure 22 on it.
    dst = c.create(root, "clone-flat.vmdk", mode=0o644).object
    r = c.clone(dst, src, "clone-flat.vmdk")
    ck.check("FCLONE into a new empty file -> NFS3_OK", r.status == NFS3_OK,
             repr(r))
    r, seen = wait_clone(c, dst)
    ck.check("FCLNPROC reaches COMPLETE with the offset at the size",
             r is not None and r.status == NFS3_OK and
             r.clone_offset == size, "seen %r" % seen[-3:])
    ck.check("every FCLNPROC answer said START, DOING or COMPLETE",
             all(s == NFS3_OK and f in (0, 1, 2) for s, f, _ in seen),
             repr(seen[:5]))
    got = read_all(c, dst, size + 1)
    ck.check("the clone reads back byte for byte (%d bytes)" % size,
             got == want, "got %d bytes" % len(got))
    a = c.getattr(dst).attributes
    ck.check("the clone keeps the holes (allocated < size)",
             a.used < size, "used %d" % a.used)
    r = c.abort(dst)
    ck.check("FCLNABORT after the end -> NFS3_OK, nothing undone",
             r.status == NFS3_OK and read_all(c, dst, size + 1) == want,
             repr(r))
    return src, dst, size


def stats(ck, c, src, size):
    r = c.stat(src)
    a = c.getattr(src).attributes
    ck.check("FSTAT: total = the size, allocated = GETATTR's used",
             r.status == NFS3_OK and r.total_bytes == size and
             r.allocated_bytes == a.used, "%r, used %d" % (r, a.used))
    ck.check("FSTAT: 0 < unique <= allocated",
             r.status == NFS3_OK and 0 < r.unique_bytes <= r.allocated_bytes,
             repr(r))


def reserve(ck, c, root, backend):
    fh = c.create(root, "thin-flat.vmdk", mode=0o644).object
    c.write(fh, 0, b"keep me", FILE_SYNC)
    c.setattr(fh, size=4 * MIB)
    before = c.getattr(fh).attributes.used
    r = c.reserve(fh)
    if backend != "local":
        ck.check("FRESERVE on CephFS -> NFS3ERR_NOTSUPP, nothing changed",
                 r.status == NFS3ERR_NOTSUPP and
                 c.getattr(fh).attributes.used == before, repr(r))
        return
    after = c.getattr(fh).attributes
    ck.check("FRESERVE -> NFS3_OK, every byte allocated, size kept",
             r.status == NFS3_OK and after.used >= 4 * MIB and
             after.size == 4 * MIB, "%r used %d -> %d" % (r, before,
                                                          after.used))
    ck.check("... and the data is kept",
             c.read(fh, 0, 16).data == b"keep me" + b"\0" * 9)


def abort(ck, c, root):
    # A large, sparse source: reading its holes takes long enough to
    # abort in the middle.
    src = make_file(c, root, "big-flat.vmdk", {0: pattern(3, MIB)},
                    8 << 30)
    dst = c.create(root, "big-clone-flat.vmdk", mode=0o644).object
    r = c.clone(dst, src, "big-clone-flat.vmdk")
    ck.check("FCLONE of an 8 GiB source -> NFS3_OK", r.status == NFS3_OK,
             repr(r))
    r2 = c.clone(dst, src, "big-clone-flat.vmdk")
    ck.check("a second FCLONE into the same target -> refused "
             "(busy or exists)", r2.status != NFS3_OK, repr(r2))
    p = c.progress(dst)
    ck.check("FCLNPROC while it runs -> START or DOING",
             p.status == NFS3_OK and p.clone_flag in (v.CLONE_START,
                                                      v.CLONE_DOING),
             repr(p))
    r = c.abort(dst)
    ck.check("FCLNABORT while it runs -> NFS3_OK", r.status == NFS3_OK,
             repr(r))
    r, seen = wait_clone(c, dst, 60)
    ck.check("FCLNPROC after the abort -> an error, not COMPLETE",
             r is not None and r.status != NFS3_OK, "seen %r" % seen[-3:])
    ck.check("the aborted target is empty again", size_of(c, dst) == 0,
             "size %d" % size_of(c, dst))
    c.remove(root, "big-flat.vmdk")
    c.remove(root, "big-clone-flat.vmdk")


def refusals(ck, c, roots, src, size):
    root = roots["ds1"]
    # A target that holds data: refused, kept.
    # The log takes one refusal a second: the shell looks for this one.
    time.sleep(1.1)
    busy = c.create(root, "busy.txt", mode=0o644).object
    c.write(busy, 0, b"precious", FILE_SYNC)
    r = c.clone(busy, src, "busy.txt")
    ck.check("FCLONE onto a file with data -> NFS3ERR_EXIST, kept",
             r.status == NFS3ERR_EXIST and
             c.read(busy, 0, 100).data == b"precious", repr(r))
    # Outside the datastore: the source in ds2.
    other = make_file(c, roots["ds2"], "other.img", {0: b"x" * 4096}, 4096)
    dst = c.create(root, "cross.img", mode=0o644).object
    r = c.clone(dst, other, "cross.img")
    ck.check("FCLONE from another datastore -> NFS3ERR_XDEV, target empty",
             r.status == NFS3ERR_XDEV and size_of(c, dst) == 0, repr(r))
    # Not regular files.
    d = c.mkdir(root, "adir", mode=0o755).object
    r = c.clone(dst, d, "cross.img")
    ck.check("FCLONE from a directory -> NFS3ERR_ISDIR",
             r.status == NFS3ERR_ISDIR and size_of(c, dst) == 0, repr(r))
    ln = c.symlink(root, "alink", "src-flat.vmdk").object
    r = c.clone(dst, ln, "cross.img")
    ck.check("FCLONE from a symlink -> NFS3ERR_INVAL (not followed)",
             r.status == NFS3ERR_INVAL and size_of(c, dst) == 0, repr(r))
    r = c.clone(ln, src, "alink")
    ck.check("FCLONE onto a symlink -> NFS3ERR_INVAL",
             r.status == NFS3ERR_INVAL, repr(r))
    fifo = c.mknod(root, "afifo", NF3FIFO, mode=0o644)
    if fifo.status == NFS3_OK:
        r = c.clone(fifo.object, src, "afifo")
        ck.check("FCLONE onto a FIFO -> NFS3ERR_INVAL",
                 r.status == NFS3ERR_INVAL, repr(r))
    r = c.clone(src, src, "src-flat.vmdk")
    ck.check("FCLONE of a file onto itself -> refused, source kept",
             r.status != NFS3_OK and size_of(c, src) == size, repr(r))
    r = c.vaai(dst, v.FCLONE, None, "cross.img")
    ck.check("FCLONE without the source's handle -> NFS3ERR_INVAL",
             r.status == NFS3ERR_INVAL and size_of(c, dst) == 0, repr(r))
    # The read-only export refuses what changes files, answers the rest.
    ro = c.lookup(roots["ds3"], "empty.img").object
    ro_src = c.lookup(roots["ds3"], "data.img").object
    r = c.clone(ro, ro_src, "empty.img")
    ck.check("FCLONE in read-only ds3 -> NFS3ERR_ROFS",
             r.status == NFS3ERR_ROFS, repr(r))
    r = c.reserve(ro)
    ck.check("FRESERVE in read-only ds3 -> NFS3ERR_ROFS",
             r.status == NFS3ERR_ROFS, repr(r))
    r = c.abort(ro)
    ck.check("FCLNABORT in read-only ds3 -> NFS3ERR_ROFS",
             r.status == NFS3ERR_ROFS, repr(r))
    ck.check("FSTAT in read-only ds3 -> NFS3_OK",
             c.stat(ro_src).status == NFS3_OK)
    # Squashing: root is nobody in ds4 and may not read root's 0600 file.
    sq_src = c.lookup(roots["ds4"], "secret.img").object
    sq_dst = c.lookup(roots["ds4"], "empty.img").object
    r = c.clone(sq_dst, sq_src, "empty.img")
    ck.check("FCLONE of a 0600 file by squashed root -> NFS3ERR_ACCES, "
             "target empty",
             r.status == NFS3ERR_ACCES and size_of(c, sq_dst) == 0, repr(r))
    # Unknown and malformed commands: a clean error, 80 bytes of reply.
    time.sleep(1.1)  # and for this one
    for cmd in (9, 0, 0x7fffffff):
        r = c.vaai(root, cmd)
        ck.check("unknown command %d -> NFS3ERR_NOTSUPP with the reply data"
                 % cmd, r.status == NFS3ERR_NOTSUPP and
                 len(r.raw) == v.OUT_BYTES, repr(r))
    r = c.vaai_raw(v.encode_args(root, v.command(v.FSTAT)[:100]))
    ck.check("a 100-byte command -> NFS3ERR_INVAL", r.status == NFS3ERR_INVAL,
             repr(r))
    r = c.vaai_raw(v.encode_args(root, v.command(v.FSTAT, version=2)))
    ck.check("command version 2 -> NFS3ERR_INVAL", r.status == NFS3ERR_INVAL,
             repr(r))
    r = c.vaai(b"\x01" + b"\x55" * 31, v.FSTAT)
    ck.check("a forged handle -> NFS3ERR_BADHANDLE or STALE",
             r.status in (NFS3ERR_BADHANDLE, NFS3ERR_STALE), repr(r))
    r = c.progress(busy)
    ck.check("FCLNPROC of a file no clone made -> NFS3ERR_NOENT",
             r.status == NFS3ERR_NOENT, repr(r))


def client_rule(ck, c, nfs_port, mount_port):
    """ds5 keeps `secure`: the same call from a privileged port is served,
    from an unprivileged one refused, nothing written."""
    with MountClient((HOST, mount_port), src_port="priv") as m:
        root = m.mnt("/ds5").fhandle
    pc = v.VaaiClient((HOST, nfs_port), cred=auth_sys(0, 0),
                      src_port="priv")
    src = make_file(pc, root, "a.img", {0: pattern(5, 8192)}, 8192)
    dst = pc.create(root, "b.img", mode=0o644).object
    r = c.clone(dst, src, "b.img")
    ck.check("FCLONE from an unprivileged port into `secure` ds5 -> "
             "NFS3ERR_ACCES, target empty",
             r.status == NFS3ERR_ACCES and size_of(pc, dst) == 0, repr(r))
    r = c.stat(src)
    ck.check("FSTAT from an unprivileged port in ds5 -> NFS3ERR_ACCES",
             r.status == NFS3ERR_ACCES, repr(r))
    r = pc.clone(dst, src, "b.img")
    done, _ = wait_clone(pc, dst)
    ck.check("... the same FCLONE from a privileged port is served",
             r.status == NFS3_OK and done is not None and
             done.status == NFS3_OK and
             read_all(pc, dst, 8192) == pattern(5, 8192), repr(r))
    pc.close()


def quota(ck, c, root):
    """ds6 has a quota of 8 MiB: a clone of a 5 MiB file does not fit."""
    src = make_file(c, root, "five.img", {0: pattern(6, 5 * MIB)}, 5 * MIB)
    dst = c.create(root, "five-clone.img", mode=0o644).object
    r = c.clone(dst, src, "five-clone.img")
    ck.check("FCLONE past the datastore's quota -> NFS3ERR_NOSPC, result "
             "1004 (full), target empty",
             r.status == NFS3ERR_NOSPC and r.result == v.FS_FULL and
             size_of(c, dst) == 0, repr(r))


def rpc_level(ck, c, root):
    """Bodies XDR cannot take: GARBAGE_ARGS; procedure 23: PROC_UNAVAIL."""
    full = v.encode_args(root, v.command(v.FSTAT))
    for cut in (0, 3, len(full) // 2, len(full) - 4):
        try:
            c.vaai_raw(full[:cut])
            ok = False
        except RpcError as e:
            ok = e.kind == "accepted" and e.stat == 4
        ck.check("a body cut at %d bytes -> GARBAGE_ARGS" % cut, ok)
    try:
        c.vaai_raw(v.encode_args(root, b"\0" * 1025))
        ok = False
    except RpcError as e:
        ok = e.kind == "accepted" and e.stat == 4
    ck.check("a command of 1025 bytes -> GARBAGE_ARGS", ok)
    try:
        c.call_raw(23, full)
        ok = False
    except RpcError as e:
        ok = e.kind == "accepted" and e.stat == 3
    ck.check("procedure 23 -> PROC_UNAVAIL", ok)
    ck.check("the connection still serves (GETATTR)",
             c.getattr(root).status == NFS3_OK)


def main():
    nfs_port, mount_port, backend = sys.argv[1], sys.argv[2], sys.argv[3]
    ck = Checks()
    roots = {}
    with MountClient((HOST, int(mount_port))) as m:
        for ds in ("ds1", "ds2", "ds3", "ds4", "ds6"):
            roots[ds] = m.mnt("/" + ds).fhandle
    c = v.VaaiClient((HOST, int(nfs_port)), cred=auth_sys(0, 0))
    support(ck, c, roots, backend)
    src, _dst, size = full_clone(ck, c, roots["ds1"])
    stats(ck, c, src, size)
    reserve(ck, c, roots["ds1"], backend)
    abort(ck, c, roots["ds1"])
    refusals(ck, c, roots, src, size)
    client_rule(ck, c, int(nfs_port), int(mount_port))
    quota(ck, c, roots["ds6"])
    rpc_level(ck, c, roots["ds1"])
    c.close()
    ck.exit()


if __name__ == "__main__":
    main()
