#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# READ replies in flight while their file shrinks, with READ zero copy
# (sendfile) and without it: the stream stays in sync, data before the
# truncation point is intact, and the connection answers the next call.
. "$(dirname "$0")/lib.sh"

for zc in true false; do
	printf '[server]\nread_zero_copy = %s\n' "$zc" >"$TEST_TMP/zc.conf"
	echo "read_zero_copy = $zc:"
	dsnfsd_start -c "$TEST_TMP/zc.conf" || exit 1
	head -c $((16 * 1024 * 1024)) /dev/urandom >"$TEST_TMP/ds1/big.bin"
	check "replies stay whole while the file is cut" \
		python3 "$(dirname "$0")/t2005-nfs3-read-truncate.py" \
		"$NFS_PORT" "$MOUNT_PORT" "$TEST_TMP/ds1/big.bin"
	check "server exits cleanly" dsnfsd_stop
done
test_done
