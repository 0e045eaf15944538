#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cephfs datastore whose MDS hangs (SIGSTOP: its sockets stay open) for
# 20 s under a verified FILE_SYNC write load, beside the local ds2
# (t2120-cephfs-mds-mon-stop.py): a MNT whose lookup waits on the MDS, over
# TCP and over UDP, holds back no other MOUNT call and no NFS call of the
# local datastore; the cephfs datastore's calls answer NFS3ERR_JUKEBOX
# within the bound; once the MDS resumes, the waiting MNTs are answered,
# the datastore serves again by itself and every acknowledged write reads
# back.  The subdirectories the MNTs name are made by another client
# (ceph-fuse), so that the gateway must ask the MDS for them.  Then the
# mon hangs 10 s: the writes go on.  (An MDS that evicts without
# blocklisting: t2122.)  A cluster of its own (the suite's is shared by
# other tests).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

unset DSNFS_CEPH_CONF
ceph_up || exit 1
ceph_ds_conf cephds "$CEPH_CONF" "/" >"$TEST_TMP/mds-stop.conf"
dsnfsd_start -c "$TEST_TMP/mds-stop.conf" || exit 1
ceph_fuse_mount || exit 1
mkdir "$CEPH_MNT/by-tcp" "$CEPH_MNT/by-udp" || exit 1
sync
cluster_sh=$(cd "$(dirname "$0")/../ceph" && pwd)/cluster.sh
python3 "$(dirname "$0")/t2120-cephfs-mds-mon-stop.py" "$NFS_PORT" \
	"$MOUNT_PORT" "$cluster_sh" "$CEPH_OWN_DIR"
check "the load's checks pass" [ $? -eq 0 ]
check "the log says the MDS's wait and the return" bash -c \
	"grep -q 'cephfs: cephds: cluster .* does not answer' '$TEST_TMP/dsnfsd.log' &&
	 grep -q 'cephfs: cephds: cluster .* answers again after' '$TEST_TMP/dsnfsd.log'"
check "a MNT refused meanwhile says why" grep -q \
	"mount: cephds: its cluster does not answer now; MNT refused" \
	"$TEST_TMP/dsnfsd.log"
check "nothing said of evictions while the cluster blocklists" bash -c \
	"! grep -q 'evicts clients without blocklisting' '$TEST_TMP/dsnfsd.log'"
check "server exits cleanly" dsnfsd_stop
if [ "$FAILS" -gt 0 ]; then
	echo "dsnfsd's log (cephfs, mount and export lines):"
	grep -E 'cephfs|mount|export' "$TEST_TMP/dsnfsd.log" | tail -30
fi
test_done
