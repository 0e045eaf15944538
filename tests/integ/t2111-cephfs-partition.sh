#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A gateway cut off by its network while another takes over (issue 26,
# item 4; docs/ceph.md "A gateway cut off").  In a network namespace of
# its own (netns.sh), with a cluster of its own bound to 10.99.0.1, the
# end of a veth pair whose other end, 10.99.0.2, is the only link of the
# namespace $ns where gateway A runs (intent_log = rados).  The test
# (t2111-cephfs-partition.py) first cuts the link for 10 s with no other
# gateway (JUKEBOX within the bound, then service again on the same
# session, every acknowledged write read back); then writes through A,
# cuts the link with a load in flight (rlogload.py; PARTITION_SEED
# reproduces it), starts B with A's intent_log_gateway (it fences A and
# replays its log), moves the client to B, brings the link back, and
# checks that none of A's late writes land and that A stops serving the
# datastore, fenced.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
	echo "skip: needs root and ip(8) for a network namespace"
	exit 0
fi
ns=dsnfs-t2111-$$
host_if=t2111h$$
gw_if=t2111g$$

t2111_cleanup() {
	local pid
	# The gateways the .py started (it kills them too), by PID.
	for pid in $(cat "$TEST_TMP/gw.pids" 2>/dev/null); do
		if grep -qa dsnfsd "/proc/$pid/cmdline" 2>/dev/null; then
			kill -KILL "$pid" 2>/dev/null
		fi
	done
	# The cluster lives on 10.99.0.1: the link up (a failed run may have
	# left it cut) until ceph-fuse is unmounted and the cluster stopped.
	ip link set "$host_if" up 2>/dev/null
	test_cleanup
	ip link del "$host_if" 2>/dev/null # its peer goes with it
	ip netns del "$ns" 2>/dev/null
}
trap t2111_cleanup EXIT

ip netns add "$ns" || exit 1
ip link add "$host_if" type veth peer name "$gw_if" || exit 1
ip link set "$gw_if" netns "$ns" || exit 1
ip addr add 10.99.0.1/24 dev "$host_if" || exit 1
ip link set "$host_if" up || exit 1
ip -n "$ns" addr add 10.99.0.2/24 dev "$gw_if" || exit 1
ip -n "$ns" link set "$gw_if" up || exit 1
ip -n "$ns" link set lo up || exit 1

CEPH_OWN_DIR=$TEST_TMP/ceph # ceph_test_cleanup stops it
CEPH_ADDR=10.99.0.1 "$(dirname "$0")/../ceph/cluster.sh" start \
	"$CEPH_OWN_DIR" || exit 1
CEPH_CONF=$CEPH_OWN_DIR/ceph.conf
ceph_fuse_mount || exit 1
dir=/t-$$-partition
mkdir -p "$CEPH_MNT$dir/ds1" || exit 1
CEPH_DS1_PATH=$dir/ds1
gw=t2111-$$
ceph_rlog_conf "$dir/ds1" "$gw" "clients = 127.0.0.0/8, 10.99.0.0/24
squash = none
secure = false" |
	# Every stable write into the log, none in place: a large one in
	# place settles its file's records, a checkpoint, and the test counts
	# the records B replays.
	sed '/^\[server\]/a intent_log_inplace_min_bytes = 0' \
		>"$TEST_TMP/gw.conf"
check "A cut off, B takes over: A fenced, none of its late writes land" \
	python3 "$(dirname "$0")/t2111-cephfs-partition.py" "$DSNFS_BIN/dsnfsd" \
	"$TEST_TMP" "$TEST_TMP/gw.conf" "$CEPH_CONF" "$ns" "$host_if" ds1 "$gw" \
	"${PARTITION_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
if [ "$FAILS" -gt 0 ]; then
	for g in a0 a b; do
		echo "gateway $g's log (cephfs, rlog, export lines):"
		grep -E 'cephfs|rlog|export' "$TEST_TMP/gw-$g.log" | tail -30
	done
fi
test_done
