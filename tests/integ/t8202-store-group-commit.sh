#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Group commit on and off ([server] group_commit): dsload keeps 16
# FILE_SYNC writes in flight on one VMDK, half of the calls reads, every
# block verified, so concurrent stable writes that share (or not) one sync
# round all land and read back; the server takes the key from its config
# file and exits cleanly.  Durability across a crash is t8201's.
. "$(dirname "$0")/lib.sh"

for mode in true false; do
	printf '[server]\ngroup_commit = %s\nwork_threads = 8\n' "$mode" \
		>"$TEST_TMP/gc-$mode.conf"
	dsnfsd_start -c "$TEST_TMP/gc-$mode.conf" || exit 1
	"$DSNFS_BIN/dsload" run --nfs-port "$NFS_PORT" \
		--mount-port "$MOUNT_PORT" -H 1 -D ds1 --vmdk-size 8m \
		--bs 8k --read-pct 50 --random-pct 100 --iodepth 16 \
		--stable file_sync --verify --ramp 0.2 --runtime 1 --quiet \
		>"$TEST_TMP/dsload-$mode.out" 2>"$TEST_TMP/dsload-$mode.err"
	rc=$?
	check "group_commit=$mode: dsload exits 0" [ $rc -eq 0 ]
	check "group_commit=$mode: no MISMATCH" \
		bash -c "! grep -q MISMATCH '$TEST_TMP/dsload-$mode.err'"
	check "group_commit=$mode: server exits cleanly" dsnfsd_stop
done
test_done
