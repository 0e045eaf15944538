#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The admin API through real sockets: dsnfsctl and curl against a running
# dsnfsd; every kind of error; /metrics checked by a strict exposition
# format parser (and promtool when installed); real NFS traffic counted;
# a thin-provisioning alarm raised once; a change made through the API in
# the ledger and in effect after a restart (t6102 tests that in depth).
. "$(dirname "$0")/lib.sh"

here=$(dirname "$0")
url() { echo "http://127.0.0.1:$ADMIN_PORT$1"; }
# status METHOD PATH [BODY [CONTENT_TYPE]]: prints the HTTP status; the
# body goes to $TEST_TMP/body.
status() {
	local args=(-s -o "$TEST_TMP/body" -w '%{http_code}' -X "$1")
	[ $# -ge 3 ] && args+=(-H "Content-Type: ${4:-application/json}" \
		--data-binary "$3")
	acurl "${args[@]}" "$(url "$2")"
}
# json PATH EXPR: evaluates EXPR on the JSON at PATH (as d).
json() {
	acurl -s "$(url "$1")" | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"
}

cat >"$TEST_TMP/admin.conf" <<CONF
[pool p1]
level = premium
size_tib = 4

[datastore ds1]
pool = p1
quota = 1TiB

[admin]
alarm_interval_s = 1
overallocation_alarm_percent = 150
CONF
dsnfsd_start -c "$TEST_TMP/admin.conf" || exit 1
check "the listening line names the admin port" test "$ADMIN_PORT" -gt 0

echo "-- reading"
check "GET /pools lists p1 from the config" \
	test "$(json /pools "[p['name'] for p in d['pools']]")" = "['p1']"
check "dsnfsctl pools prints a table" \
	bash -c "$(declare -f ctl); ADMIN_PORT=$ADMIN_PORT DSNFS_BIN=$DSNFS_BIN ctl pools | grep -q '^p1 *Premium *auto *4 TiB *256 MiB/s *1 TiB'"
check "GET /volumes lists both datastores" \
	test "$(json /volumes "[(v['name'], v['pool']) for v in d['volumes']]")" = "[('ds1', 'p1'), ('ds2', None)]"
check "dsnfsctl --json volume show ds1" \
	bash -c "$(declare -f ctl); ADMIN_PORT=$ADMIN_PORT DSNFS_BIN=$DSNFS_BIN ctl --json volume show ds1 | grep -q '\"quota_bytes\": 1099511627776'"

echo "-- changes"
check "dsnfsctl pool create p2" ctl pool create p2 --level ultra --size 2
check "GET /pools/p2 after the create" \
	test "$(json /pools/p2 "(d['level'], d['throughput_mibps'])")" = "('Ultra', 256)"
check "dsnfsctl volume set ds1 --pool p2 (a move)" ctl volume set ds1 --pool p2
check "ds1 now has Ultra's limit: 1 TiB x 128 MiB/s" \
	test "$(json /volumes/ds1 "(d['level'], d['limit_bytes_per_s'])")" = "('Ultra', 134217728)"
check "dsnfsctl pool set p2 --size 3" ctl pool set p2 --size 3
check "curl PATCH /caps" \
	test "$(status PATCH /caps '{"volume_iops": 50000}')" = 200
check "dsnfsctl caps shows it" \
	bash -c "$(declare -f ctl); ADMIN_PORT=$ADMIN_PORT DSNFS_BIN=$DSNFS_BIN ctl caps | grep -q '^volume_iops *50000'"
check "dsnfsctl caps set --scale 0.03125" ctl caps set --scale 0.03125
check "dsnfsctl caps shows the scale as set, not rounded" \
	bash -c "$(declare -f ctl); ADMIN_PORT=$ADMIN_PORT DSNFS_BIN=$DSNFS_BIN ctl caps | grep -q '^scale *0.03125$'"

echo "-- errors"
check "duplicate pool: 409" test "$(status POST /pools '{"name": "p2", "level": "ultra", "size_tib": 2}')" = 409
check "a broken rule: 400 naming it" \
	bash -c "test \"\$(acurl -s -o $TEST_TMP/body -w '%{http_code}' -X PATCH -H 'Content-Type: application/json' --data-binary '{\"size_tib\": 0}' $(url /pools/p2))\" = 400 && grep -q 'below the 1 TiB minimum' $TEST_TMP/body"
check "unknown field: 400" test "$(status PATCH /pools/p2 '{"colour": "red"}')" = 400
check "malformed JSON: 400" test "$(status POST /pools '{"name": ')" = 400
check "duplicate keys: 400" test "$(status PATCH /pools/p2 '{"size_tib": 3, "size_tib": 4}')" = 400
check "not JSON: 415" test "$(status POST /pools '{}' application/x-www-form-urlencoded)" = 415
check "PUT: 405" test "$(status PUT /pools '{}')" = 405
check "405 says what is allowed" \
	bash -c "acurl -s -D - -o /dev/null -X PUT $(url /pools) | grep -qi '^Allow: GET, POST'"
check "unknown pool: 404" test "$(status GET /pools/nope)" = 404
check "unknown resource: 404" test "$(status GET /nope)" = 404
check "a pool with volumes cannot go: 409" test "$(status DELETE /pools/p2)" = 409
head -c 70000 /dev/zero | tr '\0' 'x' >"$TEST_TMP/big"
check "a body over 64 KiB: 413" \
	test "$(acurl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary @"$TEST_TMP/big" "$(url /pools)")" = 413
check "dsnfsctl reports an error reply and fails" \
	bash -c "$(declare -f ctl); ADMIN_PORT=$ADMIN_PORT DSNFS_BIN=$DSNFS_BIN ctl pool set nope --size 2 2>&1 >/dev/null | grep -q \"404: pool 'nope' does not exist\"; test \${PIPESTATUS[0]} -eq 1"
check "dsnfsctl without a server fails" \
	bash -c "! '$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:1 pools 2>/dev/null"

echo "-- traffic, alarms, metrics"
python3 -B "$here/t6101-admin-api.py" "$NFS_PORT" "$MOUNT_PORT" "$ADMIN_PORT" ||
	FAILS=$((FAILS + 1))
head -c 1048576 /dev/urandom >"$TEST_TMP/one-mib"
check "nfs-cp writes 1 MiB to ds1" nfs-cp "$TEST_TMP/one-mib" "$(nfs_url ds1 one-mib)"
check "ds1's write bytes counted" \
	test "$(json /volumes/ds1 "d['counters']['write']['bytes'] >= 1048576")" = True
# A thin 2 TiB disk in a 1 TiB datastore: 200% provisioned.
mkdir -p "$TEST_TMP/ds1/vm1"
truncate -s 2T "$TEST_TMP/ds1/vm1/vm1-flat.vmdk"
for _ in $(seq 1 50); do
	[ "$(json /alarms "d['alarms'][0]['overallocation']['raised']")" = True ] && break
	sleep 0.1
done
check "the overallocation alarm is raised" \
	test "$(json /alarms "d['alarms'][0]['overallocation']['percent']")" = 200.0
check "dsnfsctl alarms shows it" \
	bash -c "$(declare -f ctl); ADMIN_PORT=$ADMIN_PORT DSNFS_BIN=$DSNFS_BIN ctl alarms | grep -q '^ds1 .*200.0% ALARM'"
sleep 1.2 # another scan: still raised, not logged again
check "the alarm is logged once" \
	test "$(grep -c 'ds1: overallocation 200.0% of its 1024.0 GiB quota crossed the 150% alarm threshold' "$TEST_TMP/dsnfsd.log")" -eq 1
acurl -s -D "$TEST_TMP/mh" -o "$TEST_TMP/metrics" "$(url /metrics)"
check "/metrics is text format 0.0.4" \
	grep -qi '^Content-Type: text/plain; version=0.0.4' "$TEST_TMP/mh"
check "/metrics parses strictly" python3 -B "$here/promparse.py" "$TEST_TMP/metrics"
if command -v promtool >/dev/null; then
	check "promtool check metrics" bash -c "promtool check metrics <'$TEST_TMP/metrics'"
fi
check "/metrics has the write bytes of ds1" \
	grep -Eq '^dsnfs_volume_write_bytes_total\{volume="ds1"\} [1-9][0-9]{6,}$' "$TEST_TMP/metrics"
check "/metrics has the alarm" \
	grep -q '^dsnfs_datastore_alarm{volume="ds1",alarm="overallocation"} 1$' "$TEST_TMP/metrics"
check "/metrics has the pools" \
	grep -q '^dsnfs_pool_size_bytes{pool="p2"} 3298534883328$' "$TEST_TMP/metrics"
check "dsnfsctl metrics is the same text" \
	bash -c "$(declare -f ctl); ADMIN_PORT=$ADMIN_PORT DSNFS_BIN=$DSNFS_BIN ctl metrics | python3 -B '$here/promparse.py' -"

echo "-- restart"
check "server exits cleanly" dsnfsd_stop
"$DSNFS_BIN/dsnfsctl" ledger --ledger "$TEST_TMP/state/capacity.ledger" >"$TEST_TMP/ledger1"
check "the ledger has the API's create and resize of p2" \
	bash -c "grep -q ' created .*p2 Ultra 2 TiB' '$TEST_TMP/ledger1' && grep -q ' resized .*p2 Ultra 3 TiB' '$TEST_TMP/ledger1'"
dsnfsd_start -c "$TEST_TMP/admin.conf" || exit 1
"$DSNFS_BIN/dsnfsctl" ledger --ledger "$TEST_TMP/state/capacity.ledger" >"$TEST_TMP/ledger2"
check "after the restart the ledger still has them" \
	bash -c "grep -q ' resized .*p2 Ultra 3 TiB' '$TEST_TMP/ledger2'"
check "and the API's p2 survived it: not deleted at the restart" \
	bash -c "! grep -q ' deleted .*p2' '$TEST_TMP/ledger2'"
check "GET /pools after the restart: p1, and p2 made through the API" \
	test "$(json /pools "[p['name'] for p in d['pools']]")" = "['p1', 'p2']"
check "dsnfsctl bill prices p2's life" \
	bash -c "'$DSNFS_BIN/dsnfsctl' bill --ledger '$TEST_TMP/state/capacity.ledger' --from 2020-01-01 --to 2100-01-01 | grep -q '^pool p2: '"
check "server exits cleanly" dsnfsd_stop
dsnfsd_start -A off || exit 1
check "-A off: no admin port" test "$ADMIN_PORT" = -1
check "server exits cleanly" dsnfsd_stop
test_done
