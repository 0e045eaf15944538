#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Replication relations made through the admin API (issue 28;
# docs/replication.md, "Relations made through the API"): two dsnfsd as
# in t5016 (src and dsr on loop-mounted XFS) with no [replication]
# section.  POST /replications on the destination then on the source
# (the key inline, never a path), refusals first (401 without the token,
# 400 for a bad key, a missing field, key_file, an unknown datastore; 409
# for a name taken; 404 for DELETE of an unknown one); a transfer runs and
# the files read over NFS from dsr have the source's bytes; the files
# kept in the state directory are 0600 and hold no key in .relation; the
# source restarted keeps the relation (origin api) and transfers again;
# DELETE /volumes/src is 409 while it is in a relation; a [replication
# r1] of the config wins over the kept one (logged; DELETE is 409), and
# the kept one comes back when the section goes; a truncated kept file
# is refused at the start with a log line; dsnfsctl replication
# list/create/delete; DELETE on the destination leaves dsr writable over
# NFS and its snapshots in place.  Needs root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/repl_lib.sh"

src=$TEST_TMP/src
dsr=$TEST_TMP/dsr
xfs_loop "$src"
xfs_loop "$dsr"
repl_key
KEY=$(cat "$TEST_TMP/r.key")
# A stopped (throttled) server would never take the cleanup's SIGTERM.
trap 'throttle_stop "${dst_PID:-}"; srv_cleanup; xfs_loop_cleanup' EXIT

{
	printf '[datastore dsr]\npath = %s\n' "$dsr"
	lab_access
} >"$TEST_TMP/dst.conf"
{
	printf '[datastore src]\npath = %s\n' "$src"
	lab_access
} >"$TEST_TMP/src.conf"
cp "$TEST_TMP/src.conf" "$TEST_TMP/src-plain.conf"
srv_start dst "$TEST_TMP/dst.conf" || exit 1
srv_start src "$TEST_TMP/src.conf" || exit 1
D=$dst_URL
S=$src_URL
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# POST /replications to server NAME with body JSON: prints the status.
mk() { scurl "$1" -s -o "$TEST_TMP/body" -w '%{http_code}' -X POST \
	-H 'Content-Type: application/json' -d "$2" "$(eval echo "\$${1}_URL")/replications"; }
del() { scurl "$1" -s -o "$TEST_TMP/body" -w '%{http_code}' -X DELETE \
	"$(eval echo "\$${1}_URL")/replications/$2"; }
# The relations of server NAME as "name:origin:role" lines, sorted.
list() { scurl "$1" -s "$(eval echo "\$${1}_URL")/replications" |
	jq_ "' '.join(sorted('%s:%s:%s' % (r['name'], r['origin'], r['role']) for r in d['relations']))"; }
transfer() { rel_act src src transfer r1 >/dev/null; }
ok_count() { rel src src r1 "r['transfers_ok']"; }
done_after() { [ "$(ok_count)" -gt "$1" ] && [ "$(rel src src r1 "r['running']")" = False ]; }
dst_body="{\"name\": \"r1\", \"role\": \"destination\", \"datastore\": \"dsr\", \"key\": \"$KEY\"}"
src_body="{\"name\": \"r1\", \"role\": \"source\", \"datastore\": \"src\", \"key\": \"$KEY\",
	\"destination_url\": \"$D\", \"destination_datastore\": \"dsr\", \"schedule\": \"none\",
	\"timeout_seconds\": 30}"

# Refusals: nothing made by any of them.
code=$(curl -s -o "$TEST_TMP/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d "$dst_body" "$D/replications")
check "POST /replications without the admin token: 401" status_is "$code" 401
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" "$D/replications")
check "GET /replications with the relation's key: 401" status_is "$code" 401
code=$(mk dst '{"name": "r1", "role": "destination", "datastore": "dsr", "key": "abc"}')
check "a key of 3 hex digits: 400" status_is "$code" 400
check "... the reason" body_has "64 hex digits"
code=$(mk dst '{"name": "r1", "role": "destination", "datastore": "dsr"}')
check "no key: 400" status_is "$code" 400
check "... the field named" body_has "'key' is missing"
code=$(mk dst "{\"name\": \"r1\", \"role\": \"destination\", \"datastore\": \"dsr\", \"key_file\": \"/etc/shadow\"}")
check "key_file (a path the server would read): 400" status_is "$code" 400
check "... inline only" body_has "inline"
code=$(mk dst "{\"name\": \"r1\", \"role\": \"destination\", \"datastore\": \"nope\", \"key\": \"$KEY\"}")
check "an unknown datastore: 400" status_is "$code" 400
check "... the reason" body_has "no such datastore"
code=$(mk dst "{\"name\": \"r1\", \"role\": \"source\", \"datastore\": \"dsr\", \"key\": \"$KEY\", \"schedule\": \"weekly\"}")
check "a bad schedule: 400, the config's words" status_is "$code" 400
check "... the reason" body_has "schedule is 10min, hourly, daily or none"
code=$(del dst r9)
check "DELETE /replications/r9 (unknown): 404" status_is "$code" 404
check "nothing made on dst" [ -z "$(list dst)" ]
check "no file kept on dst" bash -c "! ls '$TEST_TMP/dst.state' | grep -q '^repl-r1\\.'"

# The relation on both sides.
code=$(mk dst "$dst_body")
check "POST /replications on dst (destination): 201" status_is "$code" 201
check "... origin api" [ "$(jq_ "d['origin']" <"$TEST_TMP/body")" = api ]
code=$(mk dst "$dst_body")
check "the same name again: 409" status_is "$code" 409
check "... the reason" body_has "exists"
code=$(mk src "$src_body")
check "POST /replications on src (source): 201" status_is "$code" 201
check "GET /replications on src: r1, api, source" [ "$(list src)" = "r1:api:source" ]
for f in relation key; do
	check "src.state/repl-r1.$f: mode 600" [ "$(stat -c %a "$TEST_TMP/src.state/repl-r1.$f")" = 600 ]
done
check "... the key is not in the .relation" bash -c "! grep -q '$KEY' '$TEST_TMP/src.state/repl-r1.relation'"
check "... nor a .tmp left" bash -c "! ls '$TEST_TMP/src.state' | grep -q '\\.tmp\$'"

# A transfer, and the data on dsr.
head -c 4M /dev/urandom >"$TEST_TMP/disk.img"
echo "made through the API" >"$TEST_TMP/small.txt"
check "nfs-cp disk.img to src" nfs-cp "$TEST_TMP/disk.img" "$(srv_nfs_url src src disk.img)"
check "nfs-cp small.txt to src" nfs-cp "$TEST_TMP/small.txt" "$(srv_nfs_url src src small.txt)"
transfer
check "the baseline ends" wait_for 60 done_after 0
check "... without error" [ -z "$(rel src src r1 "r['error']")" ]
check "disk.img read over NFS from dsr: the source's sha256" same_on dst dsr disk.img "$TEST_TMP/disk.img"
check "small.txt too" same_on dst dsr small.txt "$TEST_TMP/small.txt"
check "dsr is read-only to NFS clients (a replica)" bash -c \
	"! nfs-cp '$TEST_TMP/small.txt' '$(srv_nfs_url dst dsr new.txt)' 2>/dev/null"
code=$(scurl src -s -o "$TEST_TMP/body" -w '%{http_code}' -X DELETE "$S/volumes/src")
check "DELETE /volumes/src while in r1: 409" status_is "$code" 409
check "... names the relation" body_has "relation r1"

# The source restarted: the relation is still there and transfers.
check "src stops" srv_stop src
srv_restart src || exit 1
check "src restarted: r1 restored, origin api" [ "$(list src)" = "r1:api:source" ]
check "... logged" grep -q "replication: r1: restored (made through the API)" "$TEST_TMP/src.log"
echo "after the restart" >"$TEST_TMP/v2.txt"
check "nfs-cp v2.txt to src" nfs-cp "$TEST_TMP/v2.txt" "$(srv_nfs_url src src v2.txt)"
n=$(ok_count)
transfer
check "a transfer after the restart ends" wait_for 60 done_after "$n"
check "v2.txt on dsr" same_on dst dsr v2.txt "$TEST_TMP/v2.txt"

# DELETE while a transfer runs (the destination slowed: each message
# waits): the transfer ends at its next message, the DELETE does not
# wait for it; made again, the relation resumes from its journal.
head -c 96M /dev/urandom >"$TEST_TMP/big.img"
cp "$TEST_TMP/big.img" "$src/big.img"
n=$(ok_count)
throttle_start "$dst_PID"
transfer
running() { [ "$(rel src src r1 "r['running']")" = True ]; }
check "a transfer of big.img runs" wait_for 20 running
# Its data arriving, not all there: WRITEs are left for the cancel to
# meet (a transfer past its last message would end "done").
partway() {
	local n
	n=$(stat -c %s "$dsr/big.img" 2>/dev/null) || return 1
	[ "$n" -gt 0 ] && [ "$n" -lt $((64 << 20)) ]
}
check "... big.img arriving on dsr" wait_for 20 partway
t0=$(date +%s)
code=$(del src r1)
t1=$(date +%s)
check "DELETE /replications/r1 during it: 204" status_is "$code" 204
check "... within 10 s ($((t1 - t0)) s)" [ $((t1 - t0)) -le 10 ]
canceled() {
	grep -q "replication: r1: transfer failed: .*Operation canceled" \
		"$TEST_TMP/src.log"
}
check "... the transfer ended at its next message" wait_for 20 canceled
canceled || grep "replication: r1: transfer" "$TEST_TMP/src.log" | tail -3
throttle_stop "$dst_PID"
check "... r1 gone from src" [ -z "$(list src)" ]
code=$(mk src "$src_body")
check "r1 made again on src: 201" status_is "$code" 201
n=$(ok_count)
transfer
check "its transfer ends" wait_for 120 done_after "$n"
check "big.img on dsr: the source's sha256" same_on dst dsr big.img "$TEST_TMP/big.img"

# The config wins over a kept relation of the same name.
check "src stops" srv_stop src
repl_section source r1 src destination_url="$D" destination_datastore=dsr \
	schedule=none >>"$TEST_TMP/src.conf"
srv_restart src || exit 1
check "[replication r1] in the config: r1 is the config's" [ "$(list src)" = "r1:config:source" ]
check "... logged" grep -q "config wins over the relation of that name" "$TEST_TMP/src.log"
code=$(del src r1)
check "DELETE /replications/r1 of the config: 409" status_is "$code" 409
check "... says where it is" body_has "dsnfsd.conf"
check "... the kept files stay" [ -f "$TEST_TMP/src.state/repl-r1.relation" ]
check "src stops" srv_stop src
cp "$TEST_TMP/src-plain.conf" "$TEST_TMP/src.conf"
# A truncated kept relation beside it: refused at the start, logged.
head -c 40 "$TEST_TMP/src.state/repl-r1.relation" >"$TEST_TMP/src.state/repl-bad.relation"
cp "$TEST_TMP/src.state/repl-r1.key" "$TEST_TMP/src.state/repl-bad.key"
chmod 600 "$TEST_TMP/src.state/repl-bad.relation"
srv_restart src || exit 1
check "the section gone: the kept r1 again, origin api" [ "$(list src)" = "r1:api:source" ]
check "a truncated repl-bad.relation: refused with a log line" \
	grep -q "relation bad made through the API: not restored: .*truncated" "$TEST_TMP/src.log"

# dsnfsctl.
sctl() { "$DSNFS_BIN/dsnfsctl" -s "127.0.0.1:$src_ADMIN" --token-file "$TEST_TMP/src.state/admin.token" "$@"; }
mkdir -p "$src/../src2" 2>/dev/null
check "dsnfsctl replication list: r1, api" bash -c \
	"'$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$src_ADMIN --token-file '$TEST_TMP/src.state/admin.token' replication list | grep -q '^r1 *api *source *src'"
check "dsnfsctl replication create r2 (destination_url missing): refused" bash -c \
	"! '$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$src_ADMIN --token-file '$TEST_TMP/src.state/admin.token' replication create r2 --role source --datastore src --key-file '$TEST_TMP/r.key' 2>'$TEST_TMP/ctl.err'"
check "... with the config's reason" grep -q "a source needs destination_url" "$TEST_TMP/ctl.err"
check "dsnfsctl replication create r2 (a second relation of src, to nowhere)" \
	sctl replication create r2 --role source --datastore src --key-file "$TEST_TMP/r.key" \
	--destination-url "http://127.0.0.1:1" --destination-datastore dsr --schedule none
check "... listed" [ "$(list src)" = "r1:api:source r2:api:source" ]
check "dsnfsctl replication delete r2" sctl replication delete r2
check "... gone, its files too" eval '[ "$(list src)" = "r1:api:source" ] && [ ! -e "$TEST_TMP/src.state/repl-r2.relation" ] && [ ! -e "$TEST_TMP/src.state/repl-r2.key" ]'

# DELETE on both sides.
code=$(del src r1)
check "DELETE /replications/r1 on src: 204" status_is "$code" 204
check "... its files gone" bash -c "! ls '$TEST_TMP/src.state' | grep -q '^repl-r1\\.\\(relation\\|key\\)\$'"
check "... GET /replications: none" [ -z "$(list src)" ]
snap=$(ls "$dsr/.snapshot" | grep '^repl-r1-' | tail -1)
code=$(del dst r1)
check "DELETE /replications/r1 on dst: 204" status_is "$code" 204
check "... dsr writable over NFS (broken off)" nfs-cp "$TEST_TMP/small.txt" "$(srv_nfs_url dst dsr new.txt)"
check "... its replica snapshot $snap stays" [ -n "$snap" ] && [ -d "$dsr/.snapshot/$snap" ]
check "... logged" grep -q "r1: deleted through the admin API: datastore broken off" "$TEST_TMP/dst.log"
code=$(del dst r1)
check "DELETE again: 404" status_is "$code" 404
code=$(scurl src -s -o /dev/null -w '%{http_code}' -X DELETE "$S/volumes/src")
check "DELETE /volumes/src: no longer 409" [ "$code" != 409 ]

check "src stops cleanly" srv_stop src
check "dst stops cleanly" srv_stop dst
if [ "$FAILS" -ne 0 ]; then
	grep -h 'replication\|repl' "$TEST_TMP/src.log" "$TEST_TMP/dst.log" | tail -30
fi
test_done
