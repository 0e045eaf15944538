#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CephFS handles and the trust boundary (issue 23, finding 7): the handle
# key is a file of the state directory (0600), not an xattr any CephFS
# client of the tree can read; the directory holds only the key's id; a
# handle with a valid MAC (forged here with the key) naming an inode
# outside the datastore's ceph_path is refused (STALE/BADHANDLE) while one
# naming an inode inside resolves; a version-1 secret planted in the old
# xattr before the first start is moved into the state directory and the
# xattr removed, and version-1 handles made with it still resolve inside
# ds1 and are refused outside (see the .py for the handle checks).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

# ds1 is a directory of its own (lib.sh's dsnfsd_start takes its section);
# "other" is a tree beside it that ds1's clients must not reach.
ceph_ds1_setup || exit 1
dir=$(dirname "$CEPH_DS1_PATH")
mkdir -p "$CEPH_MNT$dir/other" || exit 1
echo "secret of another tree" >"$CEPH_MNT$dir/other/payroll.txt"
echo "inside" >"$CEPH_MNT$dir/ds1/inside.txt"
mkdir -p "$CEPH_MNT$dir/ds1/sub"
echo "deeper" >"$CEPH_MNT$dir/ds1/sub/deep.txt"
# A snapshot of each tree: ds1's own, and one of the directory beside it.
mkdir "$CEPH_MNT$dir/ds1/.snap/mine" "$CEPH_MNT$dir/other/.snap/theirs" ||
	exit 1
xattr() { python3 -c 'import os, sys
if sys.argv[1] == "set":
    os.setxattr(sys.argv[3], sys.argv[2], open(sys.argv[4], "rb").read())
else:
    sys.stdout.buffer.write(os.getxattr(sys.argv[3], sys.argv[2]))' "$@"; }
# The version-1 secret as dsnfsd made it before: 192 bytes in an xattr.
head -c 192 /dev/urandom >"$TEST_TMP/v1"
xattr set user.dsnfs.handle_secret "$CEPH_MNT$dir/ds1" "$TEST_TMP/v1" || exit 1
export DSNFS_DS1_BACKEND=cephfs
mkdir -p -m 700 "$TEST_TMP/state"
dsnfsd_start || exit 1
check "the handle key is a 0600 file of the state directory" \
	[ "$(stat -c %a "$TEST_TMP/state/cephfs.key")" = 600 ]
check "the directory holds no handle key, only its 16-byte id" \
	[ "$(xattr get user.dsnfs.handle_key_id "$CEPH_MNT$dir/ds1" | wc -c)" = 16 ]
no_xattr() { ! xattr get "$1" "$2" >/dev/null 2>&1; }
check "the version-1 xattr is removed" \
	no_xattr user.dsnfs.handle_secret "$CEPH_MNT$dir/ds1"
check "... its secret moved into the state directory, 0600" \
	cmp -s "$TEST_TMP/v1" "$TEST_TMP/state/cephfs.ds1.v1-secret"
check "... 0600" [ "$(stat -c %a "$TEST_TMP/state/cephfs.ds1.v1-secret")" = 600 ]
check "forged handles: inside resolves, outside is refused" python3 \
	"$(dirname "$0")/t2107-cephfs-handle-trust.py" "$NFS_PORT" \
	"$MOUNT_PORT" "$TEST_TMP/state/cephfs.key" \
	"$(stat -c %i "$CEPH_MNT$dir/ds1/sub/deep.txt")" \
	"$(stat -c %i "$CEPH_MNT$dir/other/payroll.txt")" \
	"$(stat -c %i "$CEPH_MNT$dir/other")" \
	"$(stat -c %i "$CEPH_MNT$dir")" "$TEST_TMP/v1"
check "the refusal is logged" grep -q "not under the directory served" \
	"$TEST_TMP/dsnfsd.log"
check "server stops cleanly" dsnfsd_stop

# A key that is not the directory's: the datastore is not served (MNT
# refused; it is retried in the background like a cluster that does not
# answer, so copying the right key in brings it up without a restart).
mnt_refused() {
	python3 -c 'import sys; sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
from nfs3wire import *
with MountClient(("127.0.0.1", int(sys.argv[2]))) as m:
    sys.exit(m.mnt("/ds1").status == MNT3_OK)' "$(dirname "$0")" "$MOUNT_PORT"
}
chmod 600 "$TEST_TMP/state/cephfs.key"
cp -p "$TEST_TMP/state/cephfs.key" "$TEST_TMP/key.good"
head -c 32 /dev/urandom >"$TEST_TMP/state/cephfs.key"
dsnfsd_start || exit 1
check "with another key, ds1 is not served (MNT refused)" mnt_refused
check "... and the log says why" grep -q \
	"is not the key the handles of this directory are signed with" \
	"$TEST_TMP/dsnfsd.log"
check "server stops cleanly" dsnfsd_stop
# A key file others can read: refused.
cp -p "$TEST_TMP/key.good" "$TEST_TMP/state/cephfs.key"
chmod 644 "$TEST_TMP/state/cephfs.key"
dsnfsd_start || exit 1
check "with a key file readable by others, ds1 is not served" mnt_refused
check "... and the log says why" grep -q \
	"cephfs.key: mode 0644 lets others read it" "$TEST_TMP/dsnfsd.log"
check "server stops cleanly" dsnfsd_stop
chmod 600 "$TEST_TMP/state/cephfs.key"
dsnfsd_start || exit 1
check "with its own key back it serves again" dsnfsd_stop
# The snapshots, so that the test's directory can go.
rmdir "$CEPH_MNT$dir/ds1/.snap/mine" "$CEPH_MNT$dir/other/.snap/theirs"
test_done
