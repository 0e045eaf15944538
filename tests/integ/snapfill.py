#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Takes N snapshots of a datastore by hand through the admin API, one
after the other (each an operation followed to its end), for the tests of
the 255-snapshot limit (t5015).

    snapfill.py ADMIN_PORT TOKEN_FILE DATASTORE N PREFIX

Names are PREFIX000, PREFIX001, ...; exits 1 naming the first that fails.
"""
import json
import sys
import time
import urllib.request


def call(port, token, method, path, body=None):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": "Bearer " + token,
                 "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)


def main():
    port, token_file, vol, n, prefix = sys.argv[1:6]
    token = open(token_file).read().strip()
    for i in range(int(n)):
        name = f"{prefix}{i:03d}"
        op = call(port, token, "POST", f"/volumes/{vol}/snapshots",
                  {"name": name})
        while op["state"] == "running":
            time.sleep(0.005)
            op = call(port, token, "GET", f"/operations/{op['id']}")
        if op["state"] != "done":
            print(f"snapshot {name}: {op}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
