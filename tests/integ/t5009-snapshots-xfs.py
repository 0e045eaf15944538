#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Datastore snapshots seen over NFS (driven by t5009-snapshots-xfs.sh).

    t5009-snapshots-xfs.py before  NFS_PORT MOUNT_PORT STATE_JSON
    t5009-snapshots-xfs.py after   NFS_PORT MOUNT_PORT STATE_JSON
    t5009-snapshots-xfs.py hidden  NFS_PORT MOUNT_PORT
    t5009-snapshots-xfs.py shown   NFS_PORT MOUNT_PORT

"before" (snapshot s1 of /ds1 taken, then keep.txt rewritten, new.txt
made and gone.txt removed) reads the live files and the snapshot's
through .snapshot, finds the snapshot read-only, and keeps the handles.
"after" (s1 restored) uses those handles: keep.txt's reads the
snapshot's data, new.txt's is STALE, gone.txt is back under a new handle.
"hidden" / "shown" check /ds3, whose snapshot_dir is off / on.
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (FILE_SYNC, NFS3_OK, NFS3ERR_ACCES, NFS3ERR_NOENT,  # noqa: E402
                      NFS3ERR_ROFS, NFS3ERR_STALE, Checks, MountClient,
                      Nfs3Client)

HOST = "127.0.0.1"


def names(c, fh):
    entries, _ = c.readdir_all(fh)
    return {e.name for e in entries}


def before(ck, c, m, state):
    root = m.mnt("/ds1").fhandle
    h = {}
    for name in ("keep.txt", "new.txt"):
        r = c.lookup(root, name)
        ck.status("LOOKUP %s" % name, r, NFS3_OK)
        h[name] = r.object
    r = c.read(h["keep.txt"], 0, 100)
    ck.check("keep.txt reads as rewritten", r.status == NFS3_OK and r.data == b"v2\n")
    ck.check("READDIR of the root lists .snapshot (snapshot_dir on)",
             ".snapshot" in names(c, root))
    r = c.lookup(root, ".snapshot")
    ck.status("LOOKUP .snapshot", r, NFS3_OK)
    area = r.object
    ck.check("READDIR .snapshot lists s1", names(c, area) >= {"s1"})
    snap = c.lookup(area, "s1").object
    ck.check("the snapshot holds keep.txt, gone.txt, vm1, not new.txt",
             {"keep.txt", "gone.txt", "vm1"} <= names(c, snap) and "new.txt" not in names(c, snap))
    old = c.lookup(snap, "keep.txt").object
    r = c.read(old, 0, 100)
    ck.check("its keep.txt reads as it was", r.status == NFS3_OK and r.data == b"v1\n")
    r = c.write(old, 0, b"x", FILE_SYNC)
    ck.status("WRITE to a snapshot's file (the NFS layer: ROFS)", r, NFS3ERR_ROFS)
    r = c.create(snap, "more.txt")
    ck.status("CREATE in a snapshot", r, NFS3ERR_ROFS)
    r = c.remove(snap, "keep.txt")
    ck.status("REMOVE in a snapshot", r, NFS3ERR_ROFS)
    r = c.rmdir(area, "s1")
    ck.status("RMDIR of a snapshot", r, NFS3ERR_ROFS)
    r = c.rename(root, ".snapshot", root, "x")
    ck.status("RENAME of .snapshot", r, NFS3ERR_ACCES)
    r = c.rmdir(root, ".snapshot")
    ck.status("RMDIR of .snapshot", r, NFS3ERR_ACCES)
    attr = c.getattr(h["keep.txt"])
    state.update({"root": root.hex(), "handles": {k: v.hex() for k, v in h.items()},
                  "keep_fileid": attr.attributes.fileid})


def after(ck, c, state):
    root = bytes.fromhex(state["root"])
    h = {k: bytes.fromhex(v) for k, v in state["handles"].items()}
    r = c.getattr(h["keep.txt"])
    ck.status("old handle of keep.txt after the restore: GETATTR", r, NFS3_OK)
    ck.check("... same fileid (the file was reverted in place)",
             r.status == NFS3_OK and r.attributes.fileid == state["keep_fileid"])
    r = c.read(h["keep.txt"], 0, 100)
    ck.check("... READ gives the snapshot's data",
             r.status == NFS3_OK and r.data == b"v1\n", repr(getattr(r, "data", None)))
    r = c.read(h["new.txt"], 0, 100)
    ck.status("old handle of new.txt (made after the snapshot): READ", r, NFS3ERR_STALE)
    r = c.lookup(root, "new.txt")
    ck.status("LOOKUP new.txt", r, NFS3ERR_NOENT)
    r = c.lookup(root, "gone.txt")
    ck.status("gone.txt (removed after the snapshot) is back", r, NFS3_OK)
    if r.status == NFS3_OK:
        d = c.read(r.object, 0, 100)
        ck.check("... with its data", d.status == NFS3_OK and d.data == b"gone\n")
    w = c.write(h["keep.txt"], 3, b"v3\n", FILE_SYNC)
    ck.status("the live keep.txt takes writes again", w, NFS3_OK)


def hidden(ck, c, m):
    root = m.mnt("/ds3").fhandle
    ck.check("snapshot_dir off: READDIR of the root leaves .snapshot out",
             ".snapshot" not in names(c, root) and "a.txt" in names(c, root))
    r = c.lookup(root, ".snapshot")
    ck.status("snapshot_dir off: LOOKUP .snapshot", r, NFS3ERR_NOENT)
    r = c.create(root, ".snapshot")
    ck.status("snapshot_dir off: CREATE .snapshot", r, NFS3ERR_ACCES)
    r = c.mkdir(root, ".snapshot")
    ck.status("snapshot_dir off: MKDIR .snapshot", r, NFS3ERR_ACCES)


def shown(ck, c, m):
    root = m.mnt("/ds3").fhandle
    r = c.lookup(root, ".snapshot")
    ck.status("snapshot_dir on (after SIGHUP): LOOKUP .snapshot", r, NFS3_OK)
    ck.check("... READDIR lists it", ".snapshot" in names(c, root))


def main():
    phase, nfs_port, mount_port = sys.argv[1:4]
    ck = Checks()
    c = Nfs3Client((HOST, int(nfs_port)))
    with MountClient((HOST, int(mount_port))) as m:
        if phase == "before":
            state = {}
            before(ck, c, m, state)
            with open(sys.argv[4], "w") as f:
                json.dump(state, f)
        elif phase == "after":
            with open(sys.argv[4]) as f:
                after(ck, c, json.load(f))
        elif phase == "hidden":
            hidden(ck, c, m)
        else:
            shown(ck, c, m)
    c.close()
    ck.exit()


if __name__ == "__main__":
    main()
