#!/usr/bin/env bash
# The intent log across SIGKILL (issue 13): replay writes back acknowledged
# FILE_SYNC data (past EOF too) and undoes no later COMMIT, truncate,
# REMOVE, RENAME or CREATE (see the .py); then t8201's verified FILE_SYNC +
# UNSTABLE/COMMIT load under kill -9, with the log on.
. "$(dirname "$0")/lib.sh"

check "replay restores, and undoes nothing later" python3 \
	"$(dirname "$0")/t8204-ilog-crash.py" "$DSNFS_BIN/dsnfsd" "$TEST_TMP/a"
mkdir -p "$TEST_TMP/b"
printf '[server]\nintent_log = %s\n' "$TEST_TMP/b/intent.log" \
	>"$TEST_TMP/b/ilog.conf"
check "acknowledged writes survive 8 kills with the intent log on" \
	env CRASH_DSNFSD_ARGS="-c $TEST_TMP/b/ilog.conf" python3 \
	"$(dirname "$0")/t8201-crash-kill9.py" "$DSNFS_BIN/dsnfsd" \
	"$TEST_TMP/b" "${CRASH_ROUNDS:-8}"
test_done
