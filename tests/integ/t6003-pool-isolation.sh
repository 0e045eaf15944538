#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A throttled flow does not hold back others: the queue is per flow
# (connection x datastore).  On one connection, calls for ds2 overtake the
# calls for a throttled ds1 waiting in their queue, while ds1's own calls
# stay in order (a GETATTR waits behind its READs); and a busy, throttled
# ds1 leaves ds2's throughput where it was alone.
. "$(dirname "$0")/lib.sh"

cat >"$TEST_TMP/pools.conf" <<CONF
[pool slow]
level = standard
size_tib = 1
qos = manual

[pool fast]
level = standard
size_tib = 4
qos = manual

[datastore ds1]
pool = slow
quota = 1GiB
throughput_mibps = 1

[datastore ds2]
pool = fast
quota = 1GiB
throughput_mibps = 12
CONF

dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "one connection: ds2 overtakes a waiting ds1, ds1 stays in order" \
	python3 "$(dirname "$0")/t6003-pool-isolation.py" "$NFS_PORT" \
	"$MOUNT_PORT" one-connection
check "a saturated ds1 leaves ds2's throughput alone" \
	python3 "$(dirname "$0")/t6003-pool-isolation.py" "$NFS_PORT" \
	"$MOUNT_PORT" two-volumes
check "server exits cleanly" dsnfsd_stop
test_done
