#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Reverse resync after a break (issue 28 item 3; docs/replication.md,
# "Reverse resync"): two dsnfsd on loopback (src and dst, each datastore
# on its own XFS loop), [replication r1] with source_url and
# source_datastore on the destination's side too.
#  1. A baseline of a 16 MiB disk; refusals: a reverse asked of the
#     source, and of a destination not broken (409, the reason).
#  2. The failover: break on the destination; 256 KiB of disk.img
#     rewritten over NFS there and a new file written; the source wrote
#     a file too after the last replica.
#  3. Reverse, asked of the destination: both GETs say reversed, the
#     roles swapped; the source is back at the common replica (its late
#     file gone: ANF's reverse discards it too) and read-only to NFS
#     clients; a transfer from the destination sends only the changed
#     blocks (at most 512 KiB of 16 MiB) and the new file; disk.img and
#     the new file read over NFS from the source have the destination's
#     sha256.
#  4. Reverse again the other way (break on the old source, reverse
#     asked of it): the first direction back, a change sent from the
#     source arrives.
# Fails on the old code: no reverse (404).  Needs root.
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
{
	printf '[datastore src]\npath = %s\n' "$src"
	lab_access
	repl_section source r1 src destination_url="$dst_URL" \
		destination_datastore=dsr schedule=none
} >"$TEST_TMP/src.conf"
srv_start src "$TEST_TMP/src.conf" || exit 1
# The destination learns the source's endpoint (for a reverse): restarted
# on the same port with it.
srv_stop dst || exit 1
printf 'source_url = %s\nsource_datastore = src\n' "$src_URL" >>"$TEST_TMP/dst.conf"
srv_restart dst || exit 1

# REL of the relation on server NAME's datastore DS.
srel() { rel src src r1 "$1"; }
drel() { rel dst dsr r1 "$1"; }
ok_after() { # NAME DS N: NAME's transfers_ok passed N, none running
	[ "$(rel "$1" "$2" r1 "r['transfers_ok']")" -gt "$3" ] &&
		[ "$(rel "$1" "$2" r1 "r['running']")" = False ]
}
fails() { ! "$@"; }

# 1. The baseline.
head -c 16M /dev/urandom >"$TEST_TMP/disk.img"
cp "$TEST_TMP/disk.img" "$src/disk.img"
rel_act src src transfer r1 >/dev/null
check "the baseline ends" wait_for 60 ok_after src src 0
check "disk.img on dsr over NFS: same sha256" same_on dst dsr disk.img "$TEST_TMP/disk.img"
common=$(srel "r['last_snapshot']")
code=$(rel_act src src reverse r1)
check "a reverse asked of the source: 409 ($code)" [ "$code" = 409 ]
check "... saying why: $(cat "$TEST_TMP/body")" grep -q 'asked of the destination' "$TEST_TMP/body"
code=$(rel_act dst dsr reverse r1)
check "a reverse of a destination not broken: 409 ($code)" [ "$code" = 409 ]
check "... saying why: $(cat "$TEST_TMP/body")" grep -q 'not broken here' "$TEST_TMP/body"

# 2. The failover, and writes on both sides.
check "break on the destination: 200" [ "$(rel_act dst dsr break r1)" = 200 ]
head -c 256K /dev/urandom >"$TEST_TMP/patch.bin"
dd if="$TEST_TMP/patch.bin" of="$TEST_TMP/disk.img" bs=64K seek=37 conv=notrunc status=none
check "256 KiB of disk.img rewritten over NFS on dsr" \
	nfs_write dst dsr disk.img $((37 * 65536)) "$TEST_TMP/patch.bin"
check "... dsr's disk.img is the local copy" cmp -s "$dsr/disk.img" "$TEST_TMP/disk.img"
echo "written at the DR site" >"$TEST_TMP/dr.txt"
check "a new file over NFS on dsr" nfs-cp "$TEST_TMP/dr.txt" "$(srv_nfs_url dst dsr dr.txt)"
echo "written late on the source" >"$src/late.txt"

# 3. Reverse.
code=$(rel_act dst dsr reverse r1)
check "POST dsr/replication/reverse on the destination: 200 ($code)" [ "$code" = 200 ]
check "... its GET: reversed, the source now" \
	[ "$(drel "str(r['reversed']) + ' ' + r['role']")" = "True source" ]
check "... the other end's GET: reversed, the destination now" \
	[ "$(srel "str(r['reversed']) + ' ' + r['role']")" = "True destination" ]
check "src is back at the common replica $common (late.txt gone)" [ ! -e "$src/late.txt" ]
check "... src is read-only to NFS clients" \
	fails nfs-cp "$TEST_TMP/dr.txt" "$(srv_nfs_url src src w.txt)" 2>/dev/null
check "... logged on both" bash -c "grep -q 'r1: reversed: datastore dsr is the source now' '$TEST_TMP/dst.log' &&
	grep -q 'r1: reversed: datastore src went back to $common' '$TEST_TMP/src.log'"
code=$(rel_act dst dsr transfer r1)
check "a transfer from dsr: 202 ($code)" [ "$code" = 202 ]
check "... ends" wait_for 60 ok_after dst dsr 0
sent=$(drel "r['last']['sent_bytes']")
check "... sent the changed blocks only ($sent bytes: 256 KiB + dr.txt, <= 512 KiB of 16 MiB)" \
	bash -c "[ '$sent' -ge 262144 ] && [ '$sent' -le 524288 ]"
check "disk.img over NFS from src: the destination's sha256" \
	same_on src src disk.img "$TEST_TMP/disk.img"
check "dr.txt over NFS from src: same sha256" same_on src src dr.txt "$TEST_TMP/dr.txt"
snap=$(drel "r['last_snapshot']")
check "... and in src's replica $snap" cmp -s "$src/.snapshot/$snap/disk.img" "$TEST_TMP/disk.img"
check "src's GET: the replica $snap" [ "$(srel "r['last_snapshot']")" = "$snap" ]

# 4. Back the first way: break on src (now the destination), reverse
# asked of it.
check "break on src: 200" [ "$(rel_act src src break r1)" = 200 ]
code=$(rel_act src src reverse r1)
check "reverse asked of src: 200 ($code)" [ "$code" = 200 ]
check "... both GETs: not reversed, the first roles" \
	[ "$(srel "str(r['reversed']) + ' ' + r['role']")$(drel "str(r['reversed']) + ' ' + r['role']")" = "False sourceFalse destination" ]
echo "back home" >"$TEST_TMP/home.txt"
cp "$TEST_TMP/home.txt" "$src/home.txt"
n=$(srel "r['transfers_ok']")
rel_act src src transfer r1 >/dev/null
check "a transfer from src ends" wait_for 60 ok_after src src "$n"
check "home.txt on dsr over NFS" same_on dst dsr home.txt "$TEST_TMP/home.txt"
check "disk.img on dsr: still the same sha256" same_on dst dsr disk.img "$TEST_TMP/disk.img"
check "... dsr read-only again" \
	fails nfs-cp "$TEST_TMP/dr.txt" "$(srv_nfs_url dst dsr w.txt)" 2>/dev/null

srv_stop src || FAILS=$((FAILS + 1))
srv_stop dst || FAILS=$((FAILS + 1))
if [ "$FAILS" -ne 0 ]; then
	grep -h 'replication' "$TEST_TMP/src.log" "$TEST_TMP/dst.log" | tail -30
fi
test_done
