#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A loaded gateway with the RADOS intent log frozen (SIGSTOP) and taken
# over by another gateway, then resumed (t2115-cephfs-rados-log-takeover.py):
# B, another process with its own state and ports and A's
# intent_log_gateway, fences A, replays its log and serves; every file
# reads back through B as rlogload.py's mixed load was answered by A;
# after SIGCONT A is fenced (log line, /metrics, JUKEBOX) and nothing of
# it lands: the files through B and their RADOS objects stay as they
# were.  TAKEOVER_SEED reproduces the ops (the seed is printed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

ceph_fuse_mount || exit 1
dir=/t-$$-takeover
mkdir -p "$CEPH_MNT$dir/ds1" || exit 1
CEPH_DS1_PATH=$dir/ds1
ceph_rlog_conf "$dir/ds1" "t2115-$$" "$(lab_access)" |
	sed 's/^intent_log_checkpoint_ms = .*/intent_log_checkpoint_ms = 300/' \
		>"$TEST_TMP/gw.conf"
seed=${TAKEOVER_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
check "RADOS intent log: a frozen loaded gateway taken over by another, nothing lost, nothing late" \
	python3 "$(dirname "$0")/t2115-cephfs-rados-log-takeover.py" \
	"$DSNFS_BIN/dsnfsd" "$TEST_TMP" "$TEST_TMP/gw.conf" "$CEPH_CONF" \
	ds1 "t2115-$$" "$seed"
if [ "$FAILS" -gt 0 ]; then
	for f in "$TEST_TMP"/gw-*.log; do
		echo "$f (cephfs, rlog lines):"
		grep -E 'cephfs|rlog' "$f" | tail -20
	done
fi
test_done
