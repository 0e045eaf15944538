#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A failover drill with the Linux kernel client (issue 28 item 4;
# docs/replication.md): a source dsnfsd (datastore src) and a destination
# dsnfsd (dsr), each on a loop-mounted XFS, relation r1.  Over NFS: a thin
# disk, 6 MiB of its 8 MiB written (the rest a hole) and a .vmx; the
# baseline; 16 writes of 20 KiB at scattered offsets; the incremental.
# Then writes the source acknowledges but never replicates (a block of the
# disk, a new file), the disaster (kill -9 of the source), the break on
# the destination, and the kernel client (tests/kclient) mounts dsr: every
# 64 KiB block of every file reads back with the MD5 the source's
# snapshot of the last transfer has, the unreplicated block and file are
# not there (the RPO), and the client writes to dsr (writable after the
# break), read back after a remount.  Needs root (XFS loops).
. "$(dirname "$0")/lib.sh"
KCLIENT=$(cd "$(dirname "$0")/../kclient" && pwd)
PY=$(dirname "$0")/t4002-kclient-replication-drill.py

"$KCLIENT/build.sh" >"$TEST_TMP/kbuild.log" 2>&1 || {
	cat "$TEST_TMP/kbuild.log"
	exit 1
}
src=$TEST_TMP/src
dsr=$TEST_TMP/dsr
xfs_loop "$src"
xfs_loop "$dsr"
key=$TEST_TMP/r.key
(umask 077 && openssl rand -hex 32 >"$key")
DST_PID=""
cleanup_all() {
	[ -n "$DST_PID" ] && kill "$DST_PID" 2>/dev/null && wait "$DST_PID" 2>/dev/null
	xfs_loop_cleanup
}
trap cleanup_all EXIT

{
	printf '[datastore dsr]\npath = %s\n' "$dsr"
	lab_access
	printf '[replication r1]\nrole = destination\ndatastore = dsr\nkey_file = %s\n' "$key"
} >"$TEST_TMP/dst.conf"
mkdir -p "$TEST_TMP/dstate"
"$DSNFS_BIN/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P off -A 0 \
	-s "$TEST_TMP/dstate" -c "$TEST_TMP/dst.conf" \
	>"$TEST_TMP/dst.out" 2>"$TEST_TMP/dst.log" &
DST_PID=$!
wait_for 10 grep -q '^dsnfsd: listening' "$TEST_TMP/dst.out" || {
	cat "$TEST_TMP/dst.log"
	exit 1
}
line=$(grep '^dsnfsd: listening' "$TEST_TMP/dst.out")
DST_NFS=$(echo "$line" | sed 's/.* nfs=\([0-9]*\).*/\1/')
DST_MOUNT=$(echo "$line" | sed 's/.* mount=\([0-9]*\).*/\1/')
D="http://127.0.0.1:$(echo "$line" | sed 's/.* admin=\([0-9]*\).*/\1/')"
{
	printf '[datastore src]\npath = %s\n' "$src"
	lab_access
	printf '[replication r1]\nrole = source\ndatastore = src\nkey_file = %s\n' "$key"
	printf 'destination_url = %s\ndestination_datastore = dsr\nschedule = none\n' "$D"
} >"$TEST_TMP/src.conf"
dsnfsd_start -c "$TEST_TMP/src.conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"

rel() {
	acurl -s "$A/volumes/src/replication" | python3 -c "
import json, sys
r = [x for x in json.load(sys.stdin)['relations'] if x['name'] == 'r1'][0]
print($1)"
}
transfer() { # waits for transfer number $1 to end well
	acurl -s -o /dev/null -X POST -H 'Content-Type: application/json' -d '{}' \
		"$A/volumes/src/replication/transfer?relation=r1"
	wait_for 60 bash -c "[ \"\$(acurl -s '$A/volumes/src/replication' |
		python3 -c 'import json,sys; r=json.load(sys.stdin)[\"relations\"][0];
print(r[\"transfers_ok\"] >= $1 and not r[\"running\"])')\" = True ]"
}
srcw() { python3 "$PY" "$1" "$NFS_PORT" "$MOUNT_PORT" /src "${@:2}"; }

# The data, written over NFS: a thin disk with a hole, a VM's .vmx.
"$DSNFS_BIN/dsvmdk" create -t thin -s 8M "$src/disk.vmdk" >/dev/null
check "6 MiB of disk-flat.vmdk written over NFS" srcw write disk-flat.vmdk 0 6291456 1
mkdir -p "$src/vm1"
printf 'displayName = "vm1"\nmemSize = "1024"\n' >"$TEST_TMP/vm1.vmx"
check "nfs-cp vm1/vm1.vmx to src" nfs-cp "$TEST_TMP/vm1.vmx" "$(nfs_url src vm1/vm1.vmx)"
check "the baseline ends" transfer 1
check "16 x 20 KiB rewritten at scattered offsets over NFS" srcw scatter disk-flat.vmdk 16 20480 2
check "the incremental ends" transfer 2
check "... without error" [ -z "$(rel "r['error']")" ]
snap=$(rel "r['last_snapshot']")
sent=$(rel "r['last']['sent_bytes']")
check "the incremental sent the changed blocks only ($sent bytes)" \
	bash -c "[ '$sent' -gt 0 ] && [ '$sent' -le 2097152 ]"
python3 "$PY" blocks "$src/.snapshot/$snap" >"$TEST_TMP/expected.txt"
nblocks=$(wc -l <"$TEST_TMP/expected.txt")
check "the source's snapshot $snap: $nblocks blocks of 64 KiB" [ "$nblocks" -eq 130 ]

# Acknowledged by the source, never replicated: lost with it.
check "a block rewritten after the last transfer" srcw write disk-flat.vmdk 0 65536 3
echo "written after the last transfer" >"$TEST_TMP/late.txt"
check "a file made after the last transfer" nfs-cp "$TEST_TMP/late.txt" "$(nfs_url src late.txt)"
kill -9 "$DSNFSD_PID"
wait "$DSNFSD_PID" 2>/dev/null
DSNFSD_PID=""

# The failover: break on the destination, mount it with the kernel client.
code=$(curl -s -o "$TEST_TMP/body" -w '%{http_code}' -X POST \
	-H @<(printf 'Authorization: Bearer %s\n' "$(cat "$TEST_TMP/dstate/admin.token")") \
	-H 'Content-Type: application/json' -d '{}' "$D/volumes/dsr/replication/break")
check "break on the destination: 200" status_is "$code" 200
cat >"$TEST_TMP/guest.sh" <<'GUEST'
find . -type f | grep -v '^\./\.snapshot/' | sort | while read -r f; do
	n=$(( ($(stat -c %s "$f") + 65535) / 65536 ))
	i=0
	while [ $i -lt $n ]; do
		echo "BLK $f $i $(dd if="$f" bs=65536 skip=$i count=1 2>/dev/null | md5sum | cut -c1-32)"
		i=$((i + 1))
	done
done
echo "after the failover" >failover.txt
sync
kc_remount
cat failover.txt
echo GUEST-OK
GUEST
out=$("$KCLIENT/run-guest.sh" "$DST_NFS" "$DST_MOUNT" /dsr "@$TEST_TMP/guest.sh" 2>&1)
rc=$?
echo "$out" | grep -v '^BLK ' | tail -15
sed -n 's/^BLK //p' <<<"$out" | sort >"$TEST_TMP/got.txt"
check "the guest ran to the end (rc=$rc)" grep -q GUEST-OK <<<"$out"
check "every block of the replica reads back as the source's snapshot had it ($(wc -l <"$TEST_TMP/got.txt") of $nblocks)" \
	diff "$TEST_TMP/expected.txt" "$TEST_TMP/got.txt"
check "... the block rewritten after the last transfer is not on the replica" \
	bash -c "! grep -q '^./disk-flat.vmdk 0 $(head -c 65536 "$src/disk-flat.vmdk" | md5sum | cut -c1-32)\$' '$TEST_TMP/got.txt'"
check "... nor the file made after it" bash -c "! grep -q '^./late.txt ' '$TEST_TMP/got.txt'"
check "the kernel client wrote to the destination after the break" grep -q '^after the failover$' <<<"$out"
check "... and it is on dsr" grep -qx 'after the failover' "$dsr/failover.txt"
kill "$DST_PID" && wait "$DST_PID" || FAILS=$((FAILS + 1))
DST_PID=""
test_done
