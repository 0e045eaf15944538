#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cephfs datastore whose cluster does not answer at start (a mon address
# nobody listens on): dsnfsd still starts, within the client mount timeout,
# logs an error naming the datastore and the cluster, serves the local
# datastore ds2, and refuses to mount the one that is down.  Then a cephfs
# datastore added by SIGHUP while its cluster is down: the reload adds it
# (not refused), and once its cluster starts it serves by itself.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

port=$(free_port)
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
ceph_ds_conf cephdown "$TEST_TMP/down/ceph.conf" / >"$TEST_TMP/down.conf"
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

# Admin operations on the lost cluster are refused at once (503, try
# again), not queued on an admin thread that waits for the cluster.
A="http://127.0.0.1:$ADMIN_PORT"
admin_refused() { # what, curl args...: 503 within 5 s, the body says why
	local what=$1 t0=$SECONDS code
	shift
	code=$(acurl -s -m 10 -o "$TEST_TMP/body" -w '%{http_code}' \
		-H 'Content-Type: application/json' "$@")
	echo "    $what: $code in $((SECONDS - t0)) s: $(cat "$TEST_TMP/body")"
	check "$what on the lost cluster: 503 at once" \
		[ "$code" = 503 -a $((SECONDS - t0)) -le 5 ]
	check "... and the reason names the volume" \
		grep -q "cephdown" "$TEST_TMP/body"
}
admin_refused "a snapshot" -d '{"name":"s1"}' "$A/volumes/cephdown/snapshots"
admin_refused "a volume from its snapshot" \
	-d '{"name":"c1","snapshot":{"volume":"cephdown","name":"s1"}}' \
	"$A/volumes"

echo "a datastore added by SIGHUP while its cluster is down:"
port2=$(free_port)
CEPH_OWN_DIR=$TEST_TMP/late # ceph_test_cleanup stops it
mkdir -p "$CEPH_OWN_DIR"
# What the cluster will be: cluster.sh start writes the whole file on
# that port later.
cat >"$CEPH_OWN_DIR/ceph.conf" <<CONF
[global]
mon host = [v2:127.0.0.1:$port2]
auth cluster required = none
auth service required = none
auth client required = none
log file = $TEST_TMP/late-client.log
CONF
ceph_ds_conf cephlate "$CEPH_OWN_DIR/ceph.conf" / >>"$TEST_TMP/down.conf"
kill -HUP "$DSNFSD_PID"
for _ in $(seq 1 300); do
	grep -q "config: reload" "$TEST_TMP/dsnfsd.log" && break
	sleep 0.1
done
check "the reload adds it (not refused)" \
	grep -q "export: added /cephlate.*cluster down: JUKEBOX" "$TEST_TMP/dsnfsd.log"
check "the reload names its cluster" \
	grep -q "error: export: datastore cephlate: cephfs cluster $CEPH_OWN_DIR/ceph.conf.*127.0.0.1:$port2" \
	"$TEST_TMP/dsnfsd.log"
check "cephlate cannot be mounted yet" bash -c \
	"! nfs-ls '$(nfs_url cephlate '')' >/dev/null 2>&1"
check "ds2 still serves" bash -c \
	"nfs-cat '$(nfs_url ds2 hello.txt)' | grep -q hello"
CEPH_MON_PORT=$port2 "$CEPH_HERE/cluster.sh" start "$CEPH_OWN_DIR" >/dev/null ||
	exit 1
up=$SECONDS
served=0
for _ in $(seq 1 60); do
	if nfs-ls "$(nfs_url cephlate '')" >/dev/null 2>&1; then
		served=1
		break
	fi
	sleep 0.5
done
echo "    cephlate served $((SECONDS - up)) s after its cluster was up"
check "within 30 s of its cluster's start, cephlate serves by itself" \
	[ $served = 1 ]
check "a file written to it reads back" bash -c \
	"echo late >'$TEST_TMP/late.txt' &&
	 nfs-cp '$TEST_TMP/late.txt' '$(nfs_url cephlate late.txt)' &&
	 nfs-cat '$(nfs_url cephlate late.txt)' | grep -q late"
check "server exits cleanly" dsnfsd_stop
test_done
