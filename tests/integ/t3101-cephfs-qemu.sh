#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# qemu-img and qemu-io over a CephFS datastore: t3001 (a 4 GiB raw image,
# patterns at 0, 1 GiB - 4 KiB and 3 GiB) and t3002 (a VMDK made, written,
# checked) with ds1 on CephFS.  QEMU's NFS driver needs the portmapper on
# 111, so this runs in a network namespace with a cluster of its own, which
# both share.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

ceph_up || exit 1
export DSNFS_CEPH_CONF=$CEPH_CONF DSNFS_DS1_BACKEND=cephfs DSNFS_BIN
here=$(dirname "$0")
for t in t3001-qemu-raw t3002-qemu-vmdk; do
	start=$SECONDS
	bash "$here/$t.sh" >"$TEST_TMP/$t.log" 2>&1
	rc=$?
	[ $rc -eq 0 ] || grep -v '^  ok' "$TEST_TMP/$t.log" | tail -30
	check "$t over cephfs ($((SECONDS - start)) s)" [ $rc -eq 0 ]
done
test_done
