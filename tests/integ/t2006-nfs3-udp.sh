#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# NFSv3 over UDP on the NFS port: the built-in portmapper maps
# it, and a raw UDP client gets NULL, GETATTR, WRITE and READ back, READ
# and WRITE clamped to a datagram, COMMIT off the main loop and a
# retransmission answered from the duplicate request cache.  rpcinfo -u
# (which asks port 111 even with -n) is in t0001.
. "$(dirname "$0")/lib.sh"

dsnfsd_start -P 0 || exit 1
check "NFSv3 over UDP answers" \
	python3 "$(dirname "$0")/t2006-nfs3-udp.py" "$NFS_PORT" \
	"$MOUNT_PORT" "$PORTMAP_PORT"
check "server exits cleanly" dsnfsd_stop

cat >"$TEST_TMP/noudp.conf" <<CONF
[server]
nfs_udp = false
CONF
dsnfsd_start -c "$TEST_TMP/noudp.conf" || exit 1
check "nfs_udp = false: nothing on UDP" \
	python3 "$(dirname "$0")/t2006-nfs3-udp.py" "$NFS_PORT" --none
check "server exits cleanly" dsnfsd_stop
test_done
