#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The intent log's per-write choice with its default keys: large writes in
# place, small ones logged; with the stream rule on, a file's 16 KiB
# sequential stream in place too (the
# counters on /metrics; the old keys' behaviour, every write logged, with
# them at 0, the older key's name as an alias); then power loss under a
# mix of sequential 64 and 16 KiB and random 8 KiB FILE_SYNC writes of one
# file, POWER_POINTS (default 100) crash points (see the .py; needs root,
# FUSE, mkfs.ext4, skipped without).
. "$(dirname "$0")/lib.sh"

# Sends 4 sequential 64 KiB FILE_SYNC writes of b, 16 of 16 KiB of s and 8
# random 8 KiB of r (2 MiB apart), one at a time.
send_mix() {
	python3 -c '
import sys; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[1])
from nfs3wire import *
m = MountClient(("127.0.0.1", int(sys.argv[3]))); root = m.mnt("/ds1").fhandle
c = Nfs3Client(("127.0.0.1", int(sys.argv[2])))
fh = {n: c.lookup(root, n).object for n in "bsr"}
w = [("b", i * 65536, 65536) for i in range(4)]
w += [("s", i * 16384, 16384) for i in range(16)]
w += [("r", (i * 7 % 8) * (2 << 20), 8192) for i in range(8)]
bad = [x for x in w if c.write(fh[x[0]], x[1], b"d" * x[2],
                               stable=FILE_SYNC).status != NFS3_OK]
sys.exit(1 if bad else 0)
' "$(dirname "$0")" "$NFS_PORT" "$MOUNT_PORT"
}
metric() { acurl -s "http://127.0.0.1:$ADMIN_PORT/metrics" | awk -v m="$1{log=\"$2\"}" '$1 == m { print $2 }'; }

mkdir -p "$TEST_TMP/a" "$TEST_TMP/b"
printf '[server]\nintent_log = %s\n' "$TEST_TMP/a/intent.log" >"$TEST_TMP/a/ilog.conf"
dsnfsd_start -c "$TEST_TMP/a/ilog.conf" || exit 1
: >"$TEST_TMP/ds1/b"; : >"$TEST_TMP/ds1/s"; : >"$TEST_TMP/ds1/r"
check "defaults: 28 FILE_SYNC writes (64, 16 KiB sequential, 8 KiB random)" send_mix
log=$TEST_TMP/a/intent.log
check "defaults: the 4 writes of 64 KiB in place" [ "$(metric dsnfs_intent_log_inplace_writes_total "$log")" = 4 ]
check "defaults: the 16 KiB stream and the 8 KiB random writes logged (24)" \
	[ "$(metric dsnfs_intent_log_records_total "$log")" = 24 ]
check "defaults: the log got no 64 KiB write's bytes (< 512 KiB)" \
	[ "$(metric dsnfs_intent_log_bytes_total "$log")" -lt 524288 ]
check "server exits cleanly" dsnfsd_stop

# The stream rule on: the 16 KiB stream goes in place too.
mkdir -p "$TEST_TMP/c"
printf '[server]\nintent_log = %s\nintent_log_inplace_sequential_min_bytes = 16384\n' \
	"$TEST_TMP/c/intent.log" >"$TEST_TMP/c/ilog.conf"
dsnfsd_start -c "$TEST_TMP/c/ilog.conf" || exit 1
: >"$TEST_TMP/ds1/b"; : >"$TEST_TMP/ds1/s"; : >"$TEST_TMP/ds1/r"
check "stream rule on: the same 28 writes" send_mix
log=$TEST_TMP/c/intent.log
check "stream rule on: the 20 sequential writes in place" [ "$(metric dsnfs_intent_log_inplace_writes_total "$log")" = 20 ]
check "stream rule on: the 8 random ones logged, no SYNCED record (no file had both)" \
	[ "$(metric dsnfs_intent_log_records_total "$log")" = 8 ]
check "stream rule on: the log got the 8 KiB writes' bytes only (<= 128 KiB)" \
	[ "$(metric dsnfs_intent_log_bytes_total "$log")" -le 131072 ]
check "server exits cleanly" dsnfsd_stop

# Both rules off, the size through the key's older name: every write logged.
printf '[server]\nintent_log = %s\nintent_log_immediate_max_bytes = 0\nintent_log_inplace_sequential_min_bytes = 0\n' \
	"$TEST_TMP/b/intent.log" >"$TEST_TMP/b/ilog.conf"
dsnfsd_start -c "$TEST_TMP/b/ilog.conf" || exit 1
: >"$TEST_TMP/ds1/b"; : >"$TEST_TMP/ds1/s"; : >"$TEST_TMP/ds1/r"
check "rules off: the same 28 writes" send_mix
log=$TEST_TMP/b/intent.log
check "rules off: none in place" [ "$(metric dsnfs_intent_log_inplace_writes_total "$log")" = 0 ]
check "rules off: all 28 logged" [ "$(metric dsnfs_intent_log_records_total "$log")" = 28 ]
check "rules off: the log got every byte (>= 576 KiB)" \
	[ "$(metric dsnfs_intent_log_bytes_total "$log")" -ge 589824 ]
check "server exits cleanly" dsnfsd_stop

if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || ! /usr/bin/python3 -c 'import fusepy' 2>/dev/null ||
	! command -v mkfs.ext4 >/dev/null; then
	echo "  skip: power cuts need root, /dev/fuse, python3-fusepy (Debian's /usr/bin/python3) and mkfs.ext4"
	test_done
fi
check "power cuts under sequential and random FILE_SYNC writes, the stream rule on" \
	python3 "$(dirname "$0")/t8207-power-loss-mixed.py" "$DSNFS_BIN/dsnfsd" \
	"$TEST_TMP/power" "${POWER_POINTS:-100}" "${POWER_OPS:-400}"
check "power cuts under a stream of FILE_SYNC writes, 4 in flight (the ring merges them)" \
	python3 "$(dirname "$0")/t8207-power-loss-mixed.py" "$DSNFS_BIN/dsnfsd" \
	"$TEST_TMP/power4" "${POWER_POINTS:-100}" "${POWER_OPS:-400}" 4
test_done
