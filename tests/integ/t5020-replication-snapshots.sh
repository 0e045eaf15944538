#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Replication carries the source's own snapshots (docs/replication.md,
# "Snapshots"), as ANF's ("including all snapshots"): two dsnfsd as in
# t5016 (src and dsr on loop-mounted XFS, [replication r1]), src with an
# hourly snapshot policy on a test clock (DSNFSD_TEST_POLICY_CLOCK: the
# hour 00:00 comes 10 s after the start).  After the baseline, three
# snapshots by hand (dsnfsctl) with writes over NFS between them and the
# policy's hourly; one transfer carries the four: each is in
# dsr/.snapshot read over NFS with the source's bytes (sha256), listed by
# the destination's API with the source's time, the replica after them;
# one deleted on the source goes from dsr at the next transfer; a kill -9
# of the source while the chain's second snapshot is sent leaves the
# first whole on dsr and no trace of the second, and the restarted
# source completes it; GET, /metrics and dsnfsctl say how many the last
# transfer carried.  Needs root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/repl_lib.sh"

src=$TEST_TMP/src
dsr=$TEST_TMP/dsr
xfs_loop "$src"
xfs_loop "$dsr"
repl_key
trap 'srv_cleanup; xfs_loop_cleanup' EXIT
{
	printf '[datastore dsr]\npath = %s\n' "$dsr"
	lab_access
	repl_section destination r1 dsr
} >"$TEST_TMP/dst.conf"
srv_start dst "$TEST_TMP/dst.conf" || exit 1
D=$dst_URL
dcurl() { scurl dst "$@"; }
durl() { srv_nfs_url dst dsr "$1"; }

{
	printf '[datastore src]\npath = %s\nsnapshot_hourly = :00 keep 2\n' "$src"
	lab_access
	repl_section source r1 src destination_url="$D" \
		destination_datastore=dsr schedule=none
} >"$TEST_TMP/src.conf"
# The policy's clock: 23:59:50 at the start, real speed: its hourly at
# 00:00 is 10 s away, the next an hour.
export DSNFSD_TEST_POLICY_CLOCK="$(date -u -d 2026-12-06T23:59:50Z +%s):1"
dsnfsd_start -c "$TEST_TMP/src.conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
rel() { acurl -s "$A/volumes/src/replication" | jq_ "d['relations'][0]$1"; }
transfer() { acurl -s -o "$TEST_TMP/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{}' "$A/volumes/src/replication/transfer?relation=r1"; }
ok_count() { rel "['transfers_ok']"; }
done_after() { [ "$(ok_count)" -gt "$1" ] && [ "$(rel "['running']")" = False ]; }
# sha256 of FILE read over NFS from src's or dsr's snapshot SNAP.
sum_src() { nfs-cat "$(nfs_url src ".snapshot/$1/$2")" 2>/dev/null | sha256sum | cut -c1-64; }
sum_dsr() { nfs-cat "$(durl ".snapshot/$1/$2")" 2>/dev/null | sha256sum | cut -c1-64; }
same_snap() { # SNAP FILE...: each FILE of SNAP, over NFS, the same on both
	local s=$1 f
	shift
	for f in "$@"; do
		[ "$(sum_dsr "$s" "$f")" = "$(sum_src "$s" "$f")" ] || return 1
		[ "$(sum_src "$s" "$f")" != "$(sha256sum </dev/null | cut -c1-64)" ] || return 1
	done
}
dsr_snaps() { dcurl -s "$D/volumes/dsr/snapshots" | jq_ "' '.join(sorted(s['name'] for s in d['snapshots']))"; }
snap_time() { # URL NAME
	"$1" -s "$2/snapshots" | jq_ "[s['created_s'] for s in d['snapshots'] if s['name']=='$3'][0]"
}

head -c 16M /dev/urandom >"$TEST_TMP/disk.img"
echo "version 0" >"$TEST_TMP/small.txt"
check "nfs-cp disk.img to src" nfs-cp "$TEST_TMP/disk.img" "$(nfs_url src disk.img)"
check "nfs-cp small.txt to src" nfs-cp "$TEST_TMP/small.txt" "$(nfs_url src small.txt)"
transfer >/dev/null
check "the baseline ends" wait_for 60 done_after 0
check "... it carried no snapshot (none yet)" [ "$(rel "['last']['snapshots']")" = 0 ]

# Three snapshots by hand, a write over NFS before each.
# (nfs-cp makes new files only: a new one each time; disk.img is
# patched in place on the server.)
for i in 1 2 3; do
	echo "version $i" >"$TEST_TMP/v.txt"
	check "nfs-cp v$i.txt to src" nfs-cp "$TEST_TMP/v.txt" "$(nfs_url src v$i.txt)"
	head -c 256K /dev/urandom | dd of="$src/disk.img" bs=256K seek=$i conv=notrunc status=none
	check "dsnfsctl snapshot create src hand-$i" ctl snapshot create src "hand-$i"
done
check "the policy's hourly at 00:00 on src" wait_for 30 bash -c \
	"'$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT snapshot list src | grep -q '^hourly-2026-12-07_0000'"
pol=hourly-2026-12-07_0000
echo "version 4" >"$TEST_TMP/v.txt"
check "nfs-cp v4.txt to src" nfs-cp "$TEST_TMP/v.txt" "$(nfs_url src v4.txt)"
n=$(ok_count)
transfer >/dev/null
check "the transfer ends" wait_for 60 done_after "$n"
check "... without error" [ -z "$(rel "['error']")" ]
check "... it carried 4 snapshots" [ "$(rel "['last']['snapshots']")" = 4 ]
for s in hand-1 hand-2 hand-3 $pol; do
	check "dsr/.snapshot/$s over NFS: the source's bytes (sha256)" same_snap "$s" disk.img small.txt v1.txt
	check "... listed by dsr's API with the source's time" \
		[ "$(snap_time dcurl "$D/volumes/dsr" "$s")" = "$(snap_time acurl "$A/volumes/src" "$s")" ]
done
check "dsr's hand-2 holds v2.txt, not v3.txt" eval \
	'[ "$(nfs-cat "$(durl .snapshot/hand-2/v2.txt)" 2>/dev/null)" = "version 2" ] &&
	 ! nfs-cat "$(durl .snapshot/hand-2/v3.txt)" >/dev/null 2>&1'
check "the three disk.img differ" eval \
	'[ "$(sum_dsr hand-1 disk.img)" != "$(sum_dsr hand-2 disk.img)" ] &&
	 [ "$(sum_dsr hand-2 disk.img)" != "$(sum_dsr hand-3 disk.img)" ]'
last=$(rel "['last_snapshot']")
check "the replica $last after them: v4.txt" [ "$(nfs-cat "$(durl .snapshot/$last/v4.txt)" 2>/dev/null)" = "version 4" ]
check "dsr's snapshots: the four and the replica" [ "$(dsr_snaps)" = "hand-1 hand-2 hand-3 $pol $last" ]
check "READDIR of dsr/.snapshot over NFS lists them" bash -c \
	"nfs-ls '$(durl .snapshot)' 2>/dev/null | grep -c -e hand- -e hourly- | grep -qx 4"

# One deleted on the source: gone from dsr at the next transfer.
check "dsnfsctl snapshot delete src hand-2" ctl snapshot delete src hand-2
n=$(ok_count)
transfer >/dev/null
check "the next transfer ends" wait_for 60 done_after "$n"
check "... it deleted 1 and carried none" \
	[ "$(rel "['last']['snapshots_deleted']") $(rel "['last']['snapshots']")" = "1 0" ]
check "hand-2 gone from dsr (API)" bash -c "! [[ ' $(dsr_snaps) ' == *' hand-2 '* ]]"
check "... and from dsr/.snapshot over NFS" bash -c "! nfs-ls '$(durl .snapshot)' 2>/dev/null | grep -q hand-2"
check "hand-1 and hand-3 stay" eval 'same_snap hand-1 disk.img && same_snap hand-3 disk.img'

# kill -9 of the source while the chain's second snapshot is sent.
head -c 96M /dev/urandom >"$TEST_TMP/big.img"
check "nfs-cp big.img (96 MiB) to src" nfs-cp "$TEST_TMP/big.img" "$(nfs_url src big.img)"
check "snapshot big-a" ctl snapshot create src big-a
head -c 96M /dev/urandom >"$TEST_TMP/big.img"
check "big.img rewritten on src (96 MiB)" cp "$TEST_TMP/big.img" "$src/big.img"
check "snapshot big-b" ctl snapshot create src big-b
# The source slowed (lib.sh) so that the kill falls while big-b is sent.
throttle_start "$DSNFSD_PID"
transfer >/dev/null
in_b() { [ "$(head -1 "$TEST_TMP/state/repl-r1.journal" 2>/dev/null)" = big-b ] && [ -e "$TEST_TMP/dst.state/repl-r1.applying" ]; }
check "the chain reaches big-b (big-a committed)" wait_for 90 in_b
sleep 0.3
kill -9 "$DSNFSD_PID"
throttle_stop "$DSNFSD_PID"
wait "$DSNFSD_PID" 2>/dev/null
DSNFSD_PID=""
check "killed while big-b was applied (dsr's marker: big-b)" grep -q '^big-b big-a$' "$TEST_TMP/dst.state/repl-r1.applying"
check "big-a on dsr whole" bash -c \
	"[ \"\$(nfs-cat '$(durl .snapshot/big-a/big.img)' 2>/dev/null | sha256sum)\" = \"\$(sha256sum <'$src/.snapshot/big-a/big.img')\" ]"
check "no big-b on dsr: not in its API, not in .snapshot" bash -c \
	"! [[ ' $(dsr_snaps) ' == *' big-b '* ]] && ! nfs-ls '$(durl .snapshot)' 2>/dev/null | grep -q big-b"
check "the source's state: its tip is big-a" grep -qx 'tip=big-a' "$TEST_TMP/state/repl-r1.state"
dsnfsd_start -c "$TEST_TMP/src.conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
transfer >/dev/null
check "the restarted source completes the chain" wait_for 120 done_after 0
check "... it carried big-b" [ "$(rel "['last']['snapshots']")" = 1 ]
check "big-b on dsr: the source's bytes" bash -c \
	"[ \"\$(nfs-cat '$(durl .snapshot/big-b/big.img)' 2>/dev/null | sha256sum)\" = \"\$(sha256sum <'$TEST_TMP/big.img')\" ]"
check "big-a still the source's" bash -c \
	"[ \"\$(nfs-cat '$(durl .snapshot/big-a/big.img)' 2>/dev/null | sha256sum)\" = \"\$(sha256sum <'$src/.snapshot/big-a/big.img')\" ]"
check "no marker left on dsr" [ ! -e "$TEST_TMP/dst.state/repl-r1.applying" ]

# The figures.
acurl -s "$A/metrics" >"$TEST_TMP/metrics"
check "/metrics passes the strict checker" python3 "$(dirname "$0")/promparse.py" "$TEST_TMP/metrics"
check "/metrics: the last transfer carried 1" grep -qE '^dsnfs_replication_last_snapshots\{relation="r1",volume="src"\} 1$' "$TEST_TMP/metrics"
check "/metrics: carried in all" grep -qE '^dsnfs_replication_snapshots_total\{relation="r1",volume="src"\} 1$' "$TEST_TMP/metrics"
ctl replication show src >"$TEST_TMP/show.txt" 2>&1
cat "$TEST_TMP/show.txt"
check "dsnfsctl replication show: the snapshots line" grep -q '^  snapshots     1 carried, 0 deleted by the last transfer; 1 carried in all$' "$TEST_TMP/show.txt"
check "a log line per transfer, with the count" grep -q 'replication: r1: transfer .* 1 snapshots carried, 0 deleted' "$TEST_TMP/dsnfsd.log"

dsnfsd_stop || FAILS=$((FAILS + 1))
srv_stop dst || FAILS=$((FAILS + 1))
if [ "$FAILS" -ne 0 ]; then
	grep -h 'replication\|repl\|snapshot' "$TEST_TMP/dsnfsd.log" "$TEST_TMP/dst.log" | tail -30
fi
test_done
