# SPDX-License-Identifier: Apache-2.0
"""The admin token for the Python helpers: the file named by
DSNFS_ADMIN_TOKEN_FILE (tests/integ/lib.sh exports it: the state dir of
dsnfsd_start), as the Authorization header dsnfsd wants."""
import os
import urllib.request


def headers():
    """{"Authorization": "Bearer TOKEN"}; a clear error without a token."""
    path = os.environ.get("DSNFS_ADMIN_TOKEN_FILE")
    if not path:
        raise SystemExit("DSNFS_ADMIN_TOKEN_FILE is not set (lib.sh sets it)")
    with open(path) as f:
        return {"Authorization": "Bearer " + f.read().strip()}


def urlopen(url, timeout=30):
    """urllib.request.urlopen of url with the token."""
    return urllib.request.urlopen(
        urllib.request.Request(url, headers=headers()), timeout=timeout)
