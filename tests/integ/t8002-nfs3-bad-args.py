#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Damaged NFSv3 arguments over the wire (driven by t8002-nfs3-bad-args.sh).

    t8002-nfs3-bad-args.py NFS_PORT MOUNT_PORT

Arguments that do not decode as RFC 1813's XDR (or exceed the bounds of
nfsd/proto/nfs3_prot.x) get the RPC error GARBAGE_ARGS; arguments that
decode but name nothing the server issued get an nfsstat3.  After each
group a fresh connection must still be answered.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403

HOST = "127.0.0.1"
MiB = 1024 * 1024

# Valid arguments of every procedure but NULL: (first handle, builder).
# The builder takes that handle and returns the encoder's arguments.
VALID = {
    1: ("file", lambda fh: (fh,)),
    2: ("file", lambda fh: ((fh,), {"mode": 0o644, "guard_ctime": (1, 2)})),
    3: ("root", lambda fh: (fh, "file.txt")),
    4: ("file", lambda fh: (fh, ACCESS3_ALL)),
    5: ("link", lambda fh: (fh,)),
    6: ("file", lambda fh: (fh, 0, 100)),
    7: ("file", lambda fh: (fh, 0, b"abcdefgh", UNSTABLE)),
    8: ("root", lambda fh: ((fh, "c.txt", GUARDED), {"mode": 0o644})),
    9: ("root", lambda fh: ((fh, "d"), {"mode": 0o755})),
    10: ("root", lambda fh: (fh, "s", "target")),
    11: ("root", lambda fh: (fh, "p", NF3CHR, (1, 3))),
    12: ("root", lambda fh: (fh, "no-such")),
    13: ("root", lambda fh: (fh, "no-such")),
    14: ("root", lambda fh: (fh, "no-such", fh, "b")),
    15: ("file", lambda fh: (fh, fh, "l")),
    16: ("root", lambda fh: (fh, 0, ZERO_VERF, 4096)),
    17: ("root", lambda fh: (fh, 0, ZERO_VERF, 1024, 4096)),
    18: ("root", lambda fh: (fh,)),
    19: ("root", lambda fh: (fh,)),
    20: ("root", lambda fh: (fh,)),
    21: ("file", lambda fh: (fh, 0, 0)),
}


class Wire:
    """A raw NFSv3 connection that reports what a call got back."""

    def __init__(self, port, handles):
        self.port = port
        self.c = Nfs3Client((HOST, port))
        self.h = handles

    def encode(self, proc, fh=None):
        kind, build = VALID[proc]
        if fh is None:
            fh = self.h[kind]
        args = build(fh)
        if isinstance(args[-1], dict):
            return encode_args(proc, *args[0], **args[1])
        return encode_args(proc, *args)

    def outcome(self, proc, args):
        """-> "GARBAGE_ARGS" and the like, "closed", or the nfsstat3 name
        (the whole reply decoded with the procedure's decoder)."""
        try:
            u = self.c.call_raw(proc, args)
        except RpcError as e:
            return ACCEPT_STAT_NAMES.get(e.stat, str(e)) if e.kind == "accepted" else "denied"
        except ConnectionClosed:
            self.c.connect()
            return "closed"
        status = u.u32()
        try:
            NFS3_PROCS[proc][2](u, status)
            u.done()
        except XdrError as e:
            return "%s but a malformed reply (%s)" % (status_name(status), e)
        return status_name(status)


def fresh_null(port):
    """A new connection gets NULL answered."""
    try:
        with Nfs3Client((HOST, port), timeout=5) as c:
            c.null()
        return True
    except (ConnectionClosed, OSError, RpcError):
        return False


def raw_args(*items):
    """Hand-made arguments: ("u32", v), ("u64", v), ("fh", b), ("str", s),
    ("opaque_len", n, data): a length word and other bytes than it says."""
    p = Packer()
    for item in items:
        kind = item[0]
        if kind == "u32":
            p.u32(item[1])
        elif kind == "u64":
            p.u64(item[1])
        elif kind in ("fh", "str"):
            p.string(item[1])
        elif kind == "opaque_len":
            p.u32(item[1])
            p.raw(item[2])
    return p.bytes()


def test_truncated(ck, w):
    for proc in sorted(VALID):
        name = NFS3_PROC_NAMES[proc]
        full = w.encode(proc)
        whole = w.outcome(proc, full)
        bad = []
        cuts = sorted(set(range(0, len(full), 4)) | {len(full) - 1, len(full) - 3})
        for cut in cuts:
            got = w.outcome(proc, full[:cut])
            if got != "GARBAGE_ARGS":
                bad.append("%d of %d bytes: %s" % (cut, len(full), got))
        ck.check("%s: whole args decode (%s); all %d truncations -> GARBAGE_ARGS" %
                 (name, whole, len(cuts)), whole.startswith("NFS3") and not bad,
                 "; ".join(bad[:3]))
    ck.check("a fresh connection is answered", fresh_null(w.port))


def test_handles(ck, w):
    for proc in sorted(VALID):
        name = NFS3_PROC_NAMES[proc]
        got = w.outcome(proc, w.encode(proc, b"\x01" * 65))
        ck.check("%s with a 65-byte handle -> GARBAGE_ARGS" % name, got == "GARBAGE_ARGS", got)
        got = w.outcome(proc, w.encode(proc, b"\x01" * 64))
        ck.check("%s with a 64-byte handle -> NFS3ERR_BADHANDLE" % name,
                 got == "NFS3ERR_BADHANDLE", got)
    ck.check("a fresh connection is answered", fresh_null(w.port))
    for n in list(range(57, 64)) + [0]:
        got = w.outcome(1, w.encode(1, b"\x01" * n))
        ck.check("GETATTR with a %d-byte handle -> NFS3ERR_BADHANDLE" % n,
                 got == "NFS3ERR_BADHANDLE", got)
    for what, fh in (("tag", w.h["file"][:-1] + bytes([w.h["file"][-1] ^ 1])),
                     ("first byte", bytes([w.h["file"][0] ^ 0x80]) + w.h["file"][1:]),
                     ("middle byte", w.h["file"][:10] + bytes([w.h["file"][10] ^ 4]) +
                      w.h["file"][11:])):
        got = w.outcome(1, w.encode(1, fh))
        ck.check("GETATTR of a file handle with its %s changed -> NFS3ERR_BADHANDLE" % what,
                 got == "NFS3ERR_BADHANDLE", got)
    ck.check("a fresh connection is answered", fresh_null(w.port))


def test_write_sizes(ck, w):
    fh = w.h["file"]

    def write_args(length, data):
        return raw_args(("fh", fh), ("u64", 0), ("u32", length), ("u32", UNSTABLE),
                        ("opaque_len", length, data + b"\0" * xdr_pad(len(data))))

    got = w.outcome(7, write_args(MiB, b"w" * MiB))
    ck.check("WRITE of exactly 1 MiB (the bound) -> NFS3_OK", got == "NFS3_OK", got)
    got = w.outcome(7, write_args(MiB + 1, b"w" * (MiB + 1)))
    ck.check("WRITE of 1 MiB + 1 byte -> GARBAGE_ARGS", got == "GARBAGE_ARGS", got)
    ck.check("a fresh connection is answered", fresh_null(w.port))
    got = w.outcome(7, write_args(2 * MiB, b"w" * (2 * MiB)))
    ck.check("WRITE of 2 MiB -> GARBAGE_ARGS or a closed connection",
             got in ("GARBAGE_ARGS", "closed"), got)
    ck.check("a fresh connection is answered", fresh_null(w.port))
    got = w.outcome(7, write_args(0x7FFFFFFF, b"w" * 16))
    ck.check("WRITE whose data length says 2 GiB, with 16 bytes -> GARBAGE_ARGS",
             got == "GARBAGE_ARGS", got)
    got = w.outcome(7, write_args(0xFFFFFFFF, b"w" * 16))
    ck.check("WRITE whose data length says 4 GiB - 1 -> GARBAGE_ARGS", got == "GARBAGE_ARGS", got)
    ck.check("a fresh connection is answered", fresh_null(w.port))
    ck.check("the file is as big as the 1 MiB write made it",
             w.c.getattr(fh).attributes.size == MiB)


def test_names(ck, w):
    root, fh = w.h["root"], w.h["file"]
    for n, want in ((2000, "GARBAGE_ARGS"), (1025, "GARBAGE_ARGS"),
                    (1024, "NFS3ERR_NAMETOOLONG"), (256, "NFS3ERR_NAMETOOLONG")):
        name = "x" * n
        calls = [("LOOKUP", 3, (root, name)), ("CREATE", 8, (root, name, GUARDED)),
                 ("MKDIR", 9, (root, name)), ("SYMLINK", 10, (root, name, "t")),
                 ("MKNOD", 11, (root, name, NF3FIFO)), ("REMOVE", 12, (root, name)),
                 ("RMDIR", 13, (root, name)), ("RENAME from", 14, (root, name, root, "b")),
                 ("RENAME to", 14, (root, "file.txt", root, name)),
                 ("LINK", 15, (fh, root, name))]
        bad = []
        for what, proc, args in calls:
            got = w.outcome(proc, encode_args(proc, *args))
            if got != want:
                bad.append("%s: %s" % (what, got))
        ck.check("a %d-byte name in all %d calls that take one -> %s" % (n, len(calls), want),
                 not bad, "; ".join(bad))
    ck.check("a fresh connection is answered", fresh_null(w.port))
    for n, want in ((4097, "GARBAGE_ARGS"), (1025, "NFS3ERR_NAMETOOLONG")):
        got = w.outcome(10, encode_args(10, root, "s%d" % n, "t" * n))
        ck.check("SYMLINK with a %d-byte target -> %s" % (n, want), got == want, got)
    # A C string ends at the first NUL: "file.txt\0junk" must not be
    # taken for "file.txt".
    for what, proc, args in (("LOOKUP", 3, (root, "file.txt\0junk")),
                             ("CREATE", 8, (root, "new\0junk", GUARDED)),
                             ("MKDIR", 9, (root, "newd\0junk")),
                             ("REMOVE", 12, (root, "victim.txt\0junk")),
                             ("RENAME", 14, (root, "victim.txt\0junk", root, "moved")),
                             ("LINK", 15, (fh, root, "hl\0junk")),
                             ("SYMLINK target", 10, (root, "nul-link", "file.txt\0junk"))):
        got = w.outcome(proc, encode_args(proc, *args))
        ck.check("%s of a name with a NUL byte -> GARBAGE_ARGS" % what, got == "GARBAGE_ARGS", got)
    ck.check("a fresh connection is answered", fresh_null(w.port))


def test_enums(ck, w):
    root, fh = w.h["root"], w.h["file"]
    args = raw_args(("fh", root), ("str", "how3"), ("u32", 3), ("u32", 0), ("u32", 0),
                    ("u32", 0), ("u32", 0), ("u32", 0), ("u32", 0))
    got = w.outcome(8, args)
    ck.check("CREATE with createmode3 3 (no such arm) -> GARBAGE_ARGS", got == "GARBAGE_ARGS", got)
    got = w.outcome(11, raw_args(("fh", root), ("str", "t99"), ("u32", 99)))
    ck.check("MKNOD of ftype3 99 -> NFS3ERR_BADTYPE", got == "NFS3ERR_BADTYPE", got)
    got = w.outcome(7, encode_args(7, fh, 0, b"x", 3))
    ck.check("WRITE with stable_how 3 -> NFS3ERR_INVAL", got == "NFS3ERR_INVAL", got)
    args = raw_args(("fh", fh), ("u32", 0), ("u32", 0), ("u32", 0), ("u32", 0),
                    ("u32", 3), ("u32", 0), ("u32", 0))
    got = w.outcome(2, args)
    ck.check("SETATTR with time_how 3 -> NFS3ERR_INVAL", got == "NFS3ERR_INVAL", got)
    ck.check("a fresh connection is answered", fresh_null(w.port))


def test_mount(ck, mount_port, nfs_port):
    with MountClient((HOST, mount_port)) as m:
        for what, args, want in (("truncated MNT path", raw_args(("u32", 8)) + b"/ds", "GARBAGE_ARGS"),
                                 ("MNT path of 1025 bytes", raw_args(("str", "/" * 1025)),
                                  "GARBAGE_ARGS")):
            try:
                m.call(1, args)
                got = "SUCCESS"
            except RpcError as e:
                got = ACCEPT_STAT_NAMES.get(e.stat, str(e))
            ck.check("%s -> %s" % (what, want), got == want, got)
        try:
            got = m.mnt("/ds1\0junk").status
        except RpcError as e:
            got = ACCEPT_STAT_NAMES.get(e.stat, str(e))
        ck.check("MNT '/ds1\\0junk' -> MNT3ERR_NOENT or GARBAGE_ARGS",
                 got in (MNT3ERR_NOENT, "GARBAGE_ARGS"), "got %s" % got)
        m.umntall()
    ck.check("a fresh NFS connection is answered", fresh_null(nfs_port))


def main():
    nfs_port, mount_port = int(sys.argv[1]), int(sys.argv[2])
    ck = Checks()
    with MountClient((HOST, mount_port)) as m:
        root = m.mnt("/ds1").fhandle
    c = Nfs3Client((HOST, nfs_port))
    handles = {"root": root, "file": c.walk(root, "file.txt"), "link": c.walk(root, "link")}
    c.close()
    w = Wire(nfs_port, handles)
    for group in (test_truncated, test_handles, test_write_sizes, test_names, test_enums):
        print("%s:" % group.__name__[5:])
        group(ck, w)
    print("mount:")
    test_mount(ck, mount_port, nfs_port)
    ck.exit()


if __name__ == "__main__":
    main()
