#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# OSDs losing power under stable writes (t2121-cephfs-osd-power-loss.py):
# a cluster of three OSDs (size 3, min_size 2) serves two datastores, one
# whose stable writes are ceph_ll_fsynced (cephds) and one whose FILE_SYNC
# WRITEs are records of the RADOS intent log (rlogds).  One OSD, then all
# three at once, lose power (tests/ceph/cluster.sh power-cut: BlueStore
# drops the writes it has not flushed and the OSD ends); each store passes
# a deep fsck, starts again from its data, and no acknowledged write is
# lost.  A cluster of its own (the suite's has one OSD), stopped at exit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

unset DSNFS_CEPH_CONF
CEPH_OSDS=3 ceph_up || exit 1
/usr/bin/python3 - "$CEPH_CONF" <<'PY' || exit 1
import sys
import cephfs
fs = cephfs.LibCephFS(conffile=sys.argv[1])
fs.mount()
for d in ("/fsync", "/rlog"):
    fs.mkdir(d, 0o755)
fs.shutdown()
PY
{
	cat <<CONF
[server]
intent_log_mib = 8
CONF
	ceph_ds_conf cephds "$CEPH_CONF" /fsync
	ceph_ds_conf rlogds "$CEPH_CONF" /rlog
	cat <<CONF
intent_log = rados
intent_log_gateway = t2121-$$
CONF
} >"$TEST_TMP/gw.conf"
dsnfsd_start -c "$TEST_TMP/gw.conf" || exit 1
cluster_sh=$(cd "$(dirname "$0")/../ceph" && pwd)/cluster.sh
python3 "$(dirname "$0")/t2121-cephfs-osd-power-loss.py" "$NFS_PORT" \
	"$MOUNT_PORT" "$cluster_sh" "$CEPH_OWN_DIR"
check "the load's checks pass" [ $? -eq 0 ]
check "dsnfsd stops cleanly" dsnfsd_stop
records=$(sed -n 's/.*rlog: rlogds: .* closed.*: \([0-9]*\) records.*/\1/p' \
	"$TEST_TMP/dsnfsd.log")
check "rlogds's FILE_SYNC writes went through its RADOS log (${records:-no} records)" \
	[ "${records:-0}" -gt 100 ]
test_done
