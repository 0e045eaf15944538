#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dsload catches corruption: a write pass, then one byte of the flat file
# changed on the server's disk, then a read pass.  The read pass names the
# corrupted unit and dsload exits 1; an untouched run exits 0.
. "$(dirname "$0")/lib.sh"

dsnfsd_start || exit 1
flat="$TEST_TMP/ds1/vm0/vm0-disk0-flat.vmdk"
run_dsload() {
	"$DSNFS_BIN/dsload" --nfs-port "$NFS_PORT" --mount-port "$MOUNT_PORT" \
		-D ds1 --vmdk-size 8m --bs 64k --random-pct 0 --read-pct 0,100 \
		--one-pass --verify --quiet --pause-between-phases \
		--json "$TEST_TMP/$1.json" >"$TEST_TMP/$1.out" 2>"$TEST_TMP/$1.err" &
	DSLOAD_PID=$!
	for _ in $(seq 1 300); do
		grep -q 'paused before phase' "$TEST_TMP/$1.err" && return 0
		kill -0 $DSLOAD_PID 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

check "clean run: write pass done, paused" run_dsload clean
kill -USR1 $DSLOAD_PID
wait $DSLOAD_PID
check "clean run exits 0" [ $? -eq 0 ]
check "clean run read back 2048 units" grep -q '2048 units checked, 0 mismatches' "$TEST_TMP/clean.out"

check "second run: write pass done, paused" run_dsload bad
# One byte in the unit at 3 MiB + 4 KiB, inside its body, inverted: the
# body is pseudo-random (seeded by the file's id), so writing a fixed
# value would leave it unchanged once in 256 runs.
python3 - "$flat" $((3 * 1048576 + 4096 + 1000)) <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    b = f.read(1)[0]
    f.seek(int(sys.argv[2]))
    f.write(bytes([b ^ 0xFF]))
PY
kill -USR1 $DSLOAD_PID
wait $DSLOAD_PID
rc=$?
cat "$TEST_TMP/bad.err"
check "corrupted run exits 1" [ $rc -eq 1 ]
check "the mismatch names file, offset and cause" grep -q \
	'MISMATCH ds1:vm0/vm0-disk0-flat.vmdk offset 3149824: bad-body' \
	"$TEST_TMP/bad.err"
check "summary counts exactly one mismatch" grep -q \
	'2048 units checked, 1 mismatches' "$TEST_TMP/bad.out"
check "verdict says FAILED" grep -q 'dsload: FAILED: 1 verification' "$TEST_TMP/bad.out"
check "JSON total counts it" python3 -c "
import json, sys
p = json.load(open('$TEST_TMP/bad.json'))['phases'][1]
t = [r for r in p['rows'] if r['level'] == 'total'][0]
sys.exit(t['mismatches'] != 1)"
check "server exits cleanly" dsnfsd_stop
test_done
