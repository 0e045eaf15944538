#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dsload finds a restarted server that came back on other ports: dsload
# found the NFS and MOUNT ports through dsnfsd's portmapper on port 111;
# dsnfsd is killed (SIGKILL) and started again on new ephemeral ports.
# On reconnect dsload asks the portmapper again, follows the NFS port and
# finishes its run with every block verified.  (Fixed ports given with
# --nfs-port stay fixed: t7003.)  Needs port 111 free, as t0001 and t3001,
# which the suite runs one at a time.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"

if ss -ltnH 'sport = :111' | grep -q .; then
	echo "port 111 is taken (an rpcbind?); this test needs it free" >&2
	exit 1
fi
dsnfsd_start -P 111 || exit 1
nfs=$NFS_PORT
"$DSNFS_BIN/dsload" --portmap-port 111 -D ds1,ds2 \
	--vmdks 2 --vmdk-size 16m --bs 8k --read-pct 50 --iodepth 8 \
	--ramp 0 --runtime 6 --verify --json "$TEST_TMP/moved.json" \
	>"$TEST_TMP/moved.out" 2>"$TEST_TMP/moved.err" &
pid=$!
sleep 2
kill -9 "$DSNFSD_PID"
wait "$DSNFSD_PID" 2>/dev/null
DSNFSD_PID=""
dsnfsd_start -P 111 || exit 1
check "restarted on another NFS port ($nfs -> $NFS_PORT)" \
	[ "$NFS_PORT" != "$nfs" ]
wait $pid
rc=$?
grep -E 'connections:|verify:|dsload:' "$TEST_TMP/moved.out"
tail -3 "$TEST_TMP/moved.err"
check "dsload exits 0 after the move" [ $rc -eq 0 ]
check "it asked the portmapper again and followed the NFS port" \
	grep -q "the portmapper moved NFS from port $nfs to $NFS_PORT" \
	"$TEST_TMP/moved.err"
check "it reconnected" \
	grep -qE 'connections: [1-9][0-9]* breaks, [1-9][0-9]* reconnects' \
	"$TEST_TMP/moved.out"
check "no mismatch after the move" \
	grep -qE 'units checked, 0 mismatches' "$TEST_TMP/moved.out"
check "server exits cleanly" dsnfsd_stop
test_done
