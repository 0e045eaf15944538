#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Linux kernel NFS client (tests/kclient, a QEMU guest) mounts a
# datastore and uses most procedures: CREATE WRITE COMMIT READ LOOKUP
# GETATTR SETATTR ACCESS MKDIR RENAME LINK SYMLINK READLINK MKNOD REMOVE
# RMDIR READDIR(PLUS) FSSTAT FSINFO PATHCONF; and sees the storage's own
# work: a full clone made by the admin API reads as its source.  (Snapshots
# need a file system that shares blocks: t5009, on XFS.)
. "$(dirname "$0")/lib.sh"
KCLIENT=$(cd "$(dirname "$0")/../kclient" && pwd)

# Builds the guest once (its kernel comes from the apt archive); then a no-op.
"$KCLIENT/build.sh" >"$TEST_TMP/kbuild.log" 2>&1 || {
	cat "$TEST_TMP/kbuild.log"
	exit 1
}
dsnfsd_start || exit 1
ctl() { "$DSNFS_BIN/dsnfsctl" -s "127.0.0.1:$ADMIN_PORT" "$@" >/dev/null; }
"$DSNFS_BIN/dsvmdk" create -t thin -s 16M "$TEST_TMP/ds1/src.vmdk" >/dev/null
dd if=/dev/urandom of="$TEST_TMP/ds1/src-flat.vmdk" bs=1M count=4 seek=6 conv=notrunc status=none
check "a full clone by the storage" ctl vmdk clone ds1 src.vmdk full.vmdk --full
cat >"$TEST_TMP/guest.sh" <<'GUEST'
set -e
cmp src-flat.vmdk full-flat.vmdk
echo CLONE-SAME
rm full.vmdk full-flat.vmdk
echo "hello from the kernel client" > a.txt
cat a.txt
dd if=/dev/urandom of=big bs=1M count=8 2>/dev/null
md5sum big > big.md5
mkdir -p d1/d2
mv a.txt d1/d2/b.txt
ln d1/d2/b.txt hard.txt
ln -s d1/d2/b.txt soft.txt
readlink soft.txt
mkfifo fifo1
chmod 600 hard.txt
truncate -s 1000 d1/d2/b.txt
ls -la . d1/d2
df -k . | tail -1
kc_remount
md5sum -c big.md5
stat -c '%s %a' d1/d2/b.txt hard.txt
rm soft.txt fifo1 hard.txt
rm -r d1
if rmdir /mnt 2>/dev/null; then echo "rmdir of the root worked?"; exit 1; fi
echo GUEST-OK
GUEST
out=$("$KCLIENT/run-guest.sh" "$NFS_PORT" "$MOUNT_PORT" /ds1 "@$TEST_TMP/guest.sh" 2>&1)
rc=$?
echo "$out" | tail -40
check "guest commands succeed (rc=$rc)" [ $rc -eq 0 ]
check "guest reached the end" grep -q GUEST-OK <<<"$out"
check "8 MiB file survives a remount (read from the server)" grep -q 'big: OK' <<<"$out"
check "truncate + chmod seen after remount" grep -q '^1000 600' <<<"$out"
check "symlink target read back" grep -q '^d1/d2/b.txt' <<<"$out"
check "the kernel client reads the full clone as its source" grep -q CLONE-SAME <<<"$out"
check "big is on the server with 8 MiB" bash -c "[ \$(stat -c %s '$TEST_TMP/ds1/big') = 8388608 ]"
check "server exits cleanly" dsnfsd_stop
test_done
