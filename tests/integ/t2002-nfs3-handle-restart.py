#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""File handles across a dsnfsd restart (driven by t2002-nfs3-handle-restart.sh).

    t2002-nfs3-handle-restart.py before NFS_PORT MOUNT_PORT STATE_JSON DS1_DIR
    t2002-nfs3-handle-restart.py after  NFS_PORT MOUNT_PORT STATE_JSON DS1_DIR

"before" mounts /ds1, looks files up, reads them, writes once and keeps
the handles, the bytes and the write verifier in STATE_JSON.  Between the
phases the shell stops dsnfsd, deletes and renames files behind its back
and starts it again, on other ports.  "after" uses the old handles on a
new connection without mounting again.
"""
import hashlib
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (FILE_SYNC, NFS3_OK, NFS3ERR_STALE, UNSTABLE,  # noqa: E402
                      Checks, MountClient, Nfs3Client, retry_jukebox)

HOST = "127.0.0.1"


def read_all(c, fh, size):
    """READ the whole file in 64 KiB calls -> its bytes, or None."""
    data, off = b"", 0
    while True:
        r = c.read(fh, off, 65536)
        if r.status != NFS3_OK:
            return None
        data += r.data
        off += r.count
        if r.eof or off >= size + 1:
            return data


def before(ck, c, m, state, ds1):
    mnt = m.mnt("/ds1")
    ck.check("MNT /ds1", mnt.status == 0)
    root = mnt.fhandle
    handles = {}
    for name in ("keep.bin", "gone.txt", "old-name.txt", "nfs-old.txt", "sub"):
        r = c.lookup(root, name)
        ck.status("LOOKUP %s" % name, r, NFS3_OK)
        handles[name] = r.object
    r = c.lookup(handles["sub"], "inner.txt")
    ck.status("LOOKUP sub/inner.txt", r, NFS3_OK)
    handles["sub/inner.txt"] = r.object
    with open(os.path.join(ds1, "keep.bin"), "rb") as f:
        want = f.read()
    data = read_all(c, handles["keep.bin"], len(want))
    ck.check("READ keep.bin gives the file's bytes", data == want)
    attr = c.getattr(handles["keep.bin"])
    ck.status("GETATTR keep.bin", attr, NFS3_OK)
    # A rename through the server while it runs: the handle stays good.
    r = c.rename(root, "nfs-old.txt", root, "nfs-new.txt")
    ck.status("RENAME nfs-old.txt nfs-new.txt", r, NFS3_OK)
    w = c.write(handles["keep.bin"], len(want), b"tail", FILE_SYNC)
    ck.status("WRITE FILE_SYNC before the restart", w, NFS3_OK)
    u = c.write(handles["keep.bin"], len(want) + 4, b"more", UNSTABLE)
    ck.status("WRITE UNSTABLE before the restart", u, NFS3_OK)
    ck.check("one verifier for every WRITE of one server run", w.verf == u.verf)
    cm = c.commit(handles["keep.bin"])
    ck.check("COMMIT answers the same verifier", cm.status == NFS3_OK and cm.verf == w.verf)
    state.update({
        "root": root.hex(),
        "handles": {k: v.hex() for k, v in handles.items()},
        "keep_sha": hashlib.sha256(want + b"tailmore").hexdigest(),
        "keep_size": len(want) + 8,
        "keep_fileid": attr.attributes.fileid,
        "verf": w.verf.hex(),
    })


def after(ck, c, state, ds1):
    root = bytes.fromhex(state["root"])
    h = {k: bytes.fromhex(v) for k, v in state["handles"].items()}
    r = c.getattr(root)
    ck.status("old root handle: GETATTR", r, NFS3_OK)
    r = c.getattr(h["keep.bin"])
    ck.status("old handle of keep.bin: GETATTR", r, NFS3_OK)
    ck.check("same fileid and size as before the restart",
             r.status == NFS3_OK and r.attributes.fileid == state["keep_fileid"]
             and r.attributes.size == state["keep_size"],
             "got %r" % (r.__dict__.get("attributes"),))
    data = read_all(c, h["keep.bin"], state["keep_size"])
    ck.check("old handle of keep.bin: READ gives the same bytes",
             data is not None and hashlib.sha256(data).hexdigest() == state["keep_sha"])
    # JUKEBOX means "ask again" (the server ran out of memory or
    # descriptors: its log names which); a client that does, as the
    # kernel's does, must then hear STALE.
    for name in ("gone.txt",):
        for what, call in (
                ("GETATTR", lambda: c.getattr(h[name])),
                ("READ", lambda: c.read(h[name], 0, 10)),
                ("WRITE", lambda: c.write(h[name], 0, b"x", FILE_SYNC))):
            r, jukeboxes = retry_jukebox(call)
            if jukeboxes:
                print("  note: %s of %s answered JUKEBOX %d time(s) first"
                      % (what, name, jukeboxes))
            ck.status("handle of %s, deleted while down: %s" % (name, what),
                      r, NFS3ERR_STALE)
    r = c.read(h["old-name.txt"], 0, 100)
    ck.status("handle of a file renamed while down: READ", r, NFS3_OK)
    ck.check("... gives its bytes", r.status == NFS3_OK and r.data == b"renamed behind the server\n")
    r = c.read(h["nfs-old.txt"], 0, 100)
    ck.status("handle of a file renamed over NFS: READ", r, NFS3_OK)
    ck.check("... gives its bytes", r.status == NFS3_OK and r.data == b"renamed over nfs\n")
    r = c.lookup(h["sub"], "inner.txt")
    ck.status("old directory handle: LOOKUP inner.txt", r, NFS3_OK)
    ck.check("... gives the same handle as before", r.status == NFS3_OK and r.object == h["sub/inner.txt"])
    r = c.getattr(h["sub/inner.txt"])
    ck.status("old handle of sub/inner.txt: GETATTR", r, NFS3_OK)
    r = c.lookup(root, "nfs-new.txt")
    ck.check("LOOKUP of the new name gives the old handle",
             r.status == NFS3_OK and r.object == h["nfs-old.txt"])
    w = c.write(h["keep.bin"], 0, b"K", FILE_SYNC)
    ck.status("WRITE after the restart", w, NFS3_OK)
    ck.check("the write verifier changed across the restart",
             w.status == NFS3_OK and w.verf.hex() != state["verf"],
             "before %s after %s" % (state["verf"], w.__dict__.get("verf", b"").hex()))
    with open(os.path.join(ds1, "keep.bin"), "rb") as f:
        ck.check("the WRITE reached the file", f.read(1) == b"K")


def main():
    phase, nfs_port, mount_port, state_path, ds1 = sys.argv[1:6]
    ck = Checks()
    c = Nfs3Client((HOST, int(nfs_port)))
    if phase == "before":
        state = {}
        with MountClient((HOST, int(mount_port))) as m:
            before(ck, c, m, state, ds1)
        with open(state_path, "w") as f:
            json.dump(state, f)
    else:
        with open(state_path) as f:
            state = json.load(f)
        after(ck, c, state, ds1)
    c.close()
    ck.exit()


if __name__ == "__main__":
    main()
