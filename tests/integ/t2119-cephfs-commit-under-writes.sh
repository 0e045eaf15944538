#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A COMMIT of a cephfs datastore's file while UNSTABLE writes of the same
# file keep coming (store/cephfs/cephfs_io.c, commit_gate): four dsload
# hosts each keep 16 random 8 KiB UNSTABLE writes in flight on a VMDK of
# their own and send a COMMIT every 64 of them, every block verified.
# Pacific's ceph_ll_fsync returned only once the file's writes stopped:
# COMMITs took 5 s, and the datastore was marked down (JUKEBOX to every
# call) on a healthy cluster, in about one run of four of this load
# (docs/ceph.md).  Here no call fails, the server never says the cluster
# does not answer, and the COMMITs keep being answered through the run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

ceph_up || exit 1
export DSNFS_CEPH_CONF=$CEPH_CONF DSNFS_DS1_BACKEND=cephfs

dsnfsd_start || exit 1
"$DSNFS_BIN/dsload" run --nfs-port "$NFS_PORT" --mount-port "$MOUNT_PORT" \
	-H 4 -D ds1 --vmdk-size 64m --bs 8k --read-pct 0 --random-pct 100 \
	--iodepth 16 --stable unstable --verify --ramp 0.5 --runtime 6 \
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
# dsload sends a COMMIT after 64 writes once the last one is answered:
# answered at once, one for 64-150 writes; starved (the old code), one
# for 600 or more, 10-17 in a run.  A count of writes, not of seconds.
check "COMMITs kept being answered (one for at most 300 writes)" \
	test "${commits:-0}" -gt 0 -a "$((${writes:-0} / ${commits:-1}))" -le 300
check "server exits cleanly" dsnfsd_stop
test_done
