#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two gateways on one CephFS datastore, then a failover (t2103-cephfs-
# gateways.py): A (127.0.0.2) and B (127.0.0.3) give the same handles, what
# one writes the other reads at once, a READDIR goes on from the other's
# cookie; then A is SIGKILLed during a verified FILE_SYNC write load, its
# session evicted (fenced), and a gateway C takes A's address and ports:
# the client goes on with its old handles (no STALE), every acknowledged
# FILE_SYNC write reads back, the write verifier changed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

ceph_fuse_mount || exit 1
dir=/t-$$-gw
mkdir -p "$CEPH_MNT$dir/ds1" || exit 1
CEPH_DS1_PATH=$dir/ds1
ceph_ds_conf ds1 "$CEPH_CONF" "$dir/ds1" >"$TEST_TMP/gw.conf"
check "two gateways and a failover" \
	python3 "$(dirname "$0")/t2103-cephfs-gateways.py" "$DSNFS_BIN/dsnfsd" \
	"$TEST_TMP" "$TEST_TMP/gw.conf" "$CEPH_CONF"
test_done
