#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exports across a SIGHUP (driven by t1001-config-reload-exports.sh).

    t1001-config-reload-exports.py before NFS_PORT MOUNT_PORT STATE_JSON
    t1001-config-reload-exports.py after  NFS_PORT MOUNT_PORT STATE_JSON

"before" mounts /ds3 (read-write) and /ds4, writes to ds3 and keeps the
root handles in STATE_JSON.  Between the phases the shell changes the
config (ds3 read-only, ds4 gone, ds5 new) and sends SIGHUP.  "after" uses
the old handles without mounting again: ds3's still work but refuse
writes, ds4's are STALE; MNT finds ds5 and no longer ds4.
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (FILE_SYNC, MNT3_OK, MNT3ERR_NOENT, NFS3_OK,  # noqa: E402
                      NFS3ERR_ROFS, NFS3ERR_STALE, Checks, MountClient,
                      Nfs3Client)

HOST = "127.0.0.1"


def before(ck, c, m, state):
    roots = {}
    for ds in ("ds3", "ds4"):
        r = m.mnt("/" + ds)
        ck.check("MNT /%s" % ds, r.status == MNT3_OK)
        roots[ds] = r.fhandle
    r = c.lookup(roots["ds3"], "hello.txt")
    ck.status("LOOKUP ds3/hello.txt", r, NFS3_OK)
    w = c.write(r.object, 0, b"H", FILE_SYNC)
    ck.status("WRITE to ds3 while it is read-write", w, NFS3_OK)
    state["roots"] = {k: v.hex() for k, v in roots.items()}
    state["file"] = r.object.hex()


def after(ck, c, m, state):
    roots = {k: bytes.fromhex(v) for k, v in state["roots"].items()}
    f = bytes.fromhex(state["file"])
    ck.status("old ds3 root handle: GETATTR", c.getattr(roots["ds3"]), NFS3_OK)
    ck.status("old ds3 file handle: READ", c.read(f, 0, 10), NFS3_OK)
    ck.status("old ds3 file handle: WRITE, now read-only",
              c.write(f, 0, b"X", FILE_SYNC), NFS3ERR_ROFS)
    ck.status("old ds4 root handle, export removed: GETATTR",
              c.getattr(roots["ds4"]), NFS3ERR_STALE)
    ck.status("old ds4 root handle, export removed: LOOKUP",
              c.lookup(roots["ds4"], "four.txt"), NFS3ERR_STALE)
    ck.check("MNT /ds4 after its removal -> MNT3ERR_NOENT",
             m.mnt("/ds4").status == MNT3ERR_NOENT)
    r = m.mnt("/ds5")
    ck.check("MNT /ds5, added by the reload", r.status == MNT3_OK)
    if r.status == MNT3_OK:
        ck.status("LOOKUP ds5/five.txt", c.lookup(r.fhandle, "five.txt"),
                  NFS3_OK)
    names = [e.dir for e in m.export()]
    ck.check("EXPORT lists ds5 and not ds4",
             "/ds5" in names and "/ds4" not in names, "got %r" % names)


def main():
    phase, nfs_port, mount_port, state_path = sys.argv[1:5]
    ck = Checks()
    c = Nfs3Client((HOST, int(nfs_port)))
    with MountClient((HOST, int(mount_port))) as m:
        if phase == "before":
            state = {}
            before(ck, c, m, state)
            with open(state_path, "w") as fp:
                json.dump(state, fp)
        else:
            with open(state_path) as fp:
                state = json.load(fp)
            after(ck, c, m, state)
    c.close()
    ck.exit()


if __name__ == "__main__":
    main()
