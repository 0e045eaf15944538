#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The 255 snapshots of a datastore (issue 28, as ANF's): on a loop XFS,
# 255 snapshots by hand (snapfill.py); a 256th by hand is 409; an hourly
# policy, keep 1 (test clock, an hour in 3 s) is refused and raises its alarm
# (GET, /metrics, the log), never deleting a snapshot by hand; with one
# deleted, the next hourly is made (255 again) and the alarm clears; at
# the limit the next one rotates (the oldest hourly goes first) and the
# datastore stays at 255.  Needs root.
. "$(dirname "$0")/lib.sh"

ds3=$TEST_TMP/ds3
xfs_loop "$ds3"
conf=$TEST_TMP/limit.conf
{
	printf '[datastore ds3]\npath = %s\n' "$ds3"
	lab_access
} >"$conf"
echo v1 >"$ds3/a.txt"
export DSNFSD_TEST_POLICY_CLOCK="$(date -u -d 2026-12-07T00:30:00Z +%s):1200"
dsnfsd_start -c "$conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
count() { acurl -s "$A/volumes/ds3/snapshots" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["snapshots"]))'; }
pol() { acurl -s "$A/volumes/ds3/snapshot-policy"; }
made() { pol | python3 -c 'import json,sys; print(json.load(sys.stdin)["counts"]["hourly"]["made"])'; }

check "255 snapshots by hand" python3 "$(dirname "$0")/snapfill.py" "$ADMIN_PORT" "$DSNFS_ADMIN_TOKEN_FILE" ds3 255 hand
check "... listed" [ "$(count)" = 255 ]
code=$(post /volumes/ds3/snapshots '{"name": "one-more"}')
check "a 256th by hand: 409" status_is "$code" 409
check "... naming the 255" body_has 255
code=$(acurl -s -o "$TEST_TMP/body" -w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
	-d '{"hourly": ":00 keep 1"}' "$A/volumes/ds3/snapshot-policy")
check "PUT an hourly policy, keep 1: 200" status_is "$code" 200
alarm_255() { pol | grep -q '"alarm": *"hourly: hourly-.* refused: the datastore holds 255'; }
check "the hourly snapshot is refused and raises the alarm" wait_for 8 alarm_255
check "... logged at warn" grep -q 'snapshot-policy: ds3: alarm raised: the policy cannot run: .*255' "$TEST_TMP/dsnfsd.log"
acurl -s "$A/metrics" >"$TEST_TMP/metrics"
check "/metrics: the alarm is 1" grep -qE '^dsnfs_snapshot_policy_alarm\{volume="ds3"\} 1$' "$TEST_TMP/metrics"
check "/metrics: a failure counted" grep -qE '^dsnfs_snapshot_policy_failed_total\{volume="ds3",kind="hourly"\} [1-9]' "$TEST_TMP/metrics"
check "no snapshot by hand was deleted (255 still)" [ "$(count)" = 255 ]

check "one snapshot by hand deleted" ctl snapshot delete ds3 hand000
made_1() { [ "$(made)" -ge 1 ]; }
check "the next hourly is made" wait_for 8 made_1
check "... the datastore holds 255" [ "$(count)" = 255 ]
check "... the alarm cleared" bash -c "! acurl -s '$A/volumes/ds3/snapshot-policy' | grep -q '\"alarm\": *\"'"
made_3() { [ "$(made)" -ge 3 ]; }
check "two more hourly at the limit (the oldest hourly goes first)" wait_for 10 made_3
check "... still 255, 1 of them hourly" bash -c "[ \"\$(acurl -s '$A/volumes/ds3/snapshots' | grep -o '\"hourly-[^\"]*\"' | wc -l)\" = 1 ]"
check "... and 254 by hand" bash -c "[ \"\$(acurl -s '$A/volumes/ds3/snapshots' | grep -o '\"hand[0-9]*\"' | wc -l)\" = 254 ]"
check "... a log line for the rotation" grep -q 'snapshot-policy: ds3: hourly: deleted hourly-.* (keep 1)' "$TEST_TMP/dsnfsd.log"
check "dsnfsd stops cleanly" dsnfsd_stop
test_done
