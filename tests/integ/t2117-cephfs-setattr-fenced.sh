#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A SETATTR that grows a file of a cephfs datastore, caught in its sync
# (ceph_ll_sync_inode) when the gateway is fenced (t2117-cephfs-setattr-
# fenced.py): the MDS SIGKILLed before it, the gateway's client
# blocklisted, the MDS started again.  libcephfs then drops the size it
# was flushing and ends the sync with 0: the gateway must not answer
# NFS3_OK for a size the file does not have (docs/ceph-rlog.md, "A
# SETATTR fenced in its sync").  A cluster of its own (it kills the MDS).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

unset DSNFS_CEPH_CONF
ceph_fuse_mount || exit 1
dir=/t-$$-fenced
mkdir -p "$CEPH_MNT$dir/ds1" || exit 1
CEPH_DS1_PATH=$dir/ds1
{
	printf '[datastore ds1]\nbackend = cephfs\nceph_conf = %s\n' "$CEPH_CONF"
	printf 'ceph_path = %s\n' "$dir/ds1"
	lab_access
} >"$TEST_TMP/gw.conf"
check "a SETATTR fenced in its sync is not answered NFS3_OK with its size lost" \
	python3 "$(dirname "$0")/t2117-cephfs-setattr-fenced.py" \
	"$DSNFS_BIN/dsnfsd" "$TEST_TMP" "$TEST_TMP/gw.conf" \
	"$CEPH_HERE/cluster.sh" "$CEPH_OWN_DIR" "$CEPH_MNT$dir/ds1/fenced.bin"
test_done
