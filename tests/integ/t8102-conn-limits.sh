#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Connection limits and timeouts: per-host cap, half-sent records, idle
# connections, and connection churn.
. "$(dirname "$0")/lib.sh"

cat >"$TEST_TMP/limits.conf" <<CONF
[server]
max_conns_per_host = 8
record_timeout_ms = 1000
idle_timeout_ms = 2000
CONF
dsnfsd_start -c "$TEST_TMP/limits.conf" || exit 1
check "limits hold" python3 "$(dirname "$0")/t8102-conn-limits.py" "$NFS_PORT"
check "the refusals were logged" grep -q 'connection refused: limit' "$TEST_TMP/dsnfsd.log"
check "the slow record was logged" grep -q 'stayed incomplete' "$TEST_TMP/dsnfsd.log"
check "server exits cleanly" dsnfsd_stop
test_done
