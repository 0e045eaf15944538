#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Storage-side VMDK operations and native snapshots of a CephFS datastore
# (backend = cephfs: store/cephfs/cephfs_tree.c, cephfs_snap.c,
# cephfs_restore.c), through dsnfsctl and the admin API: a full clone
# (holes kept, read back over NFS with libnfs and compared), a linked
# clone (qemu-img compare on the files through ceph-fuse), native refused
# (422, nothing made), Reserve Space and stats, every refusal (409, 400,
# a CephFS quota in the middle of a clone: 507, the partial target gone),
# and snapshots: create, list, .snap seen through ceph-fuse, .snapshot
# read over NFS (and refused a write), restore (a
# file keeps its handle and reads the snapshot's data, a later one goes),
# delete, a bad name (400), a file system refusing new snapshots (the
# operation fails with 422 and says how to allow them).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

export DSNFS_DS1_BACKEND=cephfs
trap 'dsnfsd_stop; ceph_test_cleanup; test_cleanup' EXIT
dsnfsd_start || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
# alloc_is PATH BYTES: Extended Statistics' allocated bytes of a disk.
alloc_is() {
	local got
	got=$(ctl --json vmdk stats ds1 "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["allocated_bytes"])')
	[ "$got" = "$2" ] || { echo "    allocated $got"; return 1; }
}
ds1=$TEST_TMP/ds1 # ceph-fuse's view of the datastore
"$DSNFS_BIN/dsvmdk" create -t thin -s 256M "$ds1/src.vmdk" >/dev/null
python3 - "$ds1/src-flat.vmdk" <<'PY'
import os, random, sys
r = random.Random(14)
fd = os.open(sys.argv[1], os.O_WRONLY)
for off in (0, 100 << 20, 250 << 20):
    os.pwrite(fd, r.randbytes(4 << 20), off)
os.close(fd)
PY

echo "full clone"
mkdir -p "$ds1/vm2"
start=$(date +%s.%N)
check "dsnfsctl vmdk clone --full" ctl vmdk clone ds1 src.vmdk vm2/full.vmdk --full
echo "    full clone of 12 MiB used in 256 MiB: $(echo "$(date +%s.%N) - $start" | bc) s"
check "read back over NFS (libnfs) equals the source" bash -c \
	"cmp <(nfs-cat '$(nfs_url ds1 src-flat.vmdk)') <(nfs-cat '$(nfs_url ds1 vm2/full-flat.vmdk)')"
check "qemu-img compare of the disks" qemu-img compare -q "$ds1/src.vmdk" "$ds1/vm2/full.vmdk"
check "holes kept: 4 RADOS objects of 4 MiB (12 MiB at 0, 100, 250 MiB)" alloc_is vm2/full.vmdk 16777216
check "GET /operations lists it done at 100%" bash -c \
	"acurl -s $A/operations | python3 -c 'import json,sys; o=json.load(sys.stdin)[\"operations\"]; sys.exit(not any(x[\"target\"]==\"vm2/full.vmdk\" and x[\"state\"]==\"done\" and x[\"percent\"]==100 for x in o))'"

echo "linked and native"
check "dsnfsctl vmdk clone --linked" ctl vmdk clone ds1 vm2/full.vmdk vm2/linked.vmdk --linked
check "qemu-img compare: the linked clone reads its parent" qemu-img compare -q "$ds1/src.vmdk" "$ds1/vm2/linked.vmdk"
check "native refused 422" status_is "$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"nat.vmdk","mode":"native"}')" 422
check "nothing made" bash -c "[ ! -e '$ds1/nat.vmdk' ] && [ ! -e '$ds1/nat-flat.vmdk' ]"

echo "refusals"
check "target exists: 409" status_is "$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"vm2/full.vmdk","mode":"full"}')" 409
check "path with ..: 400" status_is "$(post /volumes/ds1/clones '{"source":"../src.vmdk","target":"x.vmdk","mode":"full"}')" 400
ln -s /etc "$ds1/etc"
check "a symlink out: 400" status_is "$(post /volumes/ds1/clones '{"source":"etc/x.vmdk","target":"y.vmdk","mode":"full"}')" 400

echo "a CephFS quota in the way"
mkdir "$ds1/q"
python3 -c "import os,sys; os.setxattr(sys.argv[1], 'ceph.quota.max_bytes', b'8388608')" "$ds1/q"
check "a clone past the folder's quota: 507" status_is "$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"q/c.vmdk","mode":"full"}')" 202
ctl operations >/dev/null
for _ in $(seq 1 100); do
	acurl -s "$A/operations" | grep -q '"target": *"q/c.vmdk"[^}]*"state": *"running"' || break
	sleep 0.1
done
check "its operation failed with 507" bash -c \
	"acurl -s $A/operations | python3 -c 'import json,sys; o=json.load(sys.stdin)[\"operations\"]; sys.exit(not any(x[\"target\"]==\"q/c.vmdk\" and x[\"state\"]==\"failed\" and x[\"status\"]==507 for x in o))'"
check "the partial target is removed" bash -c "[ -z \"\$(ls -A '$ds1/q')\" ]"
check "the source is unchanged" qemu-img compare -q "$ds1/src.vmdk" "$ds1/vm2/full.vmdk"

echo "reserve and stats"
check "reserve --zeroedthick" ctl vmdk reserve ds1 src.vmdk --zeroedthick
"$DSNFS_BIN/dsvmdk" create -t thin -s 64M "$ds1/r2.vmdk" >/dev/null
check "a zeroedthick reservation answers 202: zeros are written on a thread" \
	status_is "$(post /volumes/ds1/reserve '{"path":"r2.vmdk","type":"zeroedthick"}')" 202
check "a delta cannot be reserved: 400" \
	status_is "$(post /volumes/ds1/reserve '{"path":"vm2/linked.vmdk","type":"zeroedthick"}')" 400
check "every object allocated (256 MiB)" alloc_is src.vmdk 268435456
check "the data is kept" qemu-img compare -q "$ds1/vm2/full.vmdk" "$ds1/src.vmdk"

echo "snapshots"
echo before >"$ds1/note.txt"
check "snapshot create" ctl snapshot create ds1 s1
check "snapshot list names it" bash -c "'$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT snapshot list ds1 | grep -q '^s1 '"
check "CephFS's .snap holds it" test -f "$ds1/.snap/s1/note.txt"
check "a name with /: 400" status_is "$(post /volumes/ds1/snapshots '{"name":"a/b"}')" 400
check "a name with ..: 400" status_is "$(post /volumes/ds1/snapshots '{"name":".."}')" 400
check "an existing name: 409" status_is "$(post /volumes/ds1/snapshots '{"name":"s1"}')" 409
ino=$(stat -c %i "$ds1/note.txt")
echo after >"$ds1/note.txt"
echo late >"$ds1/late.txt"
check ".snapshot over NFS reads the snapshot" bash -c "[ \"\$(nfs-cat '$(nfs_url ds1 .snapshot/s1/note.txt)')\" = before ]"
check ".snapshot over NFS lists s1" bash -c "nfs-ls '$(nfs_url ds1 .snapshot)' | grep -q ' s1\$'"
echo x >"$TEST_TMP/x"
check ".snapshot is read-only over NFS" bash -c "! nfs-cp '$TEST_TMP/x' '$(nfs_url ds1 .snapshot/s1/x.txt)' 2>/dev/null"
check "snapshot restore" ctl snapshot restore ds1 s1
check "the file has the snapshot's data, over NFS" bash -c "[ \"\$(nfs-cat '$(nfs_url ds1 note.txt)')\" = before ]"
check "and the same inode (its handle stays valid)" [ "$(stat -c %i "$ds1/note.txt")" = "$ino" ]
check "a file made after is gone" bash -c "! nfs-cat '$(nfs_url ds1 late.txt)' >/dev/null 2>&1"
check "snapshot delete" ctl snapshot delete ds1 s1
# A file system that refuses new snapshots (restored at once: the
# cluster may be the suite's, and the tests run one at a time).
ceph -c "$CEPH_CONF" fs set cephfs allow_new_snaps false >/dev/null 2>&1
nosnap_refused() {
	local out
	out=$(ctl snapshot create ds1 s2 2>&1) && return 1
	echo "$out" | grep -q 'allow_new_snaps' || { echo "    $out"; return 1; }
	acurl -s "$A/operations" | python3 -c 'import json,sys; o=json.load(sys.stdin)["operations"]; sys.exit(not any(x["target"]=="s2" and x["state"]=="failed" and x["status"]==422 for x in o))'
}
check "snapshots not allowed: the create fails with 422 and says how" nosnap_refused
ceph -c "$CEPH_CONF" fs set cephfs allow_new_snaps true >/dev/null 2>&1
check "nothing made" bash -c "[ ! -e '$ds1/.snap/s2' ]"
check "delete again: 404" status_is "$(acurl -s -o "$TEST_TMP/body" -w '%{http_code}' -X DELETE "$A/volumes/ds1/snapshots/s1")" 404
rm -f "$ds1/etc"
test_done
