#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Quotas are real: ds1 has a 16 MiB quota.  FSSTAT reports it as the size;
# writes fill it and the one that would pass it gets NFS3ERR_NOSPC, with
# every byte written before intact; a full datastore still takes
# overwrites; REMOVE gives room back; a thin (sparse) file may be larger
# than the quota.  After a restart the scan finds the same usage.
. "$(dirname "$0")/lib.sh"

cat >"$TEST_TMP/pools.conf" <<CONF
[pool lab]
level = premium
size_tib = 4
qos = manual

[datastore ds1]
pool = lab
quota = 16MiB
throughput_mibps = 200
CONF

dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "NOSPC at the quota, data intact, room back after REMOVE" \
	python3 "$(dirname "$0")/t6004-pool-quota.py" "$NFS_PORT" \
	"$MOUNT_PORT" fill "$TEST_TMP/used"
check "server exits cleanly" dsnfsd_stop
dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "after a restart: the same usage, the data, the quota" \
	python3 "$(dirname "$0")/t6004-pool-quota.py" "$NFS_PORT" \
	"$MOUNT_PORT" restarted "$TEST_TMP/used"
check "server exits cleanly" dsnfsd_stop
test_done
