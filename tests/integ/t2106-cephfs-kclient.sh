#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Linux kernel NFS client (tests/kclient, a QEMU guest) on a CephFS
# datastore, through a failover: the guest writes numbered 64 KiB blocks
# with O_DIRECT and an fsync (each stable on the server before dd
# goes on) while gateway A is SIGKILLed, its session evicted (fenced),
# and gateway B takes its ports.  The guest's mount goes on by itself (a
# hard mount: no error reaches dd, no ESTALE with its old handles), every
# block it wrote reads back after a remount, and the longest wait between
# two acknowledged writes is the client's stall.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"
KCLIENT=$(cd "$(dirname "$0")/../kclient" && pwd)

"$KCLIENT/build.sh" >"$TEST_TMP/kbuild.log" 2>&1 || {
	cat "$TEST_TMP/kbuild.log"
	exit 1
}
ceph_fuse_mount || exit 1
dir=/t-$$-kc
mkdir -p "$CEPH_MNT$dir/ds1" || exit 1
ceph_ds_conf ds1 "$CEPH_CONF" "$dir/ds1" >"$TEST_TMP/gw.conf"

# gateway NAME NFS_PORT MOUNT_PORT: dsnfsd on 127.0.0.1 (ports 0: any);
# sets GW_PID, GW_NFS, GW_MOUNT, GW_SESSION.
gateway() {
	local name=$1 out=$TEST_TMP/gw-$1.out log=$TEST_TMP/gw-$1.log line
	mkdir -p -m 700 "$TEST_TMP/state-$name"
	"$DSNFS_BIN/dsnfsd" -f -l 127.0.0.1 -p "$2" -m "$3" -P off -A off \
		-s "$TEST_TMP/state-$name" -c "$TEST_TMP/gw.conf" \
		>"$out" 2>"$log" &
	GW_PID=$!
	for _ in $(seq 1 300); do
		line=$(grep '^dsnfsd: listening' "$out" 2>/dev/null) && break
		kill -0 "$GW_PID" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$line" ] || {
		cat "$log" >&2
		return 1
	}
	GW_NFS=$(echo "$line" | sed 's/.* nfs=\([0-9]*\).*/\1/')
	GW_MOUNT=$(echo "$line" | sed 's/.* mount=\([0-9]*\).*/\1/')
	GW_SESSION=$(sed -n 's/.*, session \([0-9]*\).*/\1/p' "$log" | head -1)
}

gateway a 0 0 || exit 1
a_pid=$GW_PID a_session=$GW_SESSION nfs=$GW_NFS mnt=$GW_MOUNT

# In the guest: blocks 0..N-1 written for 30 s of its clock (the failover
# falls inside), each block's md5 kept in the guest's /tmp; then a remount
# and the check.
cat >"$TEST_TMP/guest.sh" <<'GUEST'
set -e
echo "kernel client on cephfs" >hello.txt
cat hello.txt
up() { cut -d' ' -f1 /proc/uptime; }
i=0 last=$(up) worst=0
end=$(awk -v t="$last" 'BEGIN { print t + 30 }')
echo KC-WRITING
while awk -v t="$(up)" -v e="$end" 'BEGIN { exit !(t < e) }'; do
	dd if=/dev/urandom of=/tmp/blk bs=64k count=1 2>/dev/null
	dd if=/tmp/blk of=blocks bs=64k seek=$i count=1 conv=notrunc,fsync \
		oflag=direct 2>/dev/null
	md5sum </tmp/blk | cut -d' ' -f1 >>/tmp/sums
	now=$(up)
	worst=$(awk -v a="$now" -v b="$last" -v w="$worst" \
		'BEGIN { d = a - b; print (d > w ? d : w) }')
	last=$now
	i=$((i + 1))
done
echo "KC-WROTE $i blocks, longest wait between two acknowledged writes ${worst}s"
kc_remount
n=0 bad=0
while read -r sum; do
	got=$(dd if=blocks bs=64k skip=$n count=1 2>/dev/null | md5sum | cut -d' ' -f1)
	[ "$got" = "$sum" ] || bad=$((bad + 1))
	n=$((n + 1))
done </tmp/sums
echo "KC-CHECKED $n blocks, $bad differ"
cat hello.txt
[ $bad -eq 0 ]
echo GUEST-OK
GUEST

"$KCLIENT/run-guest.sh" "$nfs" "$mnt" /ds1 "@$TEST_TMP/guest.sh" \
	>"$TEST_TMP/guest.out" 2>&1 &
guest_pid=$!
for _ in $(seq 1 1200); do
	grep -q KC-WRITING "$TEST_TMP/guest.out" && break
	kill -0 "$guest_pid" 2>/dev/null || break
	sleep 0.1
done
check "the guest mounted the cephfs datastore and writes" \
	grep -q KC-WRITING "$TEST_TMP/guest.out"
sleep 3
blocks=$CEPH_MNT$dir/ds1/blocks
before=$(stat -c %s "$blocks" 2>/dev/null || echo 0)
kill -KILL "$a_pid"
wait "$a_pid" 2>/dev/null
# Fencing, as t2103: the dead gateway's session goes before B serves.
[ -n "$a_session" ] && timeout 60 ceph -c "$CEPH_CONF" tell 'mds.*' client \
	evict "id=$a_session" >/dev/null 2>&1
# What the operator does for each gateway: the first one's handle key.
install -d -m 700 "$TEST_TMP/state-b"
install -m 600 "$TEST_TMP/state-a/cephfs.key" "$TEST_TMP/state-b/cephfs.key"
gateway b "$nfs" "$mnt"
b_pid=$GW_PID
check "gateway B took A's ports" [ "$GW_NFS" = "$nfs" ]
wait "$guest_pid"
rc=$?
tail -n 12 "$TEST_TMP/guest.out"
check "guest commands succeed through the failover (rc=$rc)" [ $rc -eq 0 ]
after=$(stat -c %s "$blocks" 2>/dev/null || echo 0)
echo "    $((before / 65536)) blocks before the SIGKILL, $((after / 65536)) at the end"
check "the guest wrote blocks on both gateways" \
	bash -c "[ $before -gt 0 ] && [ $after -gt $before ]"
check "every acknowledged block reads back after a remount" \
	grep -q "^KC-CHECKED [1-9][0-9]* blocks, 0 differ" "$TEST_TMP/guest.out"
check "gateway B answered writes of the old mount" \
	grep -q GUEST-OK "$TEST_TMP/guest.out"
stall=$(sed -n 's/.*longest wait between two acknowledged writes \(.*\)s$/\1/p' \
	"$TEST_TMP/guest.out")
echo "    kernel client failover: stalled ${stall:-?} s (longest gap between two acknowledged writes)"
kill -TERM "$b_pid" 2>/dev/null
check "gateway B exits cleanly" wait "$b_pid"
test_done
