#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SIGHUP applies the exports and the trace flag of the config file, live:
# ds3 turns read-only (its handles keep working, writes get ROFS), ds4 is
# removed (its handles get STALE, MOUNT refuses it), ds5 is added (it
# mounts without a restart; the file caches share the descriptor budget
# again), and trace = true starts the trace lines.
# Real clients (libnfs) check the mounts, the Python client the handles
# kept across the signal.  A config with an error is refused, named by
# file, line and key in the log, and the running config stays.
. "$(dirname "$0")/lib.sh"

py=$(dirname "$0")/t1001-config-reload-exports.py
conf=$TEST_TMP/reload.conf
state=$TEST_TMP/handles.json
for ds in ds3 ds4 ds5; do
	mkdir -p "$TEST_TMP/$ds"
done
echo hello >"$TEST_TMP/ds3/hello.txt"
echo four >"$TEST_TMP/ds4/four.txt"
echo five >"$TEST_TMP/ds5/five.txt"

write_conf() { # READ_ONLY_DS3 WITH_DS4 WITH_DS5 TRACE [EXTRA_LINE]
	{
		echo "[server]"
		echo "trace = $4"
		echo "[datastore ds3]"
		echo "path = $TEST_TMP/ds3"
		lab_access
		echo "read_only = $1"
		if [ "$2" = yes ]; then
			echo "[datastore ds4]"
			echo "path = $TEST_TMP/ds4"
			lab_access
		fi
		if [ "$3" = yes ]; then
			echo "[datastore ds5]"
			echo "path = $TEST_TMP/ds5"
			lab_access
		fi
		if [ -n "${5:-}" ]; then
			echo "$5"
		fi
	} >"$conf"
}

# Waits until the log holds $1 lines matching $2 (SIGHUP is asynchronous).
wait_log_count() {
	for _ in $(seq 1 100); do
		[ "$(grep -c -- "$2" "$TEST_TMP/dsnfsd.log")" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

ls_ok() { nfs-ls "$(nfs_url "$1" "")" >"$TEST_TMP/ls.out" 2>&1; }

write_conf false yes no false
dsnfsd_start -c "$conf" || exit 1
check "before: ds4 mounts (nfs-ls)" ls_ok ds4
check "before: ds5 is not exported" test "$(ls_ok ds5 && echo yes)" != yes
check "before: handles of ds3 and ds4, a write to ds3" \
	python3 "$py" before "$NFS_PORT" "$MOUNT_PORT" "$state"
check "before: no trace lines" test "$(grep -c 'trace: ' \
	"$TEST_TMP/dsnfsd.log")" -eq 0

write_conf true no yes true
kill -HUP "$DSNFSD_PID"
check "SIGHUP applied" wait_log_count 1 'config: reloaded'
check "the log names the removal" grep -q 'export: removed .*/ds4' \
	"$TEST_TMP/dsnfsd.log"
check "the log names the addition" grep -q 'export: added /ds5' \
	"$TEST_TMP/dsnfsd.log"
fcache_n() { sed -n "s/.*fcache ($1): .* for \([0-9]*\) exports.*/\1/p" \
	"$TEST_TMP/dsnfsd.log" | head -1; }
check "the file caches shared the descriptor limit at start" \
	grep -q 'fcache (start): RLIMIT_NOFILE [0-9]* - max_conns [0-9]* - reserve [0-9]* = [0-9]* descriptors' \
	"$TEST_TMP/dsnfsd.log"
check "... and again with ds5 added" \
	test "$(fcache_n reload)" = "$(($(fcache_n start) + 1))"
check "after: ds5 mounts without a restart (nfs-ls)" ls_ok ds5
check "... and lists its file" grep -q five.txt "$TEST_TMP/ls.out"
check "after: ds4 no longer mounts (nfs-ls)" \
	test "$(ls_ok ds4 && echo yes)" != yes
check "after: nfs-cp into read-only ds3 fails" \
	test "$(nfs-cp "$conf" "$(nfs_url ds3 copy.txt)" >/dev/null 2>&1 &&
		echo yes)" != yes
check "after: nothing was written to ds3" test ! -e "$TEST_TMP/ds3/copy.txt"
check "after: old handles (ds3 works but read-only, ds4 STALE), MNT ds5" \
	python3 "$py" after "$NFS_PORT" "$MOUNT_PORT" "$state"
check "after: trace lines from the reload on" grep -q 'trace: .*GETATTR' \
	"$TEST_TMP/dsnfsd.log"

# A config with an unknown key: refused whole, with file, line and key.
write_conf false yes no false "bogus_key = 1"
kill -HUP "$DSNFSD_PID"
check "a bad config is refused" wait_log_count 1 'the running config stays'
grep 'SIGHUP' "$TEST_TMP/dsnfsd.log" | tail -1
check "... naming the file, the line and the key" \
	grep -q "SIGHUP: $conf:[0-9]*: .*bogus_key" "$TEST_TMP/dsnfsd.log"
check "... and ds5 still mounts" ls_ok ds5
check "... and ds4 is still gone" test "$(ls_ok ds4 && echo yes)" != yes
check "... and only one reload was applied" \
	test "$(grep -c 'config: reloaded' "$TEST_TMP/dsnfsd.log")" -eq 1

# Back to the first config: ds4 returns with its old handles.
write_conf false yes no false
kill -HUP "$DSNFSD_PID"
check "the second SIGHUP applied" wait_log_count 2 'config: reloaded'
check "ds4 is back (nfs-ls)" ls_ok ds4
check "ds3 takes writes again (nfs-cp)" \
	nfs-cp "$conf" "$(nfs_url ds3 copy.txt)"
check "server exits cleanly" dsnfsd_stop
test_done
