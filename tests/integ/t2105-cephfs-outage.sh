#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cephfs datastore whose cluster is down, then back, with no restart of
# dsnfsd.  In a network namespace of its own, with a cluster of its own
# (it kills every daemon of it):
#  1. dsnfsd starts while the cluster is down: the error names the
#     datastore and the cluster, the local ds2 serves, MNT of cephds is
#     refused and says why; the cluster starts: within 30 s cephds serves
#     by itself (the recovery thread);
#  2. under a verified FILE_SYNC write load (t2105-cephfs-outage.py) every
#     daemon is SIGKILLed and started again from its data: calls answer
#     NFS3ERR_JUKEBOX within the bound, ds2 answers all along, the datastore
#     recovers by itself, every acknowledged write reads back;
#  3. the cluster evicts the gateway's session: it mounts anew by itself,
#     old handles work, acknowledged writes read back, the verifier changed.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

cluster_sh=$(cd "$(dirname "$0")/../ceph" && pwd)/cluster.sh
CEPH_OWN_DIR=$TEST_TMP/ceph # ceph_test_cleanup stops what is left of it
mkdir -p "$CEPH_OWN_DIR"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# What the cluster will be: its mon's address (cluster.sh start writes the
# whole file on that port later).
cat >"$CEPH_OWN_DIR/ceph.conf" <<CONF
[global]
mon host = [v2:127.0.0.1:$port]
auth cluster required = none
auth service required = none
auth client required = none
log file = $TEST_TMP/client.log
CONF
ceph_ds_conf cephds "$CEPH_OWN_DIR/ceph.conf" "/" >"$TEST_TMP/cephds.conf"

# dsnfsd_start waits 10 s for the listening line: the mount timeout is as
# long, so wait here for the rest.
dsnfsd_start -c "$TEST_TMP/cephds.conf" ||
	for _ in $(seq 1 100); do
		grep -q '^dsnfsd: listening' "$TEST_TMP/dsnfsd.out" && break
		sleep 0.1
	done
line=$(grep '^dsnfsd: listening' "$TEST_TMP/dsnfsd.out") || {
	echo "dsnfsd did not start" >&2
	cat "$TEST_TMP/dsnfsd.log" >&2
	exit 1
}
NFS_PORT=$(echo "$line" | sed 's/.* nfs=\([0-9]*\).*/\1/')
MOUNT_PORT=$(echo "$line" | sed 's/.* mount=\([0-9]*\).*/\1/')
ADMIN_PORT=$(echo "$line" | sed 's/.* admin=\(-\{0,1\}[0-9]*\).*/\1/')

echo "cluster down at start:"
check "the error names the datastore and the cluster" \
	grep -q "error: export: datastore cephds: cephfs cluster $CEPH_OWN_DIR/ceph.conf.*127.0.0.1:$port.*retried every" \
	"$TEST_TMP/dsnfsd.log"
echo hello >"$TEST_TMP/ds2/hello.txt"
check "the local datastore ds2 serves" bash -c \
	"nfs-cat '$(nfs_url ds2 hello.txt)' | grep -q hello"
check "cephds cannot be mounted" bash -c \
	"! nfs-ls '$(nfs_url cephds '')' >/dev/null 2>&1"
check "the refusal says why" \
	grep -q "mount: cephds: its cluster has not answered since start" \
	"$TEST_TMP/dsnfsd.log"
metric_up() {
	acurl -s "http://127.0.0.1:$ADMIN_PORT/metrics" |
		grep "^dsnfs_volume_up{volume=\"$1\"" | awk '{print $2}'
}
check "dsnfs_volume_up says cephds is down, ds2 up" \
	bash -c "[ '$(metric_up cephds)' = 0 ] && [ '$(metric_up ds2)' = 1 ]"

CEPH_MON_PORT=$port "$cluster_sh" start "$CEPH_OWN_DIR" || exit 1
back=$(date +%s.%N)
served=""
for _ in $(seq 1 600); do
	if nfs-ls "$(nfs_url cephds '')" >/dev/null 2>&1; then
		served=$(date +%s.%N)
		break
	fi
	sleep 0.1
done
took=$(python3 -c "print('%.2f' % ($served - $back))" 2>/dev/null)
echo "    cephds serves ${took:-never} s after the cluster came up"
check "cephds serves by itself within 30 s of the cluster" \
	python3 -c "import sys; sys.exit(not ('$served' and $served - $back <= 30))"
check "the log says it serves again" \
	grep -q "export: cephds: cephfs cluster .* answers after .* ms: serving" \
	"$TEST_TMP/dsnfsd.log"
check "dsnfs_volume_up says cephds is up" bash -c "[ \"\$(acurl -s http://127.0.0.1:$ADMIN_PORT/metrics | grep '^dsnfs_volume_up{volume=\"cephds\"' | awk '{print \$2}')\" = 1 ]"

echo "cluster lost mid-run:"
check "JUKEBOX during the outage, recovery, eviction, nothing lost" \
	python3 "$(dirname "$0")/t2105-cephfs-outage.py" "$NFS_PORT" \
	"$MOUNT_PORT" "$cluster_sh" "$CEPH_OWN_DIR" "$TEST_TMP/dsnfsd.log"
check "the log says the eviction and the new mount" bash -c \
	"grep -q 'cephfs: cephds: cluster .* evicted this gateway' '$TEST_TMP/dsnfsd.log' &&
	 grep -q 'export: cephds: mounted anew after an eviction' '$TEST_TMP/dsnfsd.log'"
check "the log says the cluster went and came back" bash -c \
	"grep -q 'cephfs: cephds: cluster .* does not answer' '$TEST_TMP/dsnfsd.log' &&
	 grep -q 'cephfs: cephds: cluster .* answers again after' '$TEST_TMP/dsnfsd.log'"
# Its session with the restarted MDS is reconnected, never stale: the
# outage is not taken for an eviction without a blocklist.
check "nothing taken for an eviction without a blocklist" bash -c \
	"! grep -q 'without blocklisting it' '$TEST_TMP/dsnfsd.log'"
check "server exits cleanly" dsnfsd_stop
if [ "$FAILS" -gt 0 ]; then
	echo "dsnfsd's log (cephfs and export lines):"
	grep -E 'cephfs|export' "$TEST_TMP/dsnfsd.log" | tail -40
fi
test_done
