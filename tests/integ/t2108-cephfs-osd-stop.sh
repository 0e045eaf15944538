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
#  3. the leader of three mons (CEPH_MONS=3) SIGSTOPped 20 s, past the
#     MDS's beacon grace: the two others elect a leader, the writes go
#     on, FSSTATs (a mon's figures) answer;
# then every acknowledged write reads back.  Last, the whole cluster is
# SIGKILLed under a FILE_SYNC write and dsnfsd gets SIGTERM: it ends within
# its stop grace (10 s) and says why, instead of waiting for the cluster.
# A cluster of its own (the suite's has one OSD and one mon), stopped at
# exit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

unset DSNFS_CEPH_CONF
CEPH_MONS=3 CEPH_OSDS=3 ceph_up || exit 1
ceph_ds_conf cephds "$CEPH_CONF" "/" >"$TEST_TMP/cephds.conf"
dsnfsd_start -c "$TEST_TMP/cephds.conf" || exit 1
cluster_sh=$(cd "$(dirname "$0")/../ceph" && pwd)/cluster.sh
python3 "$(dirname "$0")/t2108-cephfs-osd-stop.py" "$NFS_PORT" \
	"$MOUNT_PORT" "$cluster_sh" "$CEPH_OWN_DIR"
check "the load's checks pass" [ $? -eq 0 ]

echo "SIGTERM with the cluster lost under a FILE_SYNC write:"
python3 - "$NFS_PORT" "$MOUNT_PORT" "$(dirname "$0")" <<'PY' &
import sys
sys.path.insert(0, sys.argv[3])
from nfs3wire import *
with MountClient(("127.0.0.1", int(sys.argv[2]))) as m:
    root = m.mnt("/cephds").fhandle
c = Nfs3Client(("127.0.0.1", int(sys.argv[1])), timeout=300)
fh = c.create(root, "stuck.bin").object
try:
    while True:
        c.write(fh, 0, b"s" * 65536, stable=FILE_SYNC)
except (ConnectionClosed, OSError):
    pass
PY
writer=$!
sleep 2
"$cluster_sh" kill "$CEPH_OWN_DIR"
sleep 2
t0=$SECONDS
kill -TERM "$DSNFSD_PID"
wait "$DSNFSD_PID"
rc=$?
took=$((SECONDS - t0))
DSNFSD_PID=""
echo "    stopped in ${took} s, exit status $rc"
check "dsnfsd ends within 15 s of SIGTERM, status 0" [ $took -le 15 -a $rc -eq 0 ]
check "and says why" grep -q "still stopping after 10 s: calls wait on a cluster" \
	"$TEST_TMP/dsnfsd.log"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
test_done
