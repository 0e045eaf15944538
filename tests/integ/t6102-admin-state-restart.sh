#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The admin API's changes survive a restart (STATE_DIR/admin-state.json):
# a pool created, a datastore put in a pool, a pool resized and the
# [traffic] caps patched are all there after a restart, with their limits
# in effect, and the ledger and the bill show no delete and re-create at
# the restart.  A SIGHUP whose config no longer allows one of them drops
# that one with a warning naming it and the rule.  `dsnfsctl changes
# revert` brings the config back, live and after a restart.  A corrupt
# file stops the start, naming the file and the reason.
. "$(dirname "$0")/lib.sh"

state=$TEST_TMP/state
ledger=$state/capacity.ledger
url() { echo "http://127.0.0.1:$ADMIN_PORT$1"; }
json() {
	acurl -s "$(url "$1")" | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"
}
events() { "$DSNFS_BIN/dsnfsctl" ledger --ledger "$ledger"; }
write_conf() { # QUOTA_OF_DS1
	cat >"$TEST_TMP/pools.conf" <<CONF
[pool p1]
level = premium
size_tib = 4

[datastore ds1]
path = $TEST_TMP/ds1
pool = p1
quota = $1

[datastore ds2]
path = $TEST_TMP/ds2
CONF
}
# Waits for the Nth "config: reloaded" line of the log.
reloaded() {
	for _ in $(seq 1 50); do
		[ "$(grep -c 'config: reloaded' "$TEST_TMP/dsnfsd.log")" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

write_conf 1TiB
mkdir -p "$TEST_TMP/ds1" "$TEST_TMP/ds2"
# -e ds1/ds2 from lib.sh and the file's [datastore] name the same paths.
dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1

echo "-- changes through the API"
check "no changes over the config at first" \
	bash -c "$(declare -f ctl); ADMIN_PORT=$ADMIN_PORT DSNFS_BIN=$DSNFS_BIN ctl changes | grep -q '(none'"
check "pool create p2" ctl pool create p2 --level ultra --size 2
check "volume create ds2 in p1" ctl volume create ds2 --pool p1 --quota 2TiB
check "pool set p2 --size 3" ctl pool set p2 --size 3
check "caps set --flow-mibps 100 --volume-iops 5000" \
	ctl caps set --flow-mibps 100 --volume-iops 5000
ctl changes >"$TEST_TMP/changes1"
cat "$TEST_TMP/changes1"
check "dsnfsctl changes lists the pool, the volume and the caps" \
	bash -c "grep -q '^pool  *p2  *created .*size_tib=3' '$TEST_TMP/changes1' &&
		grep -q '^volume  *ds2  *created  *pool=p1 quota_bytes=2199023255552' '$TEST_TMP/changes1' &&
		grep -q '^caps .*flow_bytes_per_s=104857600 volume_ops_per_s=5000' '$TEST_TMP/changes1'"
check "the file exists" test -s "$state/admin-state.json"
check "no temp file is left" test ! -e "$state/admin-state.json.tmp"

echo "-- restart"
check "server exits cleanly" dsnfsd_stop
events >"$TEST_TMP/e1"
dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "the log says the changes were applied" \
	grep -q 'admin-state: .*admin-state.json: 4 admin API change(s) over the config, 0 dropped' "$TEST_TMP/dsnfsd.log"
check "p2 is back, 3 TiB Ultra" \
	test "$(json /pools/p2 "(d['level'], d['size_tib'])")" = "('Ultra', 3)"
check "ds2 is in p1 with its quota and Premium's limit (2 TiB x 64 MiB/s)" \
	test "$(json /volumes/ds2 "(d['pool'], d['quota_bytes'], d['limit_bytes_per_s'])")" = "('p1', 2199023255552, 134217728)"
check "the caps are back" \
	test "$(json /caps "(d['flow_mibps'], d['volume_iops'])")" = "(100.0, 5000)"
events >"$TEST_TMP/e2"
check "the restart added nothing to the ledger" cmp -s "$TEST_TMP/e1" "$TEST_TMP/e2"
cat "$TEST_TMP/e2"
"$DSNFS_BIN/dsnfsctl" bill --ledger "$ledger" --from 2020-01-01 \
	--to 2100-01-01 >"$TEST_TMP/bill"
cat "$TEST_TMP/bill"
check "the bill has p2 as one life: created once, never deleted, to the end" \
	bash -c "test \$(grep -c ' created  *p2 ' '$TEST_TMP/e2') -eq 1 &&
		! grep -q 'deleted' '$TEST_TMP/e2' &&
		grep -q '^  p2 .* \.\. 2100-01-01T00:00:00Z Ultra 3 TiB' '$TEST_TMP/bill'"

echo "-- SIGHUP with a config that no longer allows one change"
write_conf 3TiB # ds1 3 TiB + ds2 2 TiB > p1's 4 TiB
kill -HUP "$DSNFSD_PID"
check "the config was reloaded" reloaded 1
check "ds2's membership is dropped, named with the rule" \
	grep -q "admin-state: .*admin-state.json: dropped volume ds2 (created pool=p1 quota_bytes=2199023255552 limit_mibps=0): pool p1: volume quotas sum to 5 TiB, more than the pool's 4 TiB" "$TEST_TMP/dsnfsd.log"
check "ds2 is in no pool now" test "$(json /volumes/ds2 "d['pool']")" = None
check "ds1 has the config's 3 TiB" \
	test "$(json /volumes/ds1 "d['quota_bytes']")" = 3298534883328
check "p2 and the caps stay" \
	test "$(json /pools/p2 "d['size_tib']")$(json /caps "d['volume_iops']")" = 35000
check "the file no longer has ds2" \
	bash -c "! grep -q '\"ds2\"' '$state/admin-state.json' && grep -q '\"p2\"' '$state/admin-state.json'"

echo "-- back to the config"
check "dsnfsctl changes revert" ctl changes revert
check "p2 is gone at once" test "$(json /pools "[p['name'] for p in d['pools']]")" = "['p1']"
check "the caps are the config's" test "$(json /caps "(d['flow_mibps'], d['volume_iops'])")" = "(0.0, 0)"
check "the ledger has p2 deleted" bash -c "$(declare -f events); ledger=$ledger DSNFS_BIN=$DSNFS_BIN events | grep -q ' deleted  *p2'"
check "server exits cleanly" dsnfsd_stop
events >"$TEST_TMP/e3"
dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "after a restart: the config's pools" \
	test "$(json /pools "[p['name'] for p in d['pools']]")" = "['p1']"
check "and nothing over the config" \
	test "$(json /changes "(d['pools'], d['volumes'], d['caps'])")" = "([], [], {})"
events >"$TEST_TMP/e4"
check "the restart added nothing to the ledger" cmp -s "$TEST_TMP/e3" "$TEST_TMP/e4"
check "server exits cleanly" dsnfsd_stop

echo "-- a corrupt file"
printf '{"format": "dsnfsd-admin-state", "version": 1, "pools": [' \
	>"$state/admin-state.json"
refused=yes
if dsnfsd_start -c "$TEST_TMP/pools.conf" 2>/dev/null; then
	refused=no
	dsnfsd_stop
fi
check "dsnfsd refuses to start" test $refused = yes
check "naming the file, the reason and the way out" \
	grep -q "admin-state: $state/admin-state.json: line 1 column .*will not start without them: repair it, or move it away to start from the config alone" "$TEST_TMP/dsnfsd.log"
mv "$state/admin-state.json" "$state/admin-state.json.bad"
dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "moved away: it starts from the config" \
	test "$(json /pools "[p['name'] for p in d['pools']]")" = "['p1']"
check "server exits cleanly" dsnfsd_stop
test_done
