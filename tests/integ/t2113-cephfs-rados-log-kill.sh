#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The RADOS intent log (intent_log = rados; store/cephfs/cephfs_rlog.h)
# killed at many points, t8201's method (t2113-cephfs-rados-log-kill.py):
# FILE_SYNC writes in flight over three files while checkpoints run every
# 100 ms and the 8 MiB ring wraps, the gateway SIGKILLed at a seeded
# point, a new one on the same log fences and replays, and every
# acknowledged byte reads back as acknowledged last.  KILL_POINTS (16)
# rounds; KILL_SEED reproduces a run (its seed is printed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

ceph_fuse_mount || exit 1
dir=/t-$$-rlogkill
mkdir -p "$CEPH_MNT$dir/ds1" || exit 1
CEPH_DS1_PATH=$dir/ds1
ceph_rlog_conf "$dir/ds1" "t2113-$$" "$(lab_access)" |
	# Every stable write into the log (none in place): the log's ring
	# must wrap within the kill points.
	sed -e 's/^intent_log_checkpoint_ms = .*/intent_log_checkpoint_ms = 100/' \
		-e '/^\[server\]/a intent_log_inplace_min_bytes = 0' \
		>"$TEST_TMP/gw.conf"
seed=${KILL_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
check "RADOS intent log: ${KILL_POINTS:-16} kill points, 0 acknowledged bytes lost" \
	python3 "$(dirname "$0")/t2113-cephfs-rados-log-kill.py" \
	"$DSNFS_BIN/dsnfsd" "$TEST_TMP" "$TEST_TMP/gw.conf" "$CEPH_CONF" \
	ds1 "t2113-$$" "${KILL_POINTS:-16}" "$seed"
test_done
