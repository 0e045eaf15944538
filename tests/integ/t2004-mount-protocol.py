#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""MOUNT v3 (RFC 1813 5.2) over TCP and UDP (driven by t2004-mount-protocol.sh).

    t2004-mount-protocol.py open       NFS_PORT MOUNT_PORT STATE_JSON
    t2004-mount-protocol.py restricted NFS_PORT MOUNT_PORT STATE_JSON

"open": every export allows 127.0.0.1.  MNT, EXPORT, DUMP, UMNT and
UMNTALL over both transports; the handles of ds2 are kept in STATE_JSON.
"restricted": dsnfsd runs again with ds2 limited to 10.9.9.0/24.  MNT of
/ds2 is MNT3ERR_ACCES, and the ds2 handles taken before (handles survive
restarts) get NFS3ERR_ACCES on every NFS call; ds1 is unaffected.
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import *  # noqa: E402,F401,F403

HOST = "127.0.0.1"
ME = "127.0.0.1"


def mounts_of(m, host=ME):
    return sorted(b.directory for b in m.dump() if b.hostname == host)


def open_phase(ck, nfs_port, mount_port, state):
    roots = {}
    for proto in ("tcp", "udp"):
        with MountClient((HOST, mount_port), proto=proto) as m:
            m.null()
            ck.check("%s: NULL" % proto, True)
            r = m.mnt("/ds1")
            ck.check("%s: MNT /ds1 -> MNT3_OK" % proto, r.status == MNT3_OK, repr(r))
            ck.check("%s: ... a root handle of 1..56 bytes" % proto,
                     r.status == MNT3_OK and 0 < len(r.fhandle) <= 56)
            ck.check("%s: ... auth flavors include AUTH_SYS" % proto,
                     r.status == MNT3_OK and AUTH_SYS in r.auth_flavors,
                     repr(getattr(r, "auth_flavors", None)))
            roots.setdefault("ds1", set()).add(r.fhandle)
            for path in ("/nope", "/", "", "/ds1x", "ds1"):
                r = m.mnt(path)
                ck.check("%s: MNT %r -> MNT3ERR_NOENT" % (proto, path),
                         r.status == MNT3ERR_NOENT, "got %d" % r.status)
            ex = m.export()
            ck.check("%s: EXPORT lists /ds1 and /ds2" % proto,
                     sorted(e.dir for e in ex) == ["/ds1", "/ds2"], repr(ex))
            ck.check("%s: DUMP shows our mount of /ds1" % proto, "/ds1" in mounts_of(m),
                     repr(m.dump()))
            m.umnt("/ds1")
            ck.check("%s: UMNT /ds1 removes it from DUMP" % proto, "/ds1" not in mounts_of(m),
                     repr(m.dump()))
            m.umnt("/nope")
            ck.check("%s: UMNT of an unknown path is answered" % proto, True)
            for path in ("/ds1", "/ds2"):
                r = m.mnt(path)
                roots.setdefault(path[1:], set()).add(r.fhandle)
            ck.check("%s: DUMP shows /ds1 and /ds2" % proto,
                     mounts_of(m) == ["/ds1", "/ds2"], repr(m.dump()))
            m.umntall()
            ck.check("%s: UMNTALL empties our part of DUMP" % proto, mounts_of(m) == [],
                     repr(m.dump()))
    ck.check("TCP and UDP give the same root handles",
             len(roots["ds1"]) == 1 and len(roots["ds2"]) == 1)
    root1, root2 = roots["ds1"].pop(), roots["ds2"].pop()
    with Nfs3Client((HOST, nfs_port)) as c:
        r = c.getattr(root1)
        ck.check("the MNT handle of /ds1 is a directory over NFS",
                 r.status == NFS3_OK and r.attributes.type == NF3DIR)
        r = c.lookup(root2, "file2.txt")
        ck.status("LOOKUP file2.txt in ds2", r, NFS3_OK)
        f2 = r.object
        ck.status("READ of it while ds2 allows us", c.read(f2, 0, 100), NFS3_OK)
    state.update(root1=root1.hex(), root2=root2.hex(), file2=f2.hex())


def restricted_phase(ck, nfs_port, mount_port, state):
    root1, root2 = bytes.fromhex(state["root1"]), bytes.fromhex(state["root2"])
    f2 = bytes.fromhex(state["file2"])
    for proto in ("tcp", "udp"):
        with MountClient((HOST, mount_port), proto=proto) as m:
            r = m.mnt("/ds2")
            ck.check("%s: MNT /ds2 from 127.0.0.1 -> MNT3ERR_ACCES" % proto,
                     r.status == MNT3ERR_ACCES, "got %d" % r.status)
            r = m.mnt("/ds1")
            ck.check("%s: MNT /ds1 still -> MNT3_OK, same handle" % proto,
                     r.status == MNT3_OK and r.fhandle == root1)
            ck.check("%s: DUMP has /ds1 only" % proto, mounts_of(m) == ["/ds1"], repr(m.dump()))
            ex = {e.dir: e.groups for e in m.export()}
            ck.check("%s: EXPORT names ds2's clients" % proto,
                     ex.get("/ds2") == ["10.9.9.0/24"], repr(ex))
            m.umntall()
    with Nfs3Client((HOST, nfs_port)) as c:
        ck.status("GETATTR of ds2's root (old handle)", c.getattr(root2), NFS3ERR_ACCES)
        ck.status("LOOKUP in ds2's root", c.lookup(root2, "file2.txt"), NFS3ERR_ACCES)
        ck.status("READDIR of ds2's root", c.readdir(root2), NFS3ERR_ACCES)
        ck.status("READDIRPLUS of ds2's root", c.readdirplus(root2), NFS3ERR_ACCES)
        ck.status("FSINFO of ds2", c.fsinfo(root2), NFS3ERR_ACCES)
        ck.status("READ of ds2's file", c.read(f2, 0, 100), NFS3ERR_ACCES)
        ck.status("WRITE to ds2's file", c.write(f2, 0, b"x", FILE_SYNC), NFS3ERR_ACCES)
        ck.status("COMMIT of ds2's file", c.commit(f2), NFS3ERR_ACCES)
        ck.status("CREATE in ds2", c.create(root2, "new.txt", GUARDED), NFS3ERR_ACCES)
        ck.status("REMOVE in ds2", c.remove(root2, "file2.txt"), NFS3ERR_ACCES)
        ck.status("GETATTR of ds1's root", c.getattr(root1), NFS3_OK)


def main():
    phase, nfs_port, mount_port, state_path = sys.argv[1:5]
    ck = Checks()
    if phase == "open":
        state = {}
        open_phase(ck, int(nfs_port), int(mount_port), state)
        with open(state_path, "w") as f:
            json.dump(state, f)
    else:
        with open(state_path) as f:
            state = json.load(f)
        restricted_phase(ck, int(nfs_port), int(mount_port), state)
    ck.exit()


if __name__ == "__main__":
    main()
