#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The readahead of a cephfs datastore (store/cephfs/cephfs_prefetch.c)
# seen from an NFS client: a 32 MiB file written through one dsnfsd and
# read in order by nfs-cp through a new one (whose cache holds none of it)
# reads back the same, and that dsnfsd says at stop that it read ahead;
# with ceph_readahead_mib = 0 the same read reads back the same and
# nothing is read ahead.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

ceph_up || exit 1
export DSNFS_CEPH_CONF=$CEPH_CONF DSNFS_DS1_BACKEND=cephfs
head -c $((32 * 1024 * 1024)) /dev/urandom >"$TEST_TMP/big.in"

# The MiB dsnfsd's log says it read ahead (0 when it says nothing).
read_ahead_mib() {
	local n
	n=$(sed -n 's/.*cephfs: ds1: read ahead \([0-9]*\) MiB.*/\1/p' \
		"$TEST_TMP/dsnfsd.log" | tail -1)
	echo "${n:-0}"
}

dsnfsd_start || exit 1
check "nfs-cp 32 MiB into ds1" nfs-cp "$TEST_TMP/big.in" "$(nfs_url ds1 big.bin)"
check "server exits cleanly" dsnfsd_stop

dsnfsd_start || exit 1
check "nfs-cp 32 MiB out of ds1, read in order" \
	nfs-cp "$(nfs_url ds1 big.bin)" "$TEST_TMP/big.out"
check "it reads back the same" cmp "$TEST_TMP/big.in" "$TEST_TMP/big.out"
check "server exits cleanly" dsnfsd_stop
mib=$(read_ahead_mib)
echo "  read ahead: $mib MiB"
check "it read ahead most of the file (8-64 MiB)" \
	test "$mib" -ge 8 -a "$mib" -le 64

echo "ceph_readahead_mib = 0" >>"$TEST_TMP/ceph-ds1.conf"
rm -f "$TEST_TMP/big.out"
dsnfsd_start || exit 1
check "with ceph_readahead_mib = 0: nfs-cp out of ds1" \
	nfs-cp "$(nfs_url ds1 big.bin)" "$TEST_TMP/big.out"
check "it reads back the same" cmp "$TEST_TMP/big.in" "$TEST_TMP/big.out"
check "server exits cleanly" dsnfsd_stop
check "nothing was read ahead" [ "$(read_ahead_mib)" = 0 ]
test_done
