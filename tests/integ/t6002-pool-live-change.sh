#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Live changes without restart or dropped connections: while four clients
# read ds1, SIGHUP swaps in a config where ds1's pool went from Standard to
# Premium (auto QoS: 16 -> 64 MiB/s for a 1 TiB quota), then one where ds1
# moved to a manual QoS pool at 24 MiB/s.  Each change shows in the
# client-side throughput from one second after the signal on, over the
# same connections; the ledger records the level change and the new pool.
. "$(dirname "$0")/lib.sh"

conf=$TEST_TMP/pools.conf
cat >"$conf" <<CONF
[pool lab]
level = standard
size_tib = 2

[datastore ds1]
pool = lab
quota = 1TiB
CONF

dsnfsd_start -c "$conf" || exit 1
check "throughput follows each change within a second" \
	python3 "$(dirname "$0")/t6002-pool-live-change.py" "$NFS_PORT" \
	"$MOUNT_PORT" "$DSNFSD_PID" "$conf"
check "each SIGHUP was applied" \
	test "$(grep -c 'config: reloaded' "$TEST_TMP/dsnfsd.log")" -eq 2
check "a bad config is refused and changes nothing" \
	python3 "$(dirname "$0")/t6002-pool-live-change.py" "$NFS_PORT" \
	"$MOUNT_PORT" "$DSNFSD_PID" "$conf" --bad
check "server exits cleanly" dsnfsd_stop

"$DSNFS_BIN/dsnfsctl" ledger --ledger "$TEST_TMP/state/capacity.ledger" \
	>"$TEST_TMP/ledger.txt" 2>&1
cat "$TEST_TMP/ledger.txt"
check "the ledger has lab's level change" \
	grep -q 'level-changed *lab Premium 2 TiB' "$TEST_TMP/ledger.txt"
check "the ledger has the new pool" \
	grep -q 'created *man Standard 4 TiB' "$TEST_TMP/ledger.txt"
test_done
