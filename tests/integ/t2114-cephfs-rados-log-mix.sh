#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The RADOS intent log (intent_log = rados) killed under a mixed load
# (t2114-cephfs-rados-log-mix.py): WRITEs FILE_SYNC, DATA_SYNC and
# UNSTABLE with COMMITs, SETATTRs that truncate and extend, writes that
# extend the files and writes over writes in flight, checkpoints every
# 300 ms and the 8 MiB ring wrapping; the gateway SIGKILLed at a seeded
# point (after so many bytes, or just after a SETATTR or a COMMIT is
# answered), a new one on the same log fences and replays, and every
# file reads back as rlogmodel.py allows.  KILL_POINTS (10) rounds;
# KILL_SEED reproduces a run (its seed is printed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

ceph_fuse_mount || exit 1
dir=/t-$$-rlogmix
mkdir -p "$CEPH_MNT$dir/ds1" || exit 1
CEPH_DS1_PATH=$dir/ds1
ceph_rlog_conf "$dir/ds1" "t2114-$$" "$(lab_access)" |
	# Every stable write into the log (none in place): the log's ring
	# must wrap within the kill points.
	sed -e 's/^intent_log_checkpoint_ms = .*/intent_log_checkpoint_ms = 300/' \
		-e '/^\[server\]/a intent_log_inplace_min_bytes = 0' \
		>"$TEST_TMP/gw.conf"
seed=${KILL_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
check "RADOS intent log, mixed load: ${KILL_POINTS:-10} kill points, 0 bytes outside the model" \
	python3 "$(dirname "$0")/t2114-cephfs-rados-log-mix.py" \
	"$DSNFS_BIN/dsnfsd" "$TEST_TMP" "$TEST_TMP/gw.conf" "$CEPH_CONF" \
	ds1 "t2114-$$" "${KILL_POINTS:-10}" "$seed"
test_done
