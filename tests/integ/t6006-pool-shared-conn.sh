#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One TCP connection shared by two datastores, as ESXi shares connections
# past SunRPC.MaxConnPerIP: ds1 (4 MiB quota) fills up and answers NOSPC,
# while ds2's writes on the same connection go on; admission keys a flow
# on (connection, the file handle's export), so /flows shows two flows on
# that one connection, and nConnect groups (host, datastore -> its
# connections) once four connections carry ds1.
. "$(dirname "$0")/lib.sh"

cat >"$TEST_TMP/pools.conf" <<CONF
[pool lab]
level = premium
size_tib = 4
qos = manual

[datastore ds1]
pool = lab
quota = 4MiB
throughput_mibps = 100

[datastore ds2]
pool = lab
quota = 64MiB
throughput_mibps = 100
CONF

dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "a full ds1 leaves ds2 alone on the same connection; /flows groups" \
	python3 "$(dirname "$0")/t6006-pool-shared-conn.py" "$NFS_PORT" \
	"$MOUNT_PORT" "$ADMIN_PORT"
check "server exits cleanly" dsnfsd_stop
test_done
