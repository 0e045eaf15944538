#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Connection placement over two event loops (nfsd/net/conn_limit.c,
# net__place_conn): NFS connections that each follow a MOUNT connection
# still lie evenly over the loops, as /metrics' dsnfs_loop_connections
# shows (t0006-net-loops.py, raw RPC over TCP); a libnfs client (MOUNT,
# then NFS) is served meanwhile.
. "$(dirname "$0")/lib.sh"

here=$(dirname "$0")
dsnfsd_start -w 2 || exit 1
echo hello >"$TEST_TMP/ds1/f"
check "NFS connections even over the loops, MOUNT ones between" \
	env PYTHONPATH="$here" python3 -B "$here/t0006-net-loops.py" \
	"$NFS_PORT" "$MOUNT_PORT" "$ADMIN_PORT"
check "libnfs reads through it" \
	bash -c "nfs-cat '$(nfs_url ds1 f)' | grep -qx hello"
dsnfsd_stop
test_done
