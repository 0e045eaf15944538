#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""vaainas: a VAAI-NAS in-band client (NFSv3 procedure 22), standard library
only, on nfs3wire's RPC client.  Written from the layout docs/vaai-nas.md
derives from the public ESXi plug-in (Huawei/soda_vmware_plugin): the call's
XDR is the handle the command is about, a union (0: the source's handle
follows, 1: nothing) and an opaque<1024> command; the command is the
plug-in's 296-byte C structure, the reply an nfsstat3 and its 80-byte one,
both little endian (an x86-64 host's memory).

    c = VaaiClient(("127.0.0.1", nfs_port))
    r = c.clone(dst_fh, src_fh, "vm2/disk-flat.vmdk")
    while c.progress(dst_fh).clone_flag != CLONE_COMPLETE: ...
"""
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import Nfs3Client, Packer  # noqa: E402

PROC = 22
VERSION = 1
SRC_FH, SRC_NONE = 0, 1
FCLONE, FRESERVE, FSTAT, FCLNPROC, FCLNABORT = 1, 2, 3, 4, 5
CLN_SUPPORT, RSV_SUPPORT, STAT_SUPPORT = 6, 7, 8
SUPPORTED, NOT_SUPPORTED = 0, 1
FS_BUSY, FS_FULL = 1003, 1004
CLONE_START, CLONE_DOING, CLONE_COMPLETE = 0, 1, 2
CMD_BYTES, OUT_BYTES, NAME_BYTES = 296, 80, 256


def command(cmd, name="", flags=0, version=VERSION):
    """The plug-in's request structure: version (u64), command (u32), pad,
    clone flags (u32), name length with its NUL (u32), name[256], two
    reserved u64."""
    raw = name.encode()
    if len(raw) >= NAME_BYTES:
        raise ValueError("name too long")
    name_len = len(raw) + 1 if raw else 0
    body = struct.pack("<QIIII", version, cmd, 0, flags, name_len)
    body += raw.ljust(NAME_BYTES, b"\0") + b"\0" * 16
    assert len(body) == CMD_BYTES
    return body


def encode_args(dst_fh, cmd_bytes, src_fh=None):
    p = Packer()
    p.opaque(dst_fh)
    if src_fh is None:
        p.u32(SRC_NONE)
    else:
        p.u32(SRC_FH)
        p.opaque(src_fh)
    p.opaque(cmd_bytes)
    return p.bytes()


class Reply:
    """status (nfsstat3) and the reply data's fields; raw holds its bytes."""

    FIELDS = ("version", "cmd", "result", "total_bytes", "allocated_bytes",
              "unique_bytes", "clone_flag", "clone_offset")

    def __init__(self, status, raw):
        self.status = status
        self.raw = raw
        if len(raw) == OUT_BYTES:
            v = struct.unpack_from("<QIiQQQ8xQQ", raw)
            for k, x in zip(self.FIELDS, v):
                setattr(self, k, x)
        else:
            for k in self.FIELDS:
                setattr(self, k, None)

    def __repr__(self):
        return "Reply(status=%d, %s)" % (self.status, ", ".join(
            "%s=%s" % (k, getattr(self, k)) for k in self.FIELDS))


class VaaiClient(Nfs3Client):
    """An NFSv3 client that also speaks procedure 22."""

    def vaai_raw(self, args):
        u = self.call_raw(PROC, args)
        status = u.i32()
        raw = u.opaque(1024)
        u.done()
        return Reply(status, raw)

    def vaai(self, dst_fh, cmd, src_fh=None, name="", flags=0):
        return self.vaai_raw(encode_args(dst_fh, command(cmd, name, flags),
                                         src_fh))

    def clone(self, dst_fh, src_fh, name, flags=0):
        return self.vaai(dst_fh, FCLONE, src_fh, name, flags)

    def progress(self, dst_fh):
        return self.vaai(dst_fh, FCLNPROC)

    def abort(self, dst_fh):
        return self.vaai(dst_fh, FCLNABORT)

    def stat(self, fh):
        return self.vaai(fh, FSTAT)

    def reserve(self, fh):
        return self.vaai(fh, FRESERVE)

    def supported(self, root_fh, which):
        return self.vaai(root_fh, which)


# ---------------------------------------------------------------------------
# A command line for the lab (docs/labs.md, lab 9):
#   vaainas.py [--nfs-port P] [--mount-port P] clone /ds1 SRC DST
#   vaainas.py [--nfs-port P] [--mount-port P] stat /ds1 PATH
# Paths are inside the datastore ("vm1/disk-flat.vmdk").  clone does what
# the plug-in does: CREATE the target, FCLONE, FCLNPROC until COMPLETE.
# ---------------------------------------------------------------------------


def _walk(c, root, path):
    fh = root
    for part in [p for p in path.split("/") if p]:
        r = c.lookup(fh, part)
        if r.status:
            raise SystemExit("LOOKUP %s: status %d" % (part, r.status))
        fh = r.object
    return fh


def main(argv):
    import argparse
    import time
    from nfs3wire import MountClient, auth_sys

    ap = argparse.ArgumentParser(description="VAAI-NAS in-band client")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--nfs-port", type=int, default=2049)
    ap.add_argument("--mount-port", type=int, default=20048)
    ap.add_argument("op", choices=("clone", "stat"))
    ap.add_argument("export")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args(argv)
    with MountClient((a.host, a.mount_port)) as m:
        root = m.mnt(a.export).fhandle
    c = VaaiClient((a.host, a.nfs_port), cred=auth_sys(0, 0))
    if a.op == "stat":
        print(c.stat(_walk(c, root, a.paths[0])))
        return 0
    src_path, dst_path = a.paths[0], a.paths[1]
    src = _walk(c, root, src_path)
    parent, _, name = dst_path.rpartition("/")
    dir_fh = _walk(c, root, parent)
    t0 = time.time()
    r = c.create(dir_fh, name, how=1, mode=0o644)  # GUARDED: a new file
    if r.status:
        raise SystemExit("CREATE %s: status %d" % (dst_path, r.status))
    dst = r.object
    r = c.clone(dst, src, dst_path)
    if r.status:
        raise SystemExit("FCLONE: %r" % r)
    while True:
        r = c.progress(dst)
        if r.status or r.clone_flag == CLONE_COMPLETE:
            break
        time.sleep(0.05)
    if r.status:
        raise SystemExit("FCLNPROC: %r" % r)
    print("cloned %s -> %s: %d bytes in %.2f s" %
          (src_path, dst_path, r.clone_offset, time.time() - t0))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
