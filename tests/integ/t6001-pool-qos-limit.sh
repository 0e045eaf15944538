#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A volume's QoS limit holds against several concurrent clients: ds1 is in
# a manual QoS pool at 40 MiB/s; four connections read and write it back
# to back.  Client-side MiB/s over 4 s must not pass the limit by more
# than 5%, and must reach at least 80% of it.
. "$(dirname "$0")/lib.sh"

cat >"$TEST_TMP/pools.conf" <<CONF
[pool lab]
level = standard
size_tib = 4
qos = manual

[datastore ds1]
pool = lab
quota = 4GiB
throughput_mibps = 40
CONF

dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "40 MiB/s holds against four clients" \
	python3 "$(dirname "$0")/t6001-pool-qos-limit.py" "$NFS_PORT" "$MOUNT_PORT"
check "server exits cleanly" dsnfsd_stop
test_done
