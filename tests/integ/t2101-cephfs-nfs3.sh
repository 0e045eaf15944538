#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The NFSv3 procedure tests again with ds1 on CephFS (backend = cephfs,
# store/cephfs/cephfs*.c) and ds2 local: every procedure with its errors (t2003),
# handles across a restart (t2002), libnfs copies (t2001) and UDP (t2006).
# The checks look at ds1's files through ceph-fuse, as they look at a local
# directory.  One cluster for all: the suite's, or one of its own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

ceph_up || exit 1
export DSNFS_CEPH_CONF=$CEPH_CONF DSNFS_DS1_BACKEND=cephfs DSNFS_BIN
here=$(dirname "$0")
for t in t2003-nfs3-procedures t2002-nfs3-handle-restart t2001-libnfs-copy \
	t2006-nfs3-udp; do
	start=$SECONDS
	bash "$here/$t.sh" >"$TEST_TMP/$t.log" 2>&1
	rc=$?
	[ $rc -eq 0 ] || grep -v '^  ok' "$TEST_TMP/$t.log" | tail -30
	check "$t over cephfs ($((SECONDS - start)) s)" [ $rc -eq 0 ]
done
test_done
