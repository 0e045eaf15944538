#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A CephFS datastore as a replication source (docs/replication.md,
# "CephFS datastores"; nfsd/repl/src_store.c, store/cephfs/
# cephfs_snapread.c): a source dsnfsd serving ds1 from the suite's Ceph
# cluster, a destination dsnfsd with dsr on a loop-mounted XFS, one
# [replication r1].  A 64 MiB disk written over NFS to ds1: the baseline
# (timed) sends it whole and dsr reads back the same bytes over NFS; 640
# KiB (1%) rewritten over NFS at an unaligned offset: the incremental
# sends about that (dsnfs_replication_last_sent_bytes from /metrics:
# 640-832 KiB) and reads only the 64 KiB blocks written since the base
# snapshot (RADOS object stats, then the OSDs' block hashes of the one
# object written: candidate_bytes at most 1 MiB, not 64 MiB); dsr
# then has the source's bytes again (sha256 over NFS of both), and its
# replica snapshot too; the source's repl-r1-* snapshot is a CephFS
# snapshot (.snap) and the older one is gone.  A snapshot made by hand
# on ds1 between two writes is carried by the next transfer (its own
# step: 64 KiB, then 64 KiB for the replica) and reads back on dsr.  A cephfs datastore as a
# destination is refused at start, its reason logged.  A reverse asked
# of the destination after its break is refused by the source with its
# reason (dsnfsctl prints it); both ends stay as they were, the
# destination writable, ds1 unchanged and writable.  Needs root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"
. "$(dirname "$0")/repl_lib.sh"

dsr=$TEST_TMP/dsr
xfs_loop "$dsr"
# xfs_loop_cleanup ends with test_cleanup: ceph_test_cleanup too, which
# removes the test's directory: its snapshots first (rmdir in .snap).
trap 'srv_cleanup; rmdir "$TEST_TMP"/ds1/.snap/* 2>/dev/null; xfs_loop_cleanup' EXIT
ceph_ds1_setup || exit 1
repl_key
{
	printf '[datastore dsr]\npath = %s\n' "$dsr"
	lab_access
	repl_section destination r1 dsr
} >"$TEST_TMP/dst.conf"
srv_start dst "$TEST_TMP/dst.conf" || exit 1
{
	cat "$TEST_TMP/ceph-ds1.conf"
	lab_access
	repl_section source r1 ds1 destination_url="$dst_URL" \
		destination_datastore=dsr schedule=none
} >"$TEST_TMP/src.conf"
srv_start src "$TEST_TMP/src.conf" || exit 1
check "the source's relation is up on the cephfs datastore" \
	grep -q 'replication: r1: source of datastore ds1' "$TEST_TMP/src.log"

last() { rel src ds1 r1 "r['last']$1"; }
ok_count() { rel src ds1 r1 "r['transfers_ok']"; }
done_after() { [ "$(ok_count)" -gt "$1" ] && [ "$(rel src ds1 r1 "r['running']")" = False ]; }
metric() { # NAME: its sample for r1
	scurl src -s "$src_URL/metrics" | sed -n "s/^$1{[^}]*relation=\"r1\"[^}]*} //p"
}

head -c 64M /dev/urandom >"$TEST_TMP/disk.img"
check "nfs-cp a 64 MiB disk to ds1" nfs-cp "$TEST_TMP/disk.img" "$(srv_nfs_url src ds1 disk.img)"

t0=$(date +%s.%N)
check "transfer: 202" status_is "$(rel_act src ds1 transfer r1)" 202
check "the baseline ends" wait_for 120 done_after 0
echo "    baseline of 64 MiB from CephFS: $(echo "$(date +%s.%N) - $t0" | bc) s (poll included)"
check "... without error" [ -z "$(rel src ds1 r1 "r['error']")" ]
check "... it sent the 64 MiB" [ "$(metric dsnfs_replication_last_sent_bytes)" = 67108864 ]
check "disk.img on dsr over NFS: the source's sha256" same_on dst dsr disk.img "$TEST_TMP/disk.img"
check "the source's snapshot is a CephFS one" test -d "$TEST_TMP/ds1/.snap/repl-r1-1"

# 1%: 640 KiB at an unaligned offset (in one 4 MiB object, 11 blocks of
# 64 KiB).
head -c 640K /dev/urandom >"$TEST_TMP/patch"
off=$((20 * 1048576 + 4096))
check "640 KiB rewritten over NFS" nfs_write src ds1 disk.img "$off" "$TEST_TMP/patch"
dd if="$TEST_TMP/patch" of="$TEST_TMP/disk.img" bs=4096 seek=$((off / 4096)) conv=notrunc status=none
check "ds1 reads the new bytes over NFS" same_on src ds1 disk.img "$TEST_TMP/disk.img"

t0=$(date +%s.%N)
check "incremental: 202" status_is "$(rel_act src ds1 transfer r1)" 202
check "the incremental ends" wait_for 120 done_after 1
echo "    incremental: $(echo "$(date +%s.%N) - $t0" | bc) s, $(metric dsnfs_replication_last_sent_bytes) bytes sent, $(last "['candidate_bytes']") read and compared"
sent=$(metric dsnfs_replication_last_sent_bytes)
check "it sent about the 1% rewritten (640-832 KiB)" \
	bash -c "[ '$sent' -ge 655360 ] && [ '$sent' -le 851968 ]"
check "it read only the blocks written since (at most 1 MiB of 64)" \
	bash -c "[ '$(last "['candidate_bytes']")' -le 1048576 ]"
check "disk.img on dsr over NFS: the source's sha256 again" same_on dst dsr disk.img "$TEST_TMP/disk.img"
check "... and in its replica snapshot" bash -c \
	"nfs-cat '$(srv_nfs_url dst dsr .snapshot/repl-r1-2/disk.img)' | cmp -s - '$TEST_TMP/disk.img'"
check "the source keeps the new base, the older snapshot is gone" bash -c \
	"[ -d '$TEST_TMP/ds1/.snap/repl-r1-2' ] && [ ! -e '$TEST_TMP/ds1/.snap/repl-r1-1' ]"

# A snapshot made by hand on ds1 (a CephFS one) between two writes: the
# next transfer carries it (a step of its own, from the last replica)
# then the replica; both read back on dsr with the source's bytes.
sctl() { "$DSNFS_BIN/dsnfsctl" -s "127.0.0.1:$src_ADMIN" --state-dir "$TEST_TMP/src.state" "$@"; }
cp "$TEST_TMP/disk.img" "$TEST_TMP/disk-hand.img"
head -c 64K /dev/urandom >"$TEST_TMP/patch2"
check "64 KiB rewritten over NFS" nfs_write src ds1 disk.img $((40 * 1048576)) "$TEST_TMP/patch2"
dd if="$TEST_TMP/patch2" of="$TEST_TMP/disk-hand.img" bs=65536 seek=640 conv=notrunc status=none
check "dsnfsctl snapshot create ds1 hand1 (CephFS)" sctl snapshot create ds1 hand1
check "64 KiB rewritten over NFS again" nfs_write src ds1 disk.img $((50 * 1048576)) "$TEST_TMP/patch2"
cp "$TEST_TMP/disk-hand.img" "$TEST_TMP/disk.img"
dd if="$TEST_TMP/patch2" of="$TEST_TMP/disk.img" bs=65536 seek=800 conv=notrunc status=none
check "a transfer: 202" status_is "$(rel_act src ds1 transfer r1)" 202
check "it ends" wait_for 120 done_after 2
check "... without error" [ -z "$(rel src ds1 r1 "r['error']")" ]
check "... it carried the one snapshot" [ "$(last "['snapshots']")" = 1 ]
echo "    with a carried snapshot: $(metric dsnfs_replication_last_sent_bytes) bytes sent, $(last "['candidate_bytes']") read"
check "... and sent the two 64 KiB writes" [ "$(metric dsnfs_replication_last_sent_bytes)" = 131072 ]
check "dsr/.snapshot/hand1 over NFS: the source's bytes then" bash -c \
	"nfs-cat '$(srv_nfs_url dst dsr .snapshot/hand1/disk.img)' | cmp -s - '$TEST_TMP/disk-hand.img'"
check "dsr's disk.img: the source's bytes now" same_on dst dsr disk.img "$TEST_TMP/disk.img"

# A reverse asked of the destination after its break: the cephfs source
# refuses it and says why (its source-only entry, peer.c), dsnfsctl
# prints that; the destination stays broken and writable, the source
# serves ds1 as it was and stays writable.  The destination learns the
# source's endpoint first (restarted on the same port with it).
srv_stop dst || FAILS=$((FAILS + 1))
printf 'source_url = %s\nsource_datastore = ds1\n' "$src_URL" >>"$TEST_TMP/dst.conf"
srv_restart dst || exit 1
dctl() { "$DSNFS_BIN/dsnfsctl" -s "127.0.0.1:$dst_ADMIN" --state-dir "$TEST_TMP/dst.state" "$@"; }
roles() { # NAME DS: its end's state, role, reversed
	rel "$1" "$2" r1 "r['state'] + ' ' + r['role'] + ' ' + str(r['reversed'])"
}
src_roles=$(roles src ds1)
check "break on the destination: 200" status_is "$(rel_act dst dsr break r1)" 200
rc=0
dctl replication reverse dsr >"$TEST_TMP/rev.out" 2>&1 || rc=$?
check "dsnfsctl replication reverse dsr on the destination: refused (exit $rc)" [ $rc -ne 0 ]
check "... with the source's reason: $(cat "$TEST_TMP/rev.out")" grep -q \
	'relation r1: datastore ds1 here is on CephFS: a replication source only; a reverse would make it the destination, which is not built' \
	"$TEST_TMP/rev.out"
check "a request without the key: 401, nothing said" bash -c \
	"[ \"\$(curl -s -o '$TEST_TMP/nokey' -w '%{http_code}' -X POST \
	-H 'Content-Type: application/octet-stream' --data-binary x \
	'$src_URL/replications/r1/peer')\" = 401 ] && ! grep -q CephFS '$TEST_TMP/nokey'"
check "the destination: broken, still the destination, not reversed" \
	[ "$(roles dst dsr)" = "broken destination False" ]
check "... no reversed file on either end" bash -c \
	"[ ! -e '$TEST_TMP/dst.state/repl-r1.reversed' ] && [ ! -e '$TEST_TMP/src.state/repl-r1.reversed' ]"
echo "written at the DR site" >"$TEST_TMP/dr.txt"
check "... dsr writable over NFS" nfs-cp "$TEST_TMP/dr.txt" "$(srv_nfs_url dst dsr dr.txt)"
check "... and reads it back" same_on dst dsr dr.txt "$TEST_TMP/dr.txt"
check "the source: as it was ($src_roles)" [ "$(roles src ds1)" = "$src_roles" ]
check "... ds1 serves disk.img unchanged over NFS" same_on src ds1 disk.img "$TEST_TMP/disk.img"
check "... and stays writable by its clients" nfs-cp "$TEST_TMP/dr.txt" "$(srv_nfs_url src ds1 after-reverse.txt)"
check "... the refusal is not logged as a reverse" bash -c \
	"! grep -q 'r1: reversed' '$TEST_TMP/src.log' '$TEST_TMP/dst.log'"

# A cephfs datastore as a destination: refused at start, with its
# reason (the source stopped first: one gateway on ds1 at a time).
srv_stop src || FAILS=$((FAILS + 1))
{
	cat "$TEST_TMP/ceph-ds1.conf"
	lab_access
	repl_section destination r2 ds1
} >"$TEST_TMP/bad.conf"
mkdir -p "$TEST_TMP/bad.state"
timeout 60 "$DSNFS_BIN/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P off -A 0 \
	-s "$TEST_TMP/bad.state" -c "$TEST_TMP/bad.conf" >/dev/null 2>"$TEST_TMP/bad.log"
rc=$?
check "a cephfs destination: dsnfsd does not start" bash -c "[ $rc -ne 0 ] && [ $rc -ne 124 ]"
check "... and says why" grep -q 'datastore ds1 is on CephFS: it can be a replication source only' "$TEST_TMP/bad.log"
test_done
