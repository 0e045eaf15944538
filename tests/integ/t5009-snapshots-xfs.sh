#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Native datastore snapshots (docs/admin-api.md): reflink copies of the tree in
# ROOT/.snapshot/NAME, immutable, on loop-mounted XFS file systems made
# with reflink=1.  dsnfsctl snapshot create|list|delete|restore; names with
# "/" or ".." are 400; a datastore on ext4 is refused (422, reflink named);
# over NFS (the Python client) the snapshot reads as it was and refuses
# every change; after a restore a kept file's old handle reads the
# snapshot's data, a file made since is STALE, a file removed since is
# back; snapshot_dir = false hides .snapshot (LOOKUP NOENT, READDIR leaves
# it out, CREATE refused) and SIGHUP shows it again; the Linux kernel client
# (tests/kclient) reads the snapshot and cannot change it.  Issue 23: the
# snapshots are those of the manifest in the state directory: a directory
# planted under .snapshot is not listed, its restore is 404 and changes
# nothing; a live disk written all through a snapshot never fails and is
# never flagged immutable.  Needs root.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v mkfs.xfs >/dev/null; then
	echo "  skip: needs root and mkfs.xfs (xfsprogs) for a loop-mounted XFS"
	exit 0
fi
py=$(dirname "$0")/t5009-snapshots-xfs.py
mkdir -p "$TEST_TMP/ds1" "$TEST_TMP/ds3"
for d in ds1 ds3; do
	truncate -s 512M "$TEST_TMP/$d.img"
	if ! mkfs.xfs -q -m reflink=1 "$TEST_TMP/$d.img" ||
		! mount -o loop "$TEST_TMP/$d.img" "$TEST_TMP/$d" 2>/dev/null; then
		umount "$TEST_TMP/ds1" 2>/dev/null
		echo "  skip: cannot make or loop-mount an XFS here"
		exit 0
	fi
done
cleanup() {
	if [ -n "$DSNFSD_PID" ]; then
		kill "$DSNFSD_PID" 2>/dev/null
		wait "$DSNFSD_PID" 2>/dev/null
		DSNFSD_PID=""
	fi
	# The snapshots are immutable: the images go whole.
	umount "$TEST_TMP/ds1" "$TEST_TMP/ds3" 2>/dev/null
	test_cleanup
}
trap cleanup EXIT
conf=$TEST_TMP/snap.conf
write_conf() {
	printf '[datastore ds3]\npath = %s\nsnapshot_dir = %s\n' "$TEST_TMP/ds3" "$1" >"$conf"
	lab_access >>"$conf"
}
write_conf false
ds1=$TEST_TMP/ds1
echo v1 >"$ds1/keep.txt"
echo gone >"$ds1/gone.txt"
mkdir "$ds1/vm1"
"$DSNFS_BIN/dsvmdk" create -t thin -s 64M "$ds1/vm1/disk.vmdk" >/dev/null
dd if=/dev/urandom of="$ds1/vm1/disk-flat.vmdk" bs=1M count=8 conv=notrunc status=none
ln -s vm1/disk.vmdk "$ds1/link.vmdk"
echo a >"$TEST_TMP/ds3/a.txt"
dsnfsd_start -c "$conf" || exit 1
A="http://127.0.0.1:$ADMIN_PORT"

check "dsnfsctl snapshot create ds1 s1" ctl snapshot create ds1 s1
check "dsnfsctl snapshot list ds1 names it" bash -c "'$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT snapshot list ds1 | grep -q '^s1 '"
check "the snapshot holds the tree" bash -c "cmp -s '$ds1/keep.txt' '$ds1/.snapshot/s1/keep.txt' && cmp -s '$ds1/vm1/disk-flat.vmdk' '$ds1/.snapshot/s1/vm1/disk-flat.vmdk'"
check "... its symlink as a symlink" bash -c "[ \"\$(readlink '$ds1/.snapshot/s1/link.vmdk')\" = vm1/disk.vmdk ]"
shared=$(acurl -s "$A/volumes/ds1/stats?path=vm1/disk.vmdk" | python3 -c 'import json,sys; print(json.load(sys.stdin)["shared_bytes"])')
check "the live disk shares its 8 MiB with the snapshot" [ "$shared" = $((8 << 20)) ]
check "the snapshot is immutable" bash -c "lsattr -d '$ds1/.snapshot/s1' | grep -q '^....i'"
check "root cannot write it either" bash -c "! (echo x >>'$ds1/.snapshot/s1/keep.txt') 2>/dev/null"
code=$(post /volumes/ds1/snapshots '{"name":"s1"}')
check "a second s1: 409" [ "$code" = 409 ]
for bad in 'a/b' '..' 'x..y' '.hidden' ''; do
	code=$(post /volumes/ds1/snapshots "{\"name\":\"$bad\"}")
	check "name '$bad': 400" [ "$code" = 400 ]
done
code=$(acurl -s --path-as-is -o "$TEST_TMP/body" -w '%{http_code}' -X DELETE "$A/volumes/ds1/snapshots/..")
check "DELETE .../snapshots/..: 400" [ "$code" = 400 ]
code=$(post /volumes/ds2/snapshots '{"name":"s1"}')
check "a datastore on ext4: 422" [ "$code" = 422 ]
check "... naming reflink" grep -q reflink "$TEST_TMP/body"
check "... and nothing left in it" [ ! -e "$TEST_TMP/ds2/.snapshot" ]
code=$(post /volumes/ds1/snapshots/none/restore '{}')
check "restore of a snapshot that does not exist: 404" [ "$code" = 404 ]

echo v2 >"$ds1/keep.txt"
echo new >"$ds1/new.txt"
rm "$ds1/gone.txt"
check "over NFS: the live files and the read-only snapshot" \
	python3 "$py" before "$NFS_PORT" "$MOUNT_PORT" "$TEST_TMP/handles.json"
check "dsnfsctl snapshot restore ds1 s1" ctl snapshot restore ds1 s1
check "the live tree is the snapshot's again" bash -c \
	"diff -r --no-dereference -x .snapshot '$ds1' '$ds1/.snapshot/s1'"
check "over NFS: the handles after the restore" \
	python3 "$py" after "$NFS_PORT" "$MOUNT_PORT" "$TEST_TMP/handles.json"
check "the snapshot did not change" bash -c "[ \"\$(cat '$ds1/.snapshot/s1/keep.txt')\" = v1 ]"

echo "the kernel client"
KCLIENT=$(cd "$(dirname "$0")/../kclient" && pwd)
if "$KCLIENT/build.sh" >"$TEST_TMP/kbuild.log" 2>&1; then
	out=$("$KCLIENT/run-guest.sh" "$NFS_PORT" "$MOUNT_PORT" /ds1 'set -e
ls .snapshot
cat .snapshot/s1/keep.txt
cmp vm1/disk-flat.vmdk .snapshot/s1/vm1/disk-flat.vmdk
if echo x > .snapshot/s1/new 2>/dev/null; then echo "wrote into a snapshot?"; exit 1; fi
if rm .snapshot/s1/keep.txt 2>/dev/null; then echo "removed from a snapshot?"; exit 1; fi
echo GUEST-OK' 2>&1)
	rc=$?
	echo "$out" | tail -5
	check "the kernel client lists .snapshot and reads s1 (rc=$rc)" grep -q GUEST-OK <<<"$out"
	check "  the snapshot's file as it was" grep -qx v1 <<<"$out"
else
	cat "$TEST_TMP/kbuild.log"
	check "the kernel-client guest builds" false
fi

echo "snapshot_dir"
check "a snapshot of ds3" ctl snapshot create ds3 s1
check "over NFS: snapshot_dir = false hides it" python3 "$py" hidden "$NFS_PORT" "$MOUNT_PORT"
write_conf true
kill -HUP "$DSNFSD_PID"
for _ in $(seq 1 100); do grep -q 'config: reloaded' "$TEST_TMP/dsnfsd.log" && break; sleep 0.1; done
check "over NFS: after SIGHUP with snapshot_dir = true" python3 "$py" shown "$NFS_PORT" "$MOUNT_PORT"

echo "issue 23: the manifest, a planted directory, the live disk"
check "the manifest in the state directory names s1" \
	grep -q '^s1 ' "$TEST_TMP/state/snapshots-ds1.manifest"
# A directory planted under .snapshot, as a client could while it was
# writable (here on the server: .snapshot is immutable in between).
keep_sum=$(md5sum <"$ds1/keep.txt")
chattr -i "$ds1/.snapshot"
mkdir "$ds1/.snapshot/daily-0601"
echo planted >"$ds1/.snapshot/daily-0601/keep.txt"
echo evil >"$ds1/.snapshot/daily-0601/evil.txt"
chattr +i "$ds1/.snapshot"
check "a planted .snapshot/daily-0601 is not listed" bash -c \
	"! '$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT snapshot list ds1 | grep -q daily-0601"
code=$(post /volumes/ds1/snapshots/daily-0601/restore '{}')
check "its restore: 404" [ "$code" = 404 ]
check "  the reason: a directory the server did not make" body_has "did not make"
sleep 0.5
check "  the datastore is untouched: keep.txt as it was" [ "$(md5sum <"$ds1/keep.txt")" = "$keep_sum" ]
check "  nothing of the planted directory in it" [ ! -e "$ds1/evil.txt" ]
code=$(post /volumes/ds1/snapshots '{"name":"daily-0601"}')
check "a snapshot of that name: 409, what is there kept" bash -c \
	"[ $code = 409 ] && [ -e '$ds1/.snapshot/daily-0601/evil.txt' ]"
# A VM writes its disk all through a snapshot and after it.
python3 - "$ds1/vm1/disk-flat.vmdk" "$TEST_TMP/stop" "$TEST_TMP/writer.out" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
ok = bad = 0
while not os.path.exists(sys.argv[2]) or ok < 20:
    try:
        os.pwrite(fd, os.urandom(4096), (ok % 2048) * 4096)
        ok += 1
    except OSError as e:
        bad += 1
        print("error:", e)
    time.sleep(0.002)
os.close(fd)
open(sys.argv[3], "w").write("%d %d\n" % (ok, bad))
PY
writer=$!
check "a snapshot s2 while the live disk is written" ctl snapshot create ds1 s2
touch "$TEST_TMP/stop"
wait "$writer"
check "  every write of the live disk succeeded" bash -c "read ok bad <'$TEST_TMP/writer.out' && [ \$ok -gt 0 ] && [ \$bad = 0 ]"
check "  the live disk carries no immutable flag" bash -c "! lsattr '$ds1/vm1/disk-flat.vmdk' | grep -q '^....i'"
check "  and is written after it too" bash -c "printf x | dd of='$ds1/vm1/disk-flat.vmdk' bs=1 seek=5 conv=notrunc status=none"
check "  the snapshot's copy is its own inode, immutable" bash -c \
	"[ \$(stat -c %i '$ds1/vm1/disk-flat.vmdk') != \$(stat -c %i '$ds1/.snapshot/s2/vm1/disk-flat.vmdk') ] && lsattr '$ds1/.snapshot/s2/vm1/disk-flat.vmdk' | grep -q '^....i'"
check "  no temporary left in .snapshot" bash -c "! ls -a '$ds1/.snapshot' | grep -q '\.tmp\$'"
check "dsnfsctl snapshot delete ds1 s2" ctl snapshot delete ds1 s2
check "  out of the manifest" bash -c "! grep -q '^s2 ' '$TEST_TMP/state/snapshots-ds1.manifest'"

check "dsnfsctl snapshot delete ds1 s1" ctl snapshot delete ds1 s1
check "... it is gone" bash -c "[ ! -e '$ds1/.snapshot/s1' ]"
check "... and listed no more" bash -c "! '$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT snapshot list ds1 | grep -q '^s1 '"
code=$(acurl -s -o "$TEST_TMP/body" -w '%{http_code}' -X DELETE "$A/volumes/ds1/snapshots/s1")
check "deleting it again: 404" [ "$code" = 404 ]
check "server exits cleanly" dsnfsd_stop
test_done
