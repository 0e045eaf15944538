#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# File handles survive a restart (ESXi keeps them for days):
# handles taken before dsnfsd stops still GETATTR and READ the same bytes
# on a new connection to the new ports, without a new MNT; a file deleted
# while the server was down is NFS3ERR_STALE; a renamed file keeps its
# handle; the WRITE verifier changes, so clients resend unstable writes.
. "$(dirname "$0")/lib.sh"
wire() {
	python3 "$(dirname "$0")/t2002-nfs3-handle-restart.py" "$1" \
		"$NFS_PORT" "$MOUNT_PORT" "$TEST_TMP/handles.json" "$TEST_TMP/ds1"
}

dsnfsd_start || exit 1
head -c $((300 * 1024 + 17)) /dev/urandom >"$TEST_TMP/ds1/keep.bin"
echo "soon deleted" >"$TEST_TMP/ds1/gone.txt"
echo "renamed behind the server" >"$TEST_TMP/ds1/old-name.txt"
echo "renamed over nfs" >"$TEST_TMP/ds1/nfs-old.txt"
mkdir "$TEST_TMP/ds1/sub"
echo inner >"$TEST_TMP/ds1/sub/inner.txt"
old_ports="$NFS_PORT $MOUNT_PORT"

echo "before the restart:"
check "handles taken, files read, verifier kept" wire before
check "server stops cleanly" dsnfsd_stop
rm "$TEST_TMP/ds1/gone.txt"
mv "$TEST_TMP/ds1/old-name.txt" "$TEST_TMP/ds1/new-name.txt"
check "handle key is in the state dir, 0600" [ "$(stat -c %a "$TEST_TMP/state/handle.key")" = 600 ]

dsnfsd_start || exit 1
echo "after the restart (ports $old_ports -> $NFS_PORT $MOUNT_PORT):"
check "old handles work on the new server" wire after
check "server exits cleanly" dsnfsd_stop
test_done
