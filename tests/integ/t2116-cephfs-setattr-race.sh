#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SETATTRs of the size (truncate, extend) sent among WRITEs in flight to
# the same file of a cephfs datastore (t2116-cephfs-setattr-race.py): with
# no fault, without and with the RADOS intent log, the file is what one
# order of the answered ops makes; then the gateway SIGKILLed, most times
# right after a truncate is answered: without the log 4 times (its client
# evicted, a new one started), with it KILLS (10) times (a new one fences
# and replays); no acknowledged byte or size is lost and no replayed
# record puts bytes back past a later truncate.  Checkpoints only
# when a size change, a COMMIT or half the ring asks (an hour's timer):
# the replay has records to put back.  KILL_SEED reproduces a run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

ceph_fuse_mount || exit 1
dir=/t-$$-setattr
mkdir -p "$CEPH_MNT$dir/plain" "$CEPH_MNT$dir/rlog" || exit 1
CEPH_DS1_PATH=$dir/plain
{
	printf '[datastore ds1]\nbackend = cephfs\nceph_conf = %s\n' "$CEPH_CONF"
	printf 'ceph_path = %s\n' "$dir/plain"
	lab_access
} >"$TEST_TMP/plain.conf"
ceph_rlog_conf "$dir/rlog" "t2116-$$" "$(lab_access)" >"$TEST_TMP/rlog.conf"
seed=${KILL_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
check "SETATTR among WRITEs to one file: no fault, then kills without and with the RADOS log; 0 bytes outside the model" \
	python3 "$(dirname "$0")/t2116-cephfs-setattr-race.py" \
	"$DSNFS_BIN/dsnfsd" "$TEST_TMP" "$TEST_TMP/plain.conf" \
	"$TEST_TMP/rlog.conf" "$CEPH_CONF" ds1 "t2116-$$" "${KILLS:-10}" "$seed"
test_done
