# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the integration tests (sourced, bash).
#
#   DSNFS_BIN  where dsnfsd and the tools are (default build/bin)
#   TEST_TMP   a scratch directory; made here when unset, removed at exit
#
# dsnfsd_start [ARGS...]   starts dsnfsd on free loopback ports with the
#                          datastores ds1 and ds2 under $TEST_TMP; sets
#                          DSNFSD_PID NFS_PORT MOUNT_PORT PORTMAP_PORT
#                          ADMIN_PORT (-1 when ARGS turn it off)
#                          (DSNFS_DS1_BACKEND=cephfs: ds1 is a CephFS
#                          directory, $TEST_TMP/ds1 a symlink to it through
#                          ceph-fuse: tests/ceph/lib.sh); ds1 and ds2 get
#                          the lab's access ($TEST_TMP/lab.conf, read
#                          before any -c of ARGS), unless
#                          DSNFSD_DEFAULTS=1: then dsnfsd's own defaults
# lab_access               prints the lab's access keys (lab_conf) for a
#                          [datastore] a test's own -c file adds
# dsnfsd_stop              SIGTERM, wait, fail if it did not exit cleanly
# nfs_url DS PATH          nfs:// URL with explicit ports (libnfs)
# check DESCRIPTION CMD..  runs CMD, prints ok/FAIL, counts failures
# ctl ARGS...              dsnfsctl against the admin endpoint of dsnfsd_start
#                          (with its token: DSNFS_ADMIN_TOKEN_FILE, exported,
#                          is $TEST_TMP/state/admin.token, which dsnfsctl
#                          and dsload read)
# acurl ARGS...            curl with the admin token (exported: usable in
#                          bash -c); plain curl sends none
# post PATH BODY           POSTs JSON to it: prints the status, the body goes
#                          to $TEST_TMP/body
# status_is GOT WANT       true when equal; else says the status and body
# body_has TEXT            true when $TEST_TMP/body holds TEXT; else says it
# wait_for SECONDS CMD..   runs CMD every 0.2 s until it succeeds (true) or
#                          SECONDS pass (false)
# xfs_loop DIR             mounts a new 512 MiB XFS (reflink=1) on DIR (made)
#                          from a loop file, unmounted at exit; exits the
#                          test with "skip" where that cannot be (not root,
#                          no mkfs.xfs, no loop device)

set -u
DSNFS_BIN=${DSNFS_BIN:-build/bin}
if [ -z "${TEST_TMP:-}" ]; then
	TEST_TMP=$(mktemp -d /tmp/dsnfs-test.XXXXXX)
	trap 'test_cleanup' EXIT
fi
FAILS=0
DSNFSD_PID=""

test_cleanup() {
	if [ -n "$DSNFSD_PID" ] && kill -0 "$DSNFSD_PID" 2>/dev/null; then
		kill "$DSNFSD_PID" 2>/dev/null
		wait "$DSNFSD_PID" 2>/dev/null
	fi
	if type ceph_test_cleanup >/dev/null 2>&1; then
		ceph_test_cleanup
	fi
	rm -rf "$TEST_TMP"
}

check() {
	local what=$1
	shift
	if "$@"; then
		echo "  ok   $what"
	else
		echo "  FAIL $what"
		FAILS=$((FAILS + 1))
	fi
}

# The lab's access to ds1 and ds2: the ESXi recipe (docs/security.md,
# dsnfsd.conf(5)) for this machine's loopback clients.  The tests run as
# root and send root's calls (qemu-img, nfs-cp) to root-owned directories:
# squash = none keeps uid 0, as ESXi needs.  secure = false: the raw RPC
# clients (rawrpc.py, nfs3wire.py) bind unprivileged ports.  What the
# defaults refuse is proved by t2007-nfs3-trust.sh, which starts dsnfsd
# without this file (DSNFSD_DEFAULTS=1).
lab_conf() {
	local ds
	for ds in ds1 ds2; do
		printf '[datastore %s]\n' "$ds"
		lab_access
	done
}

# The lab's access keys, for a [datastore] a test's own config adds.
lab_access() {
	printf 'clients = 127.0.0.0/8, ::1\nsquash = none\nsecure = false\n'
}

# The same access for a dsnfsd that a test's Python half starts itself
# with -e ds1=... (t8201, t8204, t8205): it passes -c "$DSNFS_LAB_CONF".
{
	printf '[datastore ds1]\n'
	lab_access
} >"$TEST_TMP/lab-access.conf"
export DSNFS_LAB_CONF=$TEST_TMP/lab-access.conf

# Waits for the "listening" line and reads the ports from it.
dsnfsd_start() {
	local ds1=(-e ds1="$TEST_TMP/ds1")
	if [ "${DSNFS_DS1_BACKEND:-local}" = cephfs ]; then
		type ceph_ds1_setup >/dev/null 2>&1 ||
			. "$(dirname "${BASH_SOURCE[0]}")/../ceph/lib.sh"
		ceph_ds1_setup || return 1
		ds1=(-c "$TEST_TMP/ceph-ds1.conf")
	fi
	mkdir -p "$TEST_TMP/ds1" "$TEST_TMP/ds2" "$TEST_TMP/state"
	local lab=()
	if [ "${DSNFSD_DEFAULTS:-0}" != 1 ]; then
		lab_conf >"$TEST_TMP/lab.conf"
		lab=(-c "$TEST_TMP/lab.conf")
	fi
	: >"$TEST_TMP/dsnfsd.out"
	"$DSNFS_BIN/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P off -A 0 \
		-s "$TEST_TMP/state" "${lab[@]}" \
		"${ds1[@]}" -e ds2="$TEST_TMP/ds2" "$@" \
		>"$TEST_TMP/dsnfsd.out" 2>"$TEST_TMP/dsnfsd.log" &
	DSNFSD_PID=$!
	for _ in $(seq 1 100); do
		if grep -q '^dsnfsd: listening' "$TEST_TMP/dsnfsd.out"; then
			local line
			line=$(grep '^dsnfsd: listening' "$TEST_TMP/dsnfsd.out")
			NFS_PORT=$(echo "$line" | sed 's/.* nfs=\([0-9]*\).*/\1/')
			MOUNT_PORT=$(echo "$line" | sed 's/.* mount=\([0-9]*\).*/\1/')
			PORTMAP_PORT=$(echo "$line" | sed 's/.* portmap=\(-\{0,1\}[0-9]*\).*/\1/')
			ADMIN_PORT=$(echo "$line" | sed 's/.* admin=\(-\{0,1\}[0-9]*\).*/\1/')
			return 0
		fi
		if ! kill -0 "$DSNFSD_PID" 2>/dev/null; then
			echo "dsnfsd died at start:" >&2
			cat "$TEST_TMP/dsnfsd.log" >&2
			DSNFSD_PID=""
			return 1
		fi
		sleep 0.1
	done
	echo "dsnfsd did not start in 10 s" >&2
	return 1
}

dsnfsd_stop() {
	local rc=0
	[ -n "$DSNFSD_PID" ] || return 0
	kill "$DSNFSD_PID"
	wait "$DSNFSD_PID" || rc=$?
	DSNFSD_PID=""
	if [ $rc -ne 0 ]; then
		echo "dsnfsd exited with $rc; its log:" >&2
		tail -30 "$TEST_TMP/dsnfsd.log" >&2
	fi
	return $rc
}

# The token dsnfsd makes in the state dir of dsnfsd_start at its start.
export DSNFS_ADMIN_TOKEN_FILE="$TEST_TMP/state/admin.token"

ctl() { "$DSNFS_BIN/dsnfsctl" -s "127.0.0.1:$ADMIN_PORT" "$@"; }

# The header comes from a pipe, not the command line: ps shows no token.
acurl() {
	curl -H @<(printf 'Authorization: Bearer %s\n' \
		"$(cat "$DSNFS_ADMIN_TOKEN_FILE")") "$@"
}
export -f acurl

post() {
	acurl -s -o "$TEST_TMP/body" -w '%{http_code}' \
		-H 'Content-Type: application/json' -d "$2" \
		"http://127.0.0.1:$ADMIN_PORT$1"
}

status_is() {
	[ "$1" = "$2" ] || {
		echo "    got $1: $(cat "$TEST_TMP/body")"
		return 1
	}
}

body_has() {
	grep -q "$1" "$TEST_TMP/body" || {
		echo "    body: $(cat "$TEST_TMP/body")"
		return 1
	}
}

nfs_url() {
	echo "nfs://127.0.0.1/$1/$2?nfsport=$NFS_PORT&mountport=$MOUNT_PORT"
}

# throttle_start PID: PID runs 20 ms of every 220 ms (SIGSTOP, SIGCONT)
# until throttle_stop PID: a replication transfer a test must catch
# under way (a kill -9 in its middle, a schedule it outlasts) takes ten
# times as long, whatever the machine's speed.
THROTTLE_PID=""
throttle_start() {
	local pid=$1
	(while kill -STOP "$pid" 2>/dev/null; do
		sleep 0.2
		kill -CONT "$pid" 2>/dev/null
		sleep 0.02
	done) &
	THROTTLE_PID=$!
}
throttle_stop() {
	[ -n "$THROTTLE_PID" ] || return 0
	kill "$THROTTLE_PID" 2>/dev/null
	wait "$THROTTLE_PID" 2>/dev/null
	THROTTLE_PID=""
	kill -CONT "$1" 2>/dev/null
	return 0
}

wait_for() {
	local n=$(($1 * 5))
	shift
	for _ in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}

xfs_loop() {
	local dir=$1
	if [ "$(id -u)" != 0 ] || ! command -v mkfs.xfs >/dev/null; then
		echo "  skip: needs root and mkfs.xfs (xfsprogs) for a loop-mounted XFS"
		exit 0
	fi
	mkdir -p "$dir"
	truncate -s 512M "$dir.img"
	if ! mkfs.xfs -q -m reflink=1 "$dir.img" ||
		! mount -o loop "$dir.img" "$dir" 2>/dev/null; then
		echo "  skip: cannot make or loop-mount an XFS here"
		exit 0
	fi
	XFS_LOOP_DIRS="${XFS_LOOP_DIRS:-} $dir"
	trap 'xfs_loop_cleanup' EXIT
}

# Stops dsnfsd_start's server, unmounts what xfs_loop mounted, cleans up.
xfs_loop_cleanup() {
	if [ -n "$DSNFSD_PID" ]; then
		kill "$DSNFSD_PID" 2>/dev/null
		wait "$DSNFSD_PID" 2>/dev/null
		DSNFSD_PID=""
	fi
	local d
	for d in ${XFS_LOOP_DIRS:-}; do
		umount "$d" 2>/dev/null
	done
	test_cleanup
}

test_done() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS check(s) failed"
		exit 1
	fi
	exit 0
}
