#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cephfs datastore on a cluster of three OSDs (replication size 3,
# min_size 2: tests/ceph/cluster.sh with CEPH_OSDS=3), under a verified
# FILE_SYNC write load (t2108-cephfs-osd-stop.py):
#  1. one OSD SIGSTOPped (hung, not dead: the harder fault, its sockets
#     stay open): the cluster marks it down and the writes go on, with no
#     error but NFS3ERR_JUKEBOX; SIGCONT, the cluster is clean again;
#  2. two OSDs of three SIGSTOPped (below min_size: every write of theirs
#     waits): calls answer NFS3ERR_JUKEBOX within the bound, and once the
#     OSDs resume the writes go on by themselves;
# then every acknowledged write reads back.  A cluster of its own (the
# suite's has one OSD), stopped at exit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

unset DSNFS_CEPH_CONF
CEPH_OSDS=3 ceph_up || exit 1
cat >"$TEST_TMP/cephds.conf" <<CONF
[datastore cephds]
backend = cephfs
ceph_conf = $CEPH_CONF
ceph_path = /
$(lab_access)
CONF
dsnfsd_start -c "$TEST_TMP/cephds.conf" || exit 1
cluster_sh=$(cd "$(dirname "$0")/../ceph" && pwd)/cluster.sh
python3 "$(dirname "$0")/t2108-cephfs-osd-stop.py" "$NFS_PORT" \
	"$MOUNT_PORT" "$cluster_sh" "$CEPH_OWN_DIR"
check "the load's checks pass" [ $? -eq 0 ]
dsnfsd_stop
test_done
