#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Duplicate request cache over real connections (t8101-drc-replay.sh).

A client whose connection breaks resends its calls on a new connection
from the source port it had (as the Linux client does) with the same
XIDs.  A retried REMOVE, RENAME or CREATE GUARDED must get the first reply
again, not a second execution (which would say NOENT or EXIST).  The same
XID with other arguments is new work, and so (issue 23: the DRC's key
holds the source port and the credential) is the same call from another
port or under another uid: another local user cannot get someone's
reply.

    t8101-drc-replay.py NFS_PORT MOUNT_PORT
"""
import os
import random
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (GUARDED, NFS3_OK, NFS3ERR_ACCES, NFS3ERR_EXIST, NFS3ERR_NOENT,  # noqa: E402
                      Checks, MountClient, Nfs3Client, auth_sys)

HOST = "127.0.0.1"
# The client's own source port, kept across its reconnections.
SRC_PORT = random.randrange(20000, 30000)


def on_new_connection(port, xid, fn, src_port=None, cred=None):
    """Runs fn(client) on a fresh connection from src_port (the client's
    own by default) with the next XID = xid."""
    c = Nfs3Client((HOST, port), src_port=src_port or SRC_PORT,
                   cred=cred)
    c.xid = xid - 1
    try:
        return fn(c)
    finally:
        # A reset, not a FIN: no TIME_WAIT, so the port binds again.
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                          struct.pack("ii", 1, 0))
        c.close()


def main():
    nfs_port, mount_port = int(sys.argv[1]), int(sys.argv[2])
    ck = Checks()
    root = MountClient((HOST, mount_port)).mnt("/ds1").fhandle

    c = Nfs3Client((HOST, nfs_port))
    ck.status("CREATE f1", c.create(root, "f1"), NFS3_OK)
    ck.status("CREATE f2", c.create(root, "f2"), NFS3_OK)
    c.close()

    xid = 0x5EED0001
    rm = lambda cl: cl.remove(root, "f1")  # noqa: E731
    ck.status("REMOVE f1 (first)", on_new_connection(nfs_port, xid, rm), NFS3_OK)
    ck.status("REMOVE f1 retransmitted on a new connection is replayed",
              on_new_connection(nfs_port, xid, rm), NFS3_OK)
    ck.status("REMOVE f1 with a new XID runs again",
              on_new_connection(nfs_port, xid + 1, rm), NFS3ERR_NOENT)
    ck.status("REMOVE f1 with the same XID from another port runs again",
              on_new_connection(nfs_port, xid, rm, src_port=SRC_PORT + 1),
              NFS3ERR_NOENT)
    # Run as uid 1001, checked as uid 1001: not root's replayed OK.
    ck.status("REMOVE f1 with the same XID as another uid runs again",
              on_new_connection(nfs_port, xid, rm, cred=auth_sys(uid=1001, gid=1001)),
              (NFS3ERR_ACCES, NFS3ERR_NOENT))

    xid = 0x5EED0100
    mv = lambda cl: cl.rename(root, "f2", root, "f3")  # noqa: E731
    ck.status("RENAME f2 f3 (first)", on_new_connection(nfs_port, xid, mv), NFS3_OK)
    ck.status("RENAME retransmitted is replayed", on_new_connection(nfs_port, xid, mv), NFS3_OK)

    xid = 0x5EED0200
    mk = lambda cl: cl.create(root, "g1", how=GUARDED)  # noqa: E731
    first = on_new_connection(nfs_port, xid, mk)
    ck.status("CREATE GUARDED g1 (first)", first, NFS3_OK)
    again = on_new_connection(nfs_port, xid, mk)
    ck.status("CREATE GUARDED retransmitted is replayed", again, NFS3_OK)
    ck.check("replayed CREATE returns the same handle",
             first.object is not None and first.object == again.object)
    other = on_new_connection(nfs_port, xid, lambda cl: cl.create(root, "g2", how=GUARDED))
    ck.status("same XID, other arguments: executed", other, NFS3_OK)
    ck.status("CREATE GUARDED g1 with a new XID -> EXIST",
              on_new_connection(nfs_port, xid + 7, mk), NFS3ERR_EXIST)
    ck.exit()


if __name__ == "__main__":
    main()
