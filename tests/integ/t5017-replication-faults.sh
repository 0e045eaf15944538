#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Replication faults (issue 28 item 3; docs/replication.md, "Atomic per
# transfer"): two dsnfsd on loopback (src on one XFS loop, dsr on
# another), [replication r1] with schedule = none.
#  1. kill -9 of the destination in the middle of a transfer: while it
#     applies, its GET says "applying"; the source's transfer fails; the
#     destination restarted has undone the part applied (its live tree
#     is the last replica again: no part of big.img); the next transfer
#     starts the same one again (last.restarted) and completes: the
#     sha256 of every file over NFS and in the replica.
#  2. a full destination (its file system filled to 16 MiB free): the
#     transfer of a 64 MiB file ends with ENOSPC (GET: last_error ENOSPC,
#     the reason, state idle), the live tree back at the last replica
#     (readable over NFS, big.img's sha256), the marker gone, and the
#     lag counted from that replica, not from the failed transfer's
#     snapshot; room again, the next transfer completes.
#  3. a schedule that cannot be met (schedule_seconds = 1, a transfer of
#     128 MiB): the overlapping runs are skipped and counted, the alarm
#     raised in GET and logged; dsnfsctl replication show prints the
#     schedule in seconds (it said "10min").
# Fails on the old code: no "applying" state, no undo at the restart (a
# part of big.img stays on dsr), no last.restarted, no last_error, no
# abort after ENOSPC (a part of big2.img stays), the lag of the failed
# transfer's snapshot, "schedule 10min".  Needs root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/repl_lib.sh"

src=$TEST_TMP/src
xfs_loop "$src"
# dsr is a directory of its file system, so that a filler file can take
# the room beside it.
xfs_loop "$TEST_TMP/dfs"
dsr=$TEST_TMP/dfs/dsr
mkdir "$dsr"
repl_key
trap 'srv_cleanup; xfs_loop_cleanup' EXIT

{
	printf '[datastore dsr]\npath = %s\n' "$dsr"
	lab_access
	repl_section destination r1 dsr
} >"$TEST_TMP/dst.conf"
srv_start dst "$TEST_TMP/dst.conf" || exit 1
{
	printf '[datastore src]\npath = %s\n' "$src"
	lab_access
	repl_section source r1 src destination_url="$dst_URL" \
		destination_datastore=dsr schedule=none
} >"$TEST_TMP/src.conf"
srv_start src "$TEST_TMP/src.conf" || exit 1

srel() { rel src src r1 "$1"; }
drel() { rel dst dsr r1 "$1"; }
transfer() { rel_act src src transfer r1 >/dev/null; }
ok_after() { [ "$(srel "r['transfers_ok']")" -gt "$1" ] && [ "$(srel "r['running']")" = False ]; }
failed_after() { [ "$(srel "r['transfers_failed']")" -gt "$1" ] && [ "$(srel "r['running']")" = False ]; }
live_is_replica() { # the live tree of dsr is its snapshot $1
	diff -r --no-dereference -x .snapshot "$dsr" "$dsr/.snapshot/$1" >/dev/null
}

# The baseline.
echo "small replica file" >"$TEST_TMP/small.txt"
cp "$TEST_TMP/small.txt" "$src/small.txt"
transfer
check "the baseline ends" wait_for 60 ok_after 0
snap1=$(srel "r['last_snapshot']")

# 1. kill -9 of the destination mid-transfer.
head -c 96M /dev/urandom >"$TEST_TMP/big.img"
cp "$TEST_TMP/big.img" "$src/big.img"
# A whole file grows as its data comes (its size set at its end): the
# size says how far the transfer is; the source slowed so that the kill
# falls in its middle.
throttle_start "$src_PID"
transfer
grown() { [ -f "$dsr/big.img" ] && [ "$(stat -c %s "$dsr/big.img")" -ge 8388608 ]; }
check "the transfer is under way (8 MiB of big.img on dsr)" wait_for 60 grown
check "... the destination's GET says applying" [ "$(drel "r['state']")" = applying ]
check "... its marker is kept" [ -f "$TEST_TMP/dst.state/repl-r1.applying" ]
srv_kill9 dst
throttle_stop "$src_PID"
check "killed mid-transfer (a part of big.img on dsr)" [ "$(stat -c %s "$dsr/big.img")" -lt 100663296 ]
check "the source's transfer fails" wait_for 90 failed_after 0
check "... with the transport's error: $(srel "r['last_error']")" \
	has "$(srel "r['last_error']")" ECONN
srv_restart dst || exit 1
check "the restarted destination undid the part applied (no big.img)" [ ! -e "$dsr/big.img" ]
check "... its live tree is the last replica $snap1" live_is_replica "$snap1"
check "... no marker" [ ! -e "$TEST_TMP/dst.state/repl-r1.applying" ]
check "... said so in its log" grep -q 'r1: a transfer was applied in part when the server stopped: undone' "$TEST_TMP/dst.log"
check "... small.txt over NFS" same_on dst dsr small.txt "$TEST_TMP/small.txt"
n=$(srel "r['transfers_ok']")
transfer
check "the next transfer completes" wait_for 120 ok_after "$n"
check "... started again (last.restarted)" [ "$(srel "r['last']['restarted']")" = True ]
check "... no error left" [ -z "$(srel "r['last_error']")" ]
check "big.img on dsr over NFS: same sha256" same_on dst dsr big.img "$TEST_TMP/big.img"
snap2=$(srel "r['last_snapshot']")
check "... and in the replica $snap2" cmp -s "$dsr/.snapshot/$snap2/big.img" "$TEST_TMP/big.img"
check "the destination's GET: idle, last replica $snap2" \
	[ "$(drel "r['state'] + ' ' + r['last_snapshot']")" = "idle $snap2" ]

# 2. A full destination.
fallocate -l $(($(stat -f -c '%a*%S' "$dsr") - 16 * 1048576)) "$TEST_TMP/dfs/filler"
head -c 64M /dev/urandom >"$TEST_TMP/big2.img"
cp "$TEST_TMP/big2.img" "$src/big2.img"
sleep 2 # the failing transfer's snapshot is 2 s younger than $snap2's
f=$(srel "r['transfers_failed']")
transfer
check "the transfer to the full destination fails" wait_for 120 failed_after "$f"
check "GET: last_error ENOSPC" [ "$(srel "r['last_error']")" = ENOSPC ]
check "... the reason: $(srel "r['error']")" has "$(srel "r['error']")" 'No space left'
check "... last_error_s set" [ "$(srel "r['last_error_s']")" -ge "$(srel "r['last_transfer_s']")" ]
check "... state idle, the last replica still $snap2" \
	[ "$(srel "r['state'] + ' ' + r['last_snapshot']")" = "idle $snap2" ]
check "the live tree is the last replica again (aborted: no big2.img)" live_is_replica "$snap2"
check "... no marker" [ ! -e "$TEST_TMP/dst.state/repl-r1.applying" ]
check "... big.img over NFS: same sha256" same_on dst dsr big.img "$TEST_TMP/big.img"
check "... the replica $snap2 reads whole" cmp -s "$dsr/.snapshot/$snap2/big.img" "$TEST_TMP/big.img"
lag_ok() { # the lag counts from the last committed replica
	local lag since
	lag=$(srel "r['lag_s']")
	since=$(($(date +%s) - $(srel "r['last_transfer_s']")))
	[ "$lag" -ge "$since" ] || {
		echo "    lag $lag s < $since s since $snap2 was committed"
		return 1
	}
}
check "the lag counts from $snap2, not from the failed transfer" lag_ok
ctl_() { "$DSNFS_BIN/dsnfsctl" -s "127.0.0.1:$src_ADMIN" "$@"; }
export DSNFS_ADMIN_TOKEN_FILE="$TEST_TMP/src.state/admin.token"
ctl_ replication show src >"$TEST_TMP/show.txt" 2>&1
check "dsnfsctl replication show: the error and ENOSPC" grep -q 'No space left.*(ENOSPC)' "$TEST_TMP/show.txt"
rm "$TEST_TMP/dfs/filler"
n=$(srel "r['transfers_ok']")
transfer
check "room again: the transfer completes" wait_for 120 ok_after "$n"
check "big2.img on dsr over NFS: same sha256" same_on dst dsr big2.img "$TEST_TMP/big2.img"

# 3. A schedule that cannot be met: every second, a 128 MiB transfer.
srv_stop src || FAILS=$((FAILS + 1))
sed -i 's/^schedule = none$/schedule = 10min\nschedule_seconds = 1/' "$TEST_TMP/src.conf"
head -c 128M /dev/urandom >"$src/big3.img"
srv_start src "$TEST_TMP/src.conf" || exit 1
throttle_start "$src_PID" # each transfer outlasts its second
# One GET for both: the next run that starts clears the alarm.
skipped() {
	local a
	a=$(srel "str(r['runs_skipped']) + '|' + r['alarm']")
	[ "${a%%|*}" -ge 1 ] && [[ "${a#*|}" == *'outlasted the schedule'* ]] &&
		echo "    $a"
}
check "a run falls due while the transfer runs: skipped, the alarm in GET" wait_for 60 skipped
throttle_stop "$src_PID"
check "... logged" grep -q 'r1: the last transfer still runs when the next is due: run skipped' "$TEST_TMP/src.log"
ctl_ replication show src >"$TEST_TMP/show.txt" 2>&1
check "dsnfsctl replication show: schedule every 1 s" grep -q '^  schedule      every 1 s$' "$TEST_TMP/show.txt"
check "... runs skipped counted" grep -qE 'ok, [0-9]+ failed, [1-9][0-9]* skipped' "$TEST_TMP/show.txt"
big3_on_dst() { same_on dst dsr big3.img "$src/big3.img"; }
check "the scheduled transfers bring big3.img over" wait_for 120 big3_on_dst

srv_stop src || FAILS=$((FAILS + 1))
srv_stop dst || FAILS=$((FAILS + 1))
if [ "$FAILS" -ne 0 ]; then
	grep -h 'replication' "$TEST_TMP/src.log" "$TEST_TMP/dst.log" | tail -30
fi
test_done
