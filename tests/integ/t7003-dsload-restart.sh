#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dsload rides out a server restart: with UNSTABLE writes not yet
# committed, dsnfsd is killed (SIGKILL) and started again on the same
# ports.  dsload reconnects, sees the new write verifier, sends the
# uncommitted writes again, commits, and every block still verifies.
. "$(dirname "$0")/lib.sh"


dsnfsd_start || exit 1
nfs=$NFS_PORT
mnt=$MOUNT_PORT
"$DSNFS_BIN/dsload" --nfs-port "$nfs" --mount-port "$mnt" -D ds1,ds2 \
	--vmdks 2 --vmdk-size 16m --bs 8k --read-pct 50 --iodepth 8 \
	--ramp 0 --runtime 6 --stable unstable --commit-every 1000000 \
	--verify --json "$TEST_TMP/restart.json" \
	>"$TEST_TMP/restart.out" 2>"$TEST_TMP/restart.err" &
pid=$!
sleep 2
kill -9 "$DSNFSD_PID"
wait "$DSNFSD_PID" 2>/dev/null
DSNFSD_PID=""
sleep 0.5
dsnfsd_start -p "$nfs" -m "$mnt" || exit 1
check "restarted on the same ports" [ "$NFS_PORT" = "$nfs" ]
wait $pid
rc=$?
grep -E 'verifier|connections:|verify:|dsload:' "$TEST_TMP/restart.out"
tail -3 "$TEST_TMP/restart.err"
check "dsload exits 0 after the restart" [ $rc -eq 0 ]
check "it reconnected" grep -qE 'connections: [1-9][0-9]* breaks, [1-9][0-9]* reconnects' \
	"$TEST_TMP/restart.out"
check "it saw the verifier change and resent" grep -qE \
	"write verifier changed [1-9][0-9]* time\\(s\\) \\(a restart\\): [1-9][0-9]* unstable write" \
	"$TEST_TMP/restart.out"
check "no mismatch after the resends" grep -qE 'units checked, 0 mismatches' \
	"$TEST_TMP/restart.out"
check "server exits cleanly" dsnfsd_stop
test_done
