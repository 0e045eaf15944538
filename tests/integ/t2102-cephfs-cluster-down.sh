#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cephfs datastore whose cluster does not answer at start (a mon address
# nobody listens on): dsnfsd still starts, within the client mount timeout,
# logs an error naming the datastore and the cluster, serves the local
# datastore ds2, and refuses to mount the one that is down.
. "$(dirname "$0")/lib.sh"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$TEST_TMP/down"
cat >"$TEST_TMP/down/ceph.conf" <<CONF
[global]
fsid = 00000000-0000-0000-0000-000000000000
mon host = [v2:127.0.0.1:$port]
auth cluster required = none
auth service required = none
auth client required = none
log file = $TEST_TMP/down/client.log
CONF
cat >"$TEST_TMP/down.conf" <<CONF
[datastore cephdown]
backend = cephfs
ceph_conf = $TEST_TMP/down/ceph.conf
ceph_path = /
$(lab_access)
CONF
start=$SECONDS
dsnfsd_start -c "$TEST_TMP/down.conf" || exit 1
took=$((SECONDS - start))
echo "    started in ${took}s"
check "dsnfsd starts within 20 s" [ $took -le 20 ]
check "the error names the datastore and the cluster" \
	grep -q "error: export: datastore cephdown: cephfs cluster $TEST_TMP/down/ceph.conf.*127.0.0.1:$port" \
	"$TEST_TMP/dsnfsd.log"
echo hello >"$TEST_TMP/ds2/hello.txt"
check "the local datastore ds2 serves" bash -c \
	"nfs-cat '$(nfs_url ds2 hello.txt)' | grep -q hello"
check "cephdown cannot be mounted" bash -c \
	"! nfs-ls '$(nfs_url cephdown '')' >/dev/null 2>&1"
check "the refusal says why" grep -q "mount: cephdown: its cluster has not answered since start" \
	"$TEST_TMP/dsnfsd.log"
check "server exits cleanly" dsnfsd_stop
test_done
