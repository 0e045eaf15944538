#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Snapshot policies (issue 28; docs/admin-api.md, dsnfsd.conf(5)): a
# datastore on a loop-mounted XFS (reflink=1) with an hourly, daily and
# weekly policy in the config, run on the test clock
# (DSNFSD_TEST_POLICY_CLOCK: from Sunday 2026-12-06 23:50 UTC, 1200 times
# the real one, so an hour passes in 3 s): the snapshots come, named
# KIND-YYYY-MM-DD_HHMM, retention keeps 2 hourly, a snapshot by hand
# stays; each action is a log line; /metrics counts made, deleted, failed
# and the last success (promparse.py); a SIGHUP that lowers the keep
# applies live; the API's policy (PUT, GET, DELETE; dsnfsctl snapshot
# policy set|show|clear) wins over the config's and is kept across a
# restart; bad bodies are 400, an unknown datastore 404, no token 401;
# a datastore on ext4 (no reflink) raises the policy alarm (GET and
# /metrics), never a silent skip.  Needs root.
. "$(dirname "$0")/lib.sh"

ds3=$TEST_TMP/ds3
xfs_loop "$ds3"
conf=$TEST_TMP/policy.conf
write_conf() {
	printf '[datastore ds3]\npath = %s\nsnapshot_hourly = :00 keep %s\n' "$ds3" "$1" >"$conf"
	printf 'snapshot_daily = 00:00 keep 1\nsnapshot_weekly = mon 00:00 keep 1\n' >>"$conf"
	lab_access >>"$conf"
}
write_conf 2
echo v1 >"$ds3/a.txt"
export DSNFSD_TEST_POLICY_CLOCK="$(date -u -d 2026-12-06T23:50:00Z +%s):1200"
A=""
pol() { acurl -s "$A/volumes/$1/snapshot-policy"; }
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
made() { pol "$1" | jq_ "d['counts']['$2']['made']"; }
made_at_least() { [ "$(made "$1" "$2")" -ge "$3" ]; }
snaps() { acurl -s "$A/volumes/$1/snapshots" | jq_ "' '.join(s['name'] for s in d['snapshots'])"; }
count_kind() { snaps "$1" | tr ' ' '\n' | grep -c "^$2-"; }

dsnfsd_start -c "$conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
check "a snapshot by hand: mine" ctl snapshot create ds3 mine
check "the policy of the config: GET says source config" \
	bash -c "acurl -s '$A/volumes/ds3/snapshot-policy' | grep -q '\"source\": *\"config\"'"
check "3 hourly snapshots come in 12 s of the test clock" wait_for 12 made_at_least ds3 hourly 3
hourly=$(count_kind ds3 hourly)
check "retention keeps 2 hourly ($hourly)" [ "$hourly" = 2 ]
check "... and the daily and weekly of Monday 00:00" \
	bash -c "[ \"\$(acurl -s '$A/volumes/ds3/snapshots' | grep -o 'daily-2026-12-07_0000\|weekly-2026-12-07_0000' | sort -u | wc -l)\" = 2 ]"
check "the snapshot by hand stays" bash -c "acurl -s '$A/volumes/ds3/snapshots' | grep -q '\"mine\"'"
check "the policy snapshot is immutable on disk" bash -c "lsattr -d '$ds3/.snapshot/daily-2026-12-07_0000' | grep -q '^....i'"
check "a log line per snapshot made" grep -q 'snapshot-policy: ds3: hourly: made hourly-2026-12-07_0' "$TEST_TMP/dsnfsd.log"
check "... and per one deleted" grep -q 'snapshot-policy: ds3: hourly: deleted hourly-2026-12-07_0000 (keep 2)' "$TEST_TMP/dsnfsd.log"
acurl -s "$A/metrics" >"$TEST_TMP/metrics"
check "/metrics passes the strict checker" python3 "$(dirname "$0")/promparse.py" "$TEST_TMP/metrics"
check "/metrics: made_total of ds3 hourly" grep -qE '^dsnfs_snapshot_policy_made_total\{volume="ds3",kind="hourly"\} [3-9]' "$TEST_TMP/metrics"
check "/metrics: deleted_total of ds3 hourly" grep -qE '^dsnfs_snapshot_policy_deleted_total\{volume="ds3",kind="hourly"\} [1-9]' "$TEST_TMP/metrics"
check "/metrics: failed_total 0" grep -qE '^dsnfs_snapshot_policy_failed_total\{volume="ds3",kind="hourly"\} 0$' "$TEST_TMP/metrics"
check "/metrics: last success set" grep -qE '^dsnfs_snapshot_policy_last_success_seconds\{volume="ds3"\} 17' "$TEST_TMP/metrics"
check "/metrics: no alarm on ds3" grep -qE '^dsnfs_snapshot_policy_alarm\{volume="ds3"\} 0$' "$TEST_TMP/metrics"

# SIGHUP lowers the keep to 1: live, at the next hour.
write_conf 1
kill -HUP "$DSNFSD_PID"
n=$(made ds3 hourly)
check "after SIGHUP (keep 1), another hourly" wait_for 8 made_at_least ds3 hourly $((n + 1))
hourly=$(count_kind ds3 hourly)
check "... and 1 hourly kept ($hourly)" [ "$hourly" = 1 ]

# Bad input: 400 and nothing changes; unknown datastore 404; no token 401.
put() {
	acurl -s -o "$TEST_TMP/body" -w '%{http_code}' -X PUT \
		-H 'Content-Type: application/json' -d "$2" "$A/volumes/$1/snapshot-policy"
}
for bad in '{"hourly": "05 keep 2"}' '{"yearly": ":05 keep 2"}' '{"hourly": 5}' \
	'{"hourly": ":00 keep 200", "daily": "00:00 keep 56"}' '[]' '{"daily": "25:00 keep 1"}'; do
	code=$(put ds3 "$bad")
	check "PUT $bad: 400" status_is "$code" 400
done
check "... the 255 rule named" bash -c "code=\$(acurl -s -X PUT -H 'Content-Type: application/json' -d '{\"hourly\": \":00 keep 200\", \"daily\": \"00:00 keep 56\"}' '$A/volumes/ds3/snapshot-policy'); echo \"\$code\" | grep -q 255"
check "... the config's policy still rules" bash -c "acurl -s '$A/volumes/ds3/snapshot-policy' | grep -q '\"source\": *\"config\"'"
code=$(put nosuch '{"hourly": ":00 keep 1"}')
check "PUT on an unknown datastore: 404" status_is "$code" 404
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
	-d '{"hourly": ":00 keep 1"}' "$A/volumes/ds3/snapshot-policy")
check "PUT without the token: 401" status_is "$code" 401

# The API's policy over the config's, with dsnfsctl; kept across a restart.
check "dsnfsctl snapshot policy set ds3 --hourly ':30 keep 3'" \
	ctl snapshot policy set ds3 --hourly ':30 keep 3'
check "dsnfsctl snapshot policy show ds3: api, :30 keep 3, daily off" \
	bash -c "'$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT snapshot policy show ds3 | tr -s ' ' | grep -q 'hourly :30 keep 3' && '$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT snapshot policy show ds3 | grep -q 'policy from api'"
check "the API's policy is in the state dir" grep -q '":30 keep 3"' "$TEST_TMP/state/snapshot-policies.json"

# A datastore without reflink (ext4): the alarm, not a silent skip.
code=$(put ds1 '{"hourly": ":00 keep 1"}')
check "PUT on ds1 (ext4): 200" status_is "$code" 200
alarm_on() { pol ds1 | grep -q '"alarm": *".*reflink'; }
check "ds1's policy raises its alarm, naming reflink" wait_for 8 alarm_on
check "... logged at warn" grep -q 'snapshot-policy: ds1: alarm raised: the policy cannot run' "$TEST_TMP/dsnfsd.log"
acurl -s "$A/metrics" >"$TEST_TMP/metrics"
check "/metrics: the alarm of ds1 is 1" grep -qE '^dsnfs_snapshot_policy_alarm\{volume="ds1"\} 1$' "$TEST_TMP/metrics"
check "/metrics: failed_total of ds1 hourly" grep -qE '^dsnfs_snapshot_policy_failed_total\{volume="ds1",kind="hourly"\} [1-9]' "$TEST_TMP/metrics"
check "dsnfsctl snapshot policy clear ds1" ctl snapshot policy clear ds1
check "... the alarm goes with it" bash -c "! acurl -s '$A/volumes/ds1/snapshot-policy' | grep -q '\"alarm\": *\"'"

check "dsnfsd stops cleanly" dsnfsd_stop
dsnfsd_start -c "$conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
check "after a restart the API's policy of ds3 rules" \
	bash -c "acurl -s '$A/volumes/ds3/snapshot-policy' | grep -q '\"hourly\": *\":30 keep 3\"'"
check "... and ds1's stays cleared (source api, all off)" \
	bash -c "acurl -s '$A/volumes/ds1/snapshot-policy' | grep -q '\"hourly\": *\"off\"'"
check "dsnfsd stops cleanly" dsnfsd_stop
# Without the admin endpoint nothing runs a policy: the log says so.
dsnfsd_start -c "$conf" -A off || exit 1
check "admin_port off: an error names the policy not run" \
	grep -q 'snapshot-policy: ds3: not run: snapshot policies run in the admin endpoint' "$TEST_TMP/dsnfsd.log"
check "dsnfsd stops cleanly" dsnfsd_stop
test_done
