#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Replication between two dsnfsd (issue 28 item 3; docs/replication.md):
# a source dsnfsd (datastore src on a loop-mounted XFS) and a destination
# dsnfsd (datastore dsr on another), each with its own state directory
# and ports on 127.0.0.1, [replication r1] in both configs with one key
# file.  Files written over NFS to src; the baseline, then sha256 of every
# file read back over NFS from dsr and from its replica snapshot; 1% of a
# file rewritten: the incremental sends far less than the file; dsr is
# read-only to NFS clients (NFS3ERR_ROFS, logged once) until the break on
# the destination (the failover), writable after; resync from the source
# takes dsr back to the last common snapshot and read-only; a kill -9 of
# the source in the middle of a transfer: the destination's last replica
# stays whole and readable, and the source restarted resumes the same
# transfer; the peer route refuses a wrong key, no key and the admin
# token (401, nothing applied); a destination that is the source
# datastore itself, and one that is not empty, are refused with their
# reason; /metrics and dsnfsctl have the relation's figures; with
# schedule_seconds the server's own thread transfers.  Needs root.
. "$(dirname "$0")/lib.sh"

src=$TEST_TMP/src
dsr=$TEST_TMP/dsr
xfs_loop "$src"
xfs_loop "$dsr"
mkdir -p "$TEST_TMP/dsn" "$TEST_TMP/dstate"
echo "not empty" >"$TEST_TMP/dsn/old.txt"
key=$TEST_TMP/r.key
openssl rand -hex 32 >"$key"
chmod 600 "$key"
DST_PID=""
cleanup_all() {
	[ -n "$DST_PID" ] && kill "$DST_PID" 2>/dev/null && wait "$DST_PID" 2>/dev/null
	xfs_loop_cleanup
}
trap cleanup_all EXIT

# The destination: dsr fed by r1, "same" (the source's own directory)
# fed by r2, dsn (not empty) fed by r3.
{
	for ds in dsr same dsn; do
		case $ds in
		dsr) p=$dsr ;; same) p=$src ;; dsn) p=$TEST_TMP/dsn ;;
		esac
		printf '[datastore %s]\npath = %s\n' "$ds" "$p"
		lab_access
	done
	for r in r1:dsr r2:same r3:dsn; do
		printf '[replication %s]\nrole = destination\ndatastore = %s\nkey_file = %s\n' \
			"${r%%:*}" "${r#*:}" "$key"
	done
} >"$TEST_TMP/dst.conf"
dst_start() {
	: >"$TEST_TMP/dst.out"
	"$DSNFS_BIN/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P off -A 0 \
		-s "$TEST_TMP/dstate" -c "$TEST_TMP/dst.conf" \
		>"$TEST_TMP/dst.out" 2>"$TEST_TMP/dst.log" &
	DST_PID=$!
	wait_for 10 grep -q '^dsnfsd: listening' "$TEST_TMP/dst.out" || {
		cat "$TEST_TMP/dst.log"
		return 1
	}
	local line
	line=$(grep '^dsnfsd: listening' "$TEST_TMP/dst.out")
	DST_NFS=$(echo "$line" | sed 's/.* nfs=\([0-9]*\).*/\1/')
	DST_MOUNT=$(echo "$line" | sed 's/.* mount=\([0-9]*\).*/\1/')
	DST_ADMIN=$(echo "$line" | sed 's/.* admin=\([0-9]*\).*/\1/')
}
dst_start || exit 1
D="http://127.0.0.1:$DST_ADMIN"
dcurl() {
	curl -H @<(printf 'Authorization: Bearer %s\n' "$(cat "$TEST_TMP/dstate/admin.token")") "$@"
}
durl() { echo "nfs://127.0.0.1/$1/$2?nfsport=$DST_NFS&mountport=$DST_MOUNT"; }

{
	printf '[datastore src]\npath = %s\n' "$src"
	lab_access
	for r in r1:dsr r2:same r3:dsn; do
		printf '[replication %s]\nrole = source\ndatastore = src\nkey_file = %s\n' "${r%%:*}" "$key"
		printf 'destination_url = %s\ndestination_datastore = %s\nschedule = none\n' "$D" "${r#*:}"
	done
} >"$TEST_TMP/src.conf"
dsnfsd_start -c "$TEST_TMP/src.conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
rel() { acurl -s "$A/volumes/src/replication" | jq_ "[r for r in d['relations'] if r['name']=='$1'][0]$2"; }
transfer() { acurl -s -o "$TEST_TMP/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{}' "$A/volumes/src/replication/transfer?relation=${1:-r1}"; }
ok_count() { rel r1 "['transfers_ok']"; }
done_after() { [ "$(ok_count)" -gt "$1" ] && [ "$(rel r1 "['running']")" = False ]; }

# Files over NFS: a 16 MiB disk, a small file, one in a directory.
head -c 16M /dev/urandom >"$TEST_TMP/disk.img"
echo "hello replica" >"$TEST_TMP/small.txt"
check "nfs-cp disk.img to src" nfs-cp "$TEST_TMP/disk.img" "$(nfs_url src disk.img)"
check "nfs-cp small.txt to src" nfs-cp "$TEST_TMP/small.txt" "$(nfs_url src small.txt)"
mkdir -p "$src/vm1" && cp "$TEST_TMP/small.txt" "$src/vm1/vm1.vmx"

same_on_dst() { # FILE over NFS from dsr (or PATH in dsr) == local FILE
	nfs-cat "$(durl dsr "$1")" >"$TEST_TMP/got" 2>/dev/null &&
		[ "$(sha256sum <"$TEST_TMP/got")" = "$(sha256sum <"$2")" ]
}

# The baseline.
code=$(transfer)
check "POST .../replication/transfer: 202" status_is "$code" 202
check "the baseline ends" wait_for 60 done_after 0
check "... without error" [ -z "$(rel r1 "['error']")" ]
check "disk.img on dsr over NFS: same sha256" same_on_dst disk.img "$TEST_TMP/disk.img"
check "small.txt on dsr: same sha256" same_on_dst small.txt "$TEST_TMP/small.txt"
check "vm1/vm1.vmx on dsr: same sha256" same_on_dst vm1/vm1.vmx "$TEST_TMP/small.txt"
snap1=$(rel r1 "['last_snapshot']")
check "the replica snapshot $snap1 on dsr holds disk.img" \
	cmp -s "$dsr/.snapshot/$snap1/disk.img" "$TEST_TMP/disk.img"
base_sent=$(rel r1 "['last']['sent_bytes']")
check "the baseline sent the data ($base_sent bytes)" [ "$base_sent" -ge 16777216 ]

# The incremental: 160 KiB (1%) of disk.img rewritten in place over
# NFS (WRITE calls of nfs3wire.py), and in the local copy.
nfs_write() { # NAME OFFSET FILE: FILE's bytes at OFFSET of src's NAME
	WIRE_DIR=$(dirname "$0") python3 - "$NFS_PORT" "$MOUNT_PORT" "$@" <<'PY'
import os, sys
sys.path.insert(0, os.environ["WIRE_DIR"])
from nfs3wire import Nfs3Client, mount_root
nfsport, mountport, name, off, path = sys.argv[1:6]
root = mount_root(("127.0.0.1", int(mountport)), "/src")
data = open(path, "rb").read()
with Nfs3Client(("127.0.0.1", int(nfsport))) as c:
    fh = c.lookup(root, name).object
    for i in range(0, len(data), 32768):
        r = c.write(fh, int(off) + i, data[i:i + 32768])
        if r.status != 0:
            raise SystemExit("WRITE: %d" % r.status)
PY
}
head -c 160K /dev/urandom >"$TEST_TMP/patch.bin"
dd if="$TEST_TMP/patch.bin" of="$TEST_TMP/disk.img" bs=16K seek=300 conv=notrunc status=none
check "160 KiB of disk.img rewritten over NFS (WRITE at 4.7 MiB)" nfs_write disk.img $((300 * 16384)) "$TEST_TMP/patch.bin"
check "... src's disk.img is the local copy" cmp -s "$src/disk.img" "$TEST_TMP/disk.img"
transfer >/dev/null
check "the incremental ends" wait_for 60 done_after 1
sent=$(rel r1 "['last']['sent_bytes']")
check "the incremental sent $sent bytes: changed blocks only (< 1 MiB of 16)" \
	bash -c "[ '$sent' -gt 0 ] && [ '$sent' -le 1048576 ]"
check "disk.img on dsr: the new sha256" same_on_dst disk.img "$TEST_TMP/disk.img"
snap2=$(rel r1 "['last_snapshot']")
check "the older replica snapshot went ($snap1 -> $snap2)" \
	bash -c "[ ! -e '$dsr/.snapshot/$snap1' ] && [ -d '$dsr/.snapshot/$snap2' ]"

# The destination is read-only to NFS clients.
echo "a client's write" >"$TEST_TMP/w.txt"
fails() { ! "$@"; }
check "nfs-cp to dsr is refused (NFS3ERR_ROFS)" fails nfs-cp "$TEST_TMP/w.txt" "$(durl dsr w.txt)" 2>"$TEST_TMP/err"
check "... the refusal says read-only" grep -qi 'ROFS\|read-only\|read only' "$TEST_TMP/err"
check "... logged once on the destination" grep -q 'dsr: read-only: the destination of a replication relation' "$TEST_TMP/dst.log"
check "... nothing written" [ ! -e "$dsr/w.txt" ]

# The peer route: the relation's key only.
body=$TEST_TMP/junk.bin
head -c 200 /dev/urandom >"$body"
peer() { curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/octet-stream' "$@" --data-binary @"$body" "$D/replications/r1/peer"; }
ls -laR "$dsr" >"$TEST_TMP/tree.before"
check "peer route, no key: 401" status_is "$(peer)" 401
check "peer route, a wrong key: 401" status_is "$(peer -H "Authorization: Bearer $(openssl rand -hex 32)")" 401
check "peer route, the admin token: 401" status_is "$(peer -H "Authorization: Bearer $(cat "$TEST_TMP/dstate/admin.token")")" 401
check "peer route, the key but not a message: 400" status_is "$(peer -H "Authorization: Bearer $(cat "$key")")" 400
check "the admin API with the relation's key: 401" \
	status_is "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$key")" "$D/volumes")" 401
check "peer route, an unknown relation: 404" \
	status_is "$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/octet-stream' -H "Authorization: Bearer $(cat "$key")" --data-binary @"$body" "$D/replications/nosuch/peer")" 404
ls -laR "$dsr" >"$TEST_TMP/tree.after"
check "... nothing applied on dsr" cmp -s "$TEST_TMP/tree.before" "$TEST_TMP/tree.after"

# Refusals: the source datastore itself, a destination not empty.
relx() { rel "$1" "['error']"; }
both_failed() { [ "$(rel r2 "['transfers_failed']")" -ge 1 ] && [ "$(rel r3 "['transfers_failed']")" -ge 1 ]; }
transfer r2 >/dev/null
transfer r3 >/dev/null
check "r2 and r3 fail" wait_for 30 both_failed
check "r2 (destination = the source datastore) refused: $(relx r2)" bash -c "[[ '$(relx r2)' == *'is the source datastore'* ]]"
check "r3 (destination not empty) refused: $(relx r3)" bash -c "[[ '$(relx r3)' == *'not empty'* ]]"
check "... dsn's file is still there" [ "$(cat "$TEST_TMP/dsn/old.txt")" = "not empty" ]

# The failover: break on the destination, dsr writable.
code=$(dcurl -s -o "$TEST_TMP/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{}' "$D/volumes/dsr/replication/break")
check "POST dsr/replication/break on the destination: 200" status_is "$code" 200
check "nfs-cp to dsr after the break works" nfs-cp "$TEST_TMP/w.txt" "$(durl dsr w.txt)"
check "... the file is there" cmp -s "$dsr/w.txt" "$TEST_TMP/w.txt"
transfer >/dev/null
sleep 2
check "a transfer to the broken destination fails: $(rel r1 "['error']")" \
	bash -c "[[ '$(rel r1 "['error']")' == *'broken on the destination'* ]]"
# Resync from the source: back to the last common snapshot, read-only.
code=$(post '/volumes/src/replication/break?relation=r1' '{}')
check "POST src/replication/break on the source: 200" status_is "$code" 200
code=$(post '/volumes/src/replication/resync?relation=r1' '{}')
check "POST src/replication/resync: 200" status_is "$code" 200
check "... the client's file went (back to $snap2)" [ ! -e "$dsr/w.txt" ]
check "... and dsr is read-only again" fails nfs-cp "$TEST_TMP/w.txt" "$(durl dsr w2.txt)" 2>/dev/null

# kill -9 of the source in the middle of a transfer.
head -c 96M /dev/urandom >"$TEST_TMP/big.img"
check "nfs-cp big.img (96 MiB) to src" nfs-cp "$TEST_TMP/big.img" "$(nfs_url src big.img)"
n=$(ok_count)
# The source slowed so that the kill falls in the transfer's middle; a
# whole file grows as its data comes (its size set at its end).
throttle_start "$DSNFSD_PID"
transfer >/dev/null
grown() { [ -f "$dsr/big.img" ] && [ "$(stat -c %s "$dsr/big.img")" -ge 8388608 ]; }
check "the transfer is under way (8 MiB of big.img on dsr)" wait_for 60 grown
kill -9 "$DSNFSD_PID"
throttle_stop "$DSNFSD_PID"
wait "$DSNFSD_PID" 2>/dev/null
DSNFSD_PID=""
kib_at_kill=$(($(stat -c %s "$dsr/big.img") / 1024))
check "killed mid-transfer ($kib_at_kill KiB of 98304 on dsr)" [ "$kib_at_kill" -lt 98304 ]
snapnow=$(head -1 "$TEST_TMP/state/repl-r1.journal")
check "the last replica $snap2 on dsr is intact: disk.img" cmp -s "$dsr/.snapshot/$snap2/disk.img" "$TEST_TMP/disk.img"
check "... and small.txt" cmp -s "$dsr/.snapshot/$snap2/small.txt" "$TEST_TMP/small.txt"
check "... dsr's files read over NFS meanwhile" same_on_dst small.txt "$TEST_TMP/small.txt"
cp "$TEST_TMP/dsnfsd.log" "$TEST_TMP/dsnfsd-killed.log"
dsnfsd_start -c "$TEST_TMP/src.conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
transfer >/dev/null
check "the restarted source completes the transfer" wait_for 120 done_after 0
check "... the same transfer, resumed ($snapnow)" [ "$(rel r1 "['last_snapshot']")" = "$snapnow" ]
check "big.img on dsr: same sha256" same_on_dst big.img "$TEST_TMP/big.img"
check "disk.img on dsr: same sha256" same_on_dst disk.img "$TEST_TMP/disk.img"

# The figures.
acurl -s "$A/metrics" >"$TEST_TMP/metrics"
check "/metrics passes the strict checker" python3 "$(dirname "$0")/promparse.py" "$TEST_TMP/metrics"
check "/metrics: bytes sent of r1" grep -qE '^dsnfs_replication_sent_bytes_total\{relation="r1",volume="src"\} [1-9]' "$TEST_TMP/metrics"
check "/metrics: lag of r1" grep -qE '^dsnfs_replication_lag_seconds\{relation="r1",volume="src"\} [0-9]' "$TEST_TMP/metrics"
check "/metrics: last transfer of r1" grep -qE '^dsnfs_replication_last_transfer_seconds\{relation="r1",volume="src"\} 1[0-9]{9}' "$TEST_TMP/metrics"
check "a log line per transfer" grep -q "replication: r1: transfer $snapnow done" "$TEST_TMP/dsnfsd.log"

ctl replication show src >"$TEST_TMP/show.txt" 2>&1
check "dsnfsctl replication show src: the last replica" grep -q "last replica  $snapnow" "$TEST_TMP/show.txt"

# The schedule on the server's own thread: r1 every 2 s, no POST.
dsnfsd_stop || FAILS=$((FAILS + 1))
sed -i '0,/schedule = none/s//schedule = none\nschedule_seconds = 2/' "$TEST_TMP/src.conf"
echo "scheduled" >"$TEST_TMP/sched.txt"
cp "$TEST_TMP/sched.txt" "$src/sched.txt"
dsnfsd_start -c "$TEST_TMP/src.conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
check "the schedule transfers on its own (schedule_seconds = 2)" wait_for 30 done_after 0
check "... sched.txt on dsr" wait_for 10 same_on_dst sched.txt "$TEST_TMP/sched.txt"

dsnfsd_stop || FAILS=$((FAILS + 1))
kill "$DST_PID" && wait "$DST_PID" || FAILS=$((FAILS + 1))
DST_PID=""
if [ "$FAILS" -ne 0 ]; then
	grep -h 'replication\|repl' "$TEST_TMP/dsnfsd.log" "$TEST_TMP/dst.log" | tail -30
fi
test_done
