#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A new volume from a snapshot (issue 28; docs/admin-api.md): datastore ds3
# in a directory of a loop-mounted XFS (reflink=1); a file written over NFS
# (nfs-cp), snapshot s1, the file changed after it; POST /volumes
# {"name": "c1", "snapshot": {"volume": "ds3", "name": "s1"}} is 201 and c1
# is served at once: nfs-cat reads the snapshot's data from it, its blocks
# are shared with the snapshot (stats shared_bytes), a write to c1 leaves
# ds3 and the snapshot as they were.  The snapshot is held: its DELETE is
# 409 (and it stays) until POST /volumes/c1/split, then it goes and c1
# still reads.  c1 is served again after SIGHUP and after a restart.  Bad
# input: a name taken (409), a bad name (400), an unknown source or
# snapshot (404), a datastore of another file system's root (422), no
# token (401); nothing is left behind by a refusal.  Needs root.
. "$(dirname "$0")/lib.sh"

xfs=$TEST_TMP/xfs
xfs_loop "$xfs"
ds3=$xfs/ds3
mkdir -p "$ds3"
conf=$TEST_TMP/clone.conf
{
	printf '[datastore ds3]\npath = %s\n' "$ds3"
	lab_access
} >"$conf"
dsnfsd_start -c "$conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
head -c 3M /dev/urandom >"$TEST_TMP/v1.bin"
head -c 3M /dev/urandom >"$TEST_TMP/v2.bin"
head -c 1M /dev/urandom >"$TEST_TMP/c1.bin"
check "nfs-cp a 3 MiB file into ds3" nfs-cp "$TEST_TMP/v1.bin" "$(nfs_url ds3 disk.bin)"
mkdir "$ds3/vm1"
"$DSNFS_BIN/dsvmdk" create -t thin -s 64M "$ds3/vm1/disk.vmdk" >/dev/null
dd if=/dev/urandom of="$ds3/vm1/disk-flat.vmdk" bs=1M count=8 conv=notrunc status=none
check "snapshot s1 of ds3" ctl snapshot create ds3 s1
# nfs-cp makes new files only: the live file changes in place on the server.
check "ds3's file changed after the snapshot" cp "$TEST_TMP/v2.bin" "$ds3/disk.bin"

code=$(post /volumes '{"name": "c1", "snapshot": {"volume": "ds3", "name": "s1"}}')
check "POST /volumes c1 from snapshot s1 of ds3: 201" status_is "$code" 201
check "... it says which snapshot it holds" body_has '"holds":true'
check "c1 is served at once: nfs-ls lists disk.bin" bash -c "nfs-ls '$(nfs_url c1 '')' | grep -q disk.bin"
nfs-cp "$(nfs_url c1 disk.bin)" "$TEST_TMP/c1.out" >/dev/null 2>&1
check "nfs-cp reads the snapshot's data back from c1" cmp -s "$TEST_TMP/v1.bin" "$TEST_TMP/c1.out"
shared=$(acurl -s "$A/volumes/c1/stats?path=vm1/disk.vmdk" | python3 -c 'import json,sys; print(json.load(sys.stdin)["shared_bytes"])')
check "c1's disk shares its 8 MiB with the snapshot ($shared)" [ "$shared" = $((8 << 20)) ]
check "the clone's file is writable on disk (not immutable)" bash -c "! lsattr '$xfs/c1/disk.bin' | grep -q '^....i'"
check "a write to c1 over NFS (a new file)" nfs-cp "$TEST_TMP/c1.bin" "$(nfs_url c1 new.bin)"
check "... reads back from c1" bash -c "nfs-cat '$(nfs_url c1 new.bin)' | cmp -s - '$TEST_TMP/c1.bin'"
check "... is not in ds3 nor in the snapshot" bash -c "[ ! -e '$ds3/new.bin' ] && [ ! -e '$ds3/.snapshot/s1/new.bin' ]"
check "c1's shared file overwritten in place on the server" cp "$TEST_TMP/c1.bin" "$xfs/c1/disk.bin"
check "... reads the new data over NFS" bash -c "nfs-cat '$(nfs_url c1 disk.bin)' | cmp -s - '$TEST_TMP/c1.bin'"
nfs-cp "$(nfs_url ds3 disk.bin)" "$TEST_TMP/ds3.back" >/dev/null 2>&1
check "... ds3 is unchanged" cmp -s "$TEST_TMP/v2.bin" "$TEST_TMP/ds3.back"
check "... and the snapshot too" cmp -s "$TEST_TMP/v1.bin" "$ds3/.snapshot/s1/disk.bin"

# The snapshot is held until the split.
code=$(acurl -s -o "$TEST_TMP/body" -w '%{http_code}' -X DELETE "$A/volumes/ds3/snapshots/s1")
check "DELETE of the held snapshot s1: 409" status_is "$code" 409
check "... naming c1 and the split" body_has 'volume c1 was made from it'
check "... s1 is still listed" bash -c "acurl -s '$A/volumes/ds3/snapshots' | grep -q '\"s1\"'"

# Bad input: refused, nothing left behind.
code=$(post /volumes '{"name": "c1", "snapshot": {"volume": "ds3", "name": "s1"}}')
check "c1 again: 409" status_is "$code" 409
for bad in '../x' '.c2' 'a/b' ''; do
	code=$(post /volumes "{\"name\": \"$bad\", \"snapshot\": {\"volume\": \"ds3\", \"name\": \"s1\"}}")
	check "name '$bad': 400" status_is "$code" 400
done
code=$(post /volumes '{"name": "c2", "snapshot": {"volume": "nosuch", "name": "s1"}}')
check "an unknown source: 404" status_is "$code" 404
code=$(post /volumes '{"name": "c2", "snapshot": {"volume": "ds3", "name": "nosuch"}}')
check "an unknown snapshot: 404" status_is "$code" 404
code=$(post /volumes '{"name": "c2", "snapshot": {"volume": "ds3"}}')
check "no snapshot name: 400" status_is "$code" 400
code=$(post /volumes '{"name": "c2", "snapshot": {"volume": "ds3", "name": "s1"}, "x": 1}')
check "an unknown key: 400" status_is "$code" 400
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
	-d '{"name": "c2", "snapshot": {"volume": "ds3", "name": "s1"}}' "$A/volumes")
check "no token: 401" status_is "$code" 401
check "no c2 left behind" [ ! -e "$xfs/c2" ]

check "SIGHUP: the config read again" kill -HUP "$DSNFSD_PID"
sleep 1
check "c1 is still served after SIGHUP" bash -c "nfs-cat '$(nfs_url c1 new.bin)' | cmp -s - '$TEST_TMP/c1.bin'"
check "dsnfsd stops cleanly" dsnfsd_stop
dsnfsd_start -c "$conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
check "after a restart c1 is served" bash -c "nfs-cat '$(nfs_url c1 new.bin)' | cmp -s - '$TEST_TMP/c1.bin'"
code=$(acurl -s -o "$TEST_TMP/body" -w '%{http_code}' -X DELETE "$A/volumes/ds3/snapshots/s1")
check "... and s1 still held: 409" status_is "$code" 409

code=$(post /volumes/c1/split '{}')
check "POST /volumes/c1/split: 200" status_is "$code" 200
check "then s1 is deleted" ctl snapshot delete ds3 s1
check "... and c1 still reads its data" bash -c "nfs-cat '$(nfs_url c1 disk.bin)' | cmp -s - '$TEST_TMP/c1.bin'"
code=$(post /volumes/ds3/split '{}')
check "split of a volume not made from a snapshot: 404" status_is "$code" 404

# A datastore at the root of its file system has no place beside it.
check "dsnfsd stops cleanly" dsnfsd_stop
{
	printf '[datastore ds4]\npath = %s\n' "$xfs"
	lab_access
} >"$conf"
dsnfsd_start -c "$conf" || exit 1
check "snapshot s1 of ds4 (the XFS root)" ctl snapshot create ds4 s1
code=$(post /volumes '{"name": "c3", "snapshot": {"volume": "ds4", "name": "s1"}}')
check "a volume from it: 422" status_is "$code" 422
check "... saying why" body_has 'root of its file'
check "dsnfsd stops cleanly" dsnfsd_stop
test_done
