#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A write verifier per datastore, changed only by a sync that failed: a
# FILE_SYNC WRITE refused with NOSPC by a full ds1 (a 256 KiB tmpfs)
# changes neither ds1's verifier nor ds2's, and logs no new verifier.
# Needs root for mount.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TEST_TMP/ds1"
if ! mount -t tmpfs -o size=256k tmpfs "$TEST_TMP/ds1" 2>/dev/null; then
	echo "  skip: cannot mount a tmpfs (not root?)"
	exit 0
fi
trap 'umount "$TEST_TMP/ds1" 2>/dev/null; test_cleanup' EXIT
dsnfsd_start || exit 1
check "the wire checks pass" python3 "$(dirname "$0")/t8203-write-verifier-nospc.py" \
	"$NFS_PORT" "$MOUNT_PORT"
check "no new write verifier was logged" bash -c \
	"! grep -q 'new write verifier' '$TEST_TMP/dsnfsd.log'"
check "server exits cleanly" dsnfsd_stop
test_done
