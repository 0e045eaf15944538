#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The built-in portmapper on port 111 answers rpcinfo over TCP and UDP and
# lists NFS v3 and MOUNT v3 at the ports dsnfsd bound.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"

if ss -ltnH 'sport = :111' | grep -q .; then
	echo "port 111 is taken (an rpcbind?); this test needs it free" >&2
	exit 1
fi
dsnfsd_start -P 111 || exit 1
out=$(rpcinfo -p 127.0.0.1 2>&1)
echo "$out"
has() { echo "$out" | grep -Eq "$1"; }
check "rpcinfo -p lists portmapper v2 tcp 111" has '^ +100000 +2 +tcp +111 +portmapper'
check "rpcinfo -p lists portmapper v2 udp 111" has '^ +100000 +2 +udp +111 +portmapper'
check "rpcinfo -p lists nfs v3 tcp at $NFS_PORT" has "^ +100003 +3 +tcp +$NFS_PORT +nfs"
check "rpcinfo -p lists nfs v3 udp at $NFS_PORT" has "^ +100003 +3 +udp +$NFS_PORT +nfs"
check "rpcinfo -p lists mountd v3 tcp at $MOUNT_PORT" has "^ +100005 +3 +tcp +$MOUNT_PORT +mountd"
check "rpcinfo -p lists mountd v3 udp at $MOUNT_PORT" has "^ +100005 +3 +udp +$MOUNT_PORT +mountd"
check "rpcinfo -t nfs 3 (NULL over TCP via GETPORT)" rpcinfo -t 127.0.0.1 nfs 3
check "rpcinfo -u mountd 3 (NULL over UDP via GETPORT)" rpcinfo -u 127.0.0.1 mountd 3
check "rpcinfo -u nfs 3 (NULL over UDP via GETPORT)" rpcinfo -u 127.0.0.1 nfs 3
check "rpcinfo -u portmapper 2" rpcinfo -u 127.0.0.1 portmapper 2
check "rpcinfo -t for an unregistered program fails" bash -c '! rpcinfo -t 127.0.0.1 100021 4 2>/dev/null'
check "server exits cleanly" dsnfsd_stop
test_done
