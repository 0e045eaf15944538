#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""t6101 companion: while one NFS connection to ds1 stays open, the admin
API lists it as a flow (host 127.0.0.1, datastore ds1) with its requests
counted, and its host under /hosts.

    t6101-admin-api.py NFS_PORT MOUNT_PORT ADMIN_PORT
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import Checks, MountClient, Nfs3Client  # noqa: E402
import admintoken  # noqa: E402


def get(port, path):
    with admintoken.urlopen("http://127.0.0.1:%d%s" % (port, path)) as r:
        return json.load(r)


def main():
    nfs_port, mount_port, admin_port = (int(a) for a in sys.argv[1:4])
    ck = Checks()
    root = MountClient(("127.0.0.1", mount_port)).mnt("/ds1").fhandle
    with Nfs3Client(("127.0.0.1", nfs_port)) as c:
        for _ in range(5):
            c.getattr(root)
        flows = [f for f in get(admin_port, "/flows")["flows"]
                 if f["volume"] == "ds1"]
        ck.check("one flow to ds1 while the connection is open",
                 len(flows) == 1)
        ck.check("its host is 127.0.0.1",
                 flows and flows[0]["host"] == "127.0.0.1")
        ck.check("its five GETATTRs are counted",
                 flows and flows[0]["counters"]["other"]["ops"] >= 5)
        hosts = [h["host"] for h in get(admin_port, "/hosts")["hosts"]]
        ck.check("its host is listed", "127.0.0.1" in hosts)
    ck.exit()


if __name__ == "__main__":
    main()
