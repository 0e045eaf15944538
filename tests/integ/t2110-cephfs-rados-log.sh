#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The RADOS intent log of a cephfs datastore (intent_log = rados;
# store/cephfs/cephfs_rlog.h), t2110-cephfs-rados-log.py: FILE_SYNC writes
# acknowledged through the log with a checkpoint an hour away, the gateway
# SIGKILLed, a new one on the same log fences the old one's clients and
# replays: every acknowledged write reads back; then a record corrupted in
# the RADOS object ends the replay there, with one log line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

ceph_fuse_mount || exit 1
dir=/t-$$-rlog
mkdir -p "$CEPH_MNT$dir/ds1" || exit 1
CEPH_DS1_PATH=$dir/ds1
ceph_rlog_conf "$dir/ds1" "t2110-$$" "$(lab_access)" >"$TEST_TMP/gw.conf"
check "RADOS intent log: kill -9, fence, replay; a corrupt record" \
	python3 "$(dirname "$0")/t2110-cephfs-rados-log.py" "$DSNFS_BIN/dsnfsd" \
	"$TEST_TMP" "$TEST_TMP/gw.conf" "$CEPH_CONF" "ds1" "t2110-$$"
test_done
