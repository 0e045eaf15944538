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
