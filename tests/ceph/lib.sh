# SPDX-License-Identifier: Apache-2.0
# Helpers for the tests that serve a datastore from CephFS (sourced by
# tests/integ/lib.sh when DSNFS_DS1_BACKEND=cephfs, or by a test itself).
#
#   DSNFS_CEPH_CONF  the ceph.conf of a running test cluster (tests/run.sh
#                    starts one for the whole suite); unset, or its mon not
#                    reachable from here (another network namespace): the
#                    test starts its own in $TEST_TMP/ceph, stopped at exit
#
# ceph_up              sets CEPH_CONF (starting a cluster when needed)
# ceph_fuse_mount      mounts the CephFS root at $TEST_TMP/cephfs (ceph-fuse,
#                      to look at the files as the tests look at a local
#                      datastore); sets CEPH_MNT
# ceph_ds1_setup       ds1 on CephFS: a directory of its own (/t-PID-NAME/ds1),
#                      $TEST_TMP/ds1 a symlink to it through the mount, and
#                      $TEST_TMP/ceph-ds1.conf the [datastore ds1] section
# ceph_ds_conf NAME CONF PATH
#                      prints a [datastore NAME] section on CephFS PATH of
#                      the cluster of ceph.conf CONF, with the lab's access
# ceph_rlog_conf PATH GW ACCESS
#                      prints a config of ds1 on CephFS PATH with the RADOS
#                      intent log of gateway GW (8 MiB, a checkpoint an hour
#                      away) and the ACCESS lines (t2110, t2111, t2113)
# ceph_test_cleanup    unmounts and stops what these helpers started
CEPH_OWN_DIR=""
CEPH_FUSE_PID=""
CEPH_MNT=""
CEPH_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# True when the mon of @conf accepts a connection from here (at once: in
# another network namespace nothing listens on its port).
ceph_reachable() {
	local port
	[ -f "$1" ] || return 1
	port=$(sed -n 's/^mon host = \[v2:127\.0\.0\.1:\([0-9]*\)\]$/\1/p' "$1")
	[ -n "$port" ] || return 1
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
}

ceph_up() {
	if [ -n "${CEPH_CONF:-}" ]; then
		return 0
	fi
	# A test in a network namespace of its own (netns.sh) cannot reach
	# the suite's cluster on the host's loopback: it starts its own.
	if [ -n "${DSNFS_CEPH_CONF:-}" ] && ceph_reachable "$DSNFS_CEPH_CONF"; then
		CEPH_CONF=$DSNFS_CEPH_CONF
		return 0
	fi
	CEPH_OWN_DIR=$TEST_TMP/ceph
	"$CEPH_HERE/cluster.sh" start "$CEPH_OWN_DIR" >&2 || return 1
	CEPH_CONF=$CEPH_OWN_DIR/ceph.conf
}

ceph_fuse_mount() {
	[ -n "$CEPH_MNT" ] && return 0
	ceph_up || return 1
	mkdir -p "$TEST_TMP/cephfs"
	ceph-fuse -f -c "$CEPH_CONF" "$TEST_TMP/cephfs" \
		>"$TEST_TMP/ceph-fuse.log" 2>&1 &
	CEPH_FUSE_PID=$!
	for _ in $(seq 1 100); do
		if grep -q "$TEST_TMP/cephfs fuse" /proc/mounts; then
			CEPH_MNT=$TEST_TMP/cephfs
			return 0
		fi
		kill -0 "$CEPH_FUSE_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "ceph-fuse did not mount:" >&2
	cat "$TEST_TMP/ceph-fuse.log" >&2
	return 1
}

ceph_ds1_setup() {
	local dir
	[ -f "$TEST_TMP/ceph-ds1.conf" ] && return 0
	ceph_fuse_mount || return 1
	dir=/t-$$-$(basename "$0" .sh)
	mkdir -p "$CEPH_MNT$dir/ds1" || return 1
	rmdir "$TEST_TMP/ds1" 2>/dev/null
	ln -sfn "$CEPH_MNT$dir/ds1" "$TEST_TMP/ds1"
	CEPH_DS1_PATH=$dir/ds1
	cat >"$TEST_TMP/ceph-ds1.conf" <<CONF
[datastore ds1]
backend = cephfs
ceph_conf = $CEPH_CONF
ceph_path = $dir/ds1
CONF
}

ceph_ds_conf() {
	cat <<CONF
[datastore $1]
backend = cephfs
ceph_conf = $2
ceph_path = $3
$(lab_access)
CONF
}

ceph_rlog_conf() {
	cat <<CONF
[server]
intent_log_mib = 8
intent_log_checkpoint_ms = 3600000

[datastore ds1]
backend = cephfs
ceph_conf = $CEPH_CONF
ceph_path = $1
intent_log = rados
intent_log_gateway = $2
$3
CONF
}

ceph_test_cleanup() {
	if [ -n "$CEPH_MNT" ]; then
		# The test's directory goes with it (a shared cluster lives on).
		[ -n "${CEPH_DS1_PATH:-}" ] &&
			rm -rf "$CEPH_MNT$(dirname "$CEPH_DS1_PATH")"
		umount "$CEPH_MNT"
		CEPH_MNT=""
	fi
	if [ -n "$CEPH_FUSE_PID" ]; then
		wait "$CEPH_FUSE_PID" 2>/dev/null
		CEPH_FUSE_PID=""
	fi
	if [ -n "$CEPH_OWN_DIR" ]; then
		"$CEPH_HERE/cluster.sh" stop "$CEPH_OWN_DIR"
		CEPH_OWN_DIR=""
	fi
}
