#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A `secure` datastore serves only clients on privileged ports, at MNT and
on every NFS call (t8103-export-secure.sh; ds2 is secure, ds1 is not).

    t8103-export-secure.py NFS_PORT MOUNT_PORT
"""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (MNT3_OK, MNT3ERR_ACCES, NFS3_OK, NFS3ERR_ACCES,  # noqa: E402
                      Checks, MountClient, Nfs3Client)

HOST = "127.0.0.1"


def from_port(client, port):
    """Reconnects client from source port (0 = any ephemeral port)."""
    client.close()
    for p in range(port, port + 50) if port else [0]:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, p))
        except OSError:
            s.close()
            continue
        s.settimeout(10)
        s.connect(client.addr)
        client.sock = s
        return client
    raise OSError("no free privileged port")


def main():
    nfs_port, mount_port = int(sys.argv[1]), int(sys.argv[2])
    ck = Checks()
    m = MountClient((HOST, mount_port))
    ck.check("MNT of a plain datastore from port >= 1024",
             m.mnt("/ds1").status == MNT3_OK)
    r = m.mnt("/ds2")
    ck.check("MNT of a secure datastore from port >= 1024 -> ACCES",
             r.status == MNT3ERR_ACCES, "got %d" % r.status)
    from_port(m, 700)
    r = m.mnt("/ds2")
    ck.check("MNT of a secure datastore from a privileged port",
             r.status == MNT3_OK, "got %d" % r.status)
    fh = r.fhandle if r.status == MNT3_OK else b""

    c = from_port(Nfs3Client((HOST, nfs_port)), 760)
    ck.status("GETATTR from a privileged port", c.getattr(fh), NFS3_OK)
    from_port(c, 0)
    ck.status("GETATTR from port >= 1024 with the same handle", c.getattr(fh),
              NFS3ERR_ACCES)
    ck.exit()


if __name__ == "__main__":
    main()
