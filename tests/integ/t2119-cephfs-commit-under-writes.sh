#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A COMMIT of a cephfs datastore's file while UNSTABLE writes of the same
# file keep coming (store/cephfs/cephfs_obj.c, store__cephfs_write_fair):
# four dsload hosts each keep 16 random 8 KiB UNSTABLE writes in flight on
# a VMDK of their own and send a COMMIT every 64 of them, every block
# verified.  Pacific's ceph_ll_fsync returned only once the file's writes
# stopped: a COMMIT then took 5 s, and the datastore was marked down
# (JUKEBOX to every call) on a healthy cluster, in one run of four to two
# of this load (docs/ceph.md).  Here no call fails, the server never says
# the cluster does not answer, and COMMITs are answered.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

ceph_up || exit 1
export DSNFS_CEPH_CONF=$CEPH_CONF DSNFS_DS1_BACKEND=cephfs

dsnfsd_start || exit 1
"$DSNFS_BIN/dsload" run --nfs-port "$NFS_PORT" --mount-port "$MOUNT_PORT" \
	-H 4 -D ds1 --vmdk-size 64m --bs 8k --read-pct 0 --random-pct 100 \
	--iodepth 16 --stable unstable --verify --ramp 0.5 --runtime 10 \
	--quiet --json "$TEST_TMP/dsload.json" \
	>"$TEST_TMP/dsload.out" 2>"$TEST_TMP/dsload.err"
rc=$?
commits=$(grep -o 'commits [0-9]*' "$TEST_TMP/dsload.out" | grep -o '[0-9]*')
writes=$(python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))["phases"][-1]["rows"]
print([r for r in rows if r["level"] == "total"][0]["write"]["ios"])' \
	"$TEST_TMP/dsload.json" 2>/dev/null)
echo "  COMMITs answered: ${commits:-none} for ${writes:-no} writes"
check "dsload exits 0 (no call failed, every block verified)" [ $rc -eq 0 ]
check "the cluster was never taken for down" \
	bash -c "! grep -q 'does not answer' '$TEST_TMP/dsnfsd.log'"
check "COMMITs were answered" test "${commits:-0}" -gt 0
check "server exits cleanly" dsnfsd_stop
test_done
