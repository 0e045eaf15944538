#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/replication.sh [BUILD_DIR]: dsnfs replication (issue 28 item
# 4; docs/replication.md) against rsync --inplace on the same files over
# the same loopback.  Two dsnfsd (source src, destination dsr), each on an
# XFS loop file with reflink, in a private network namespace
# (replication-lib.sh); a thin disk of BENCH_REPL_SIZE (4G) on src, every
# byte written with random data; then:
#   baseline     the first transfer of relation r1 (every block), timed
#                from the POST to its end; then rsync --inplace of the same
#                files (the source snapshot the transfer sent) to an rsync
#                daemon on 127.0.0.1 (a third XFS), timed with the sync of
#                its file system (the transfer fsyncs each file it writes)
#   incremental  BENCH_REPL_PCT (1) % of the disk rewritten over NFS in
#                BENCH_REPL_WRITE_KIB (64) KiB WRITEs at random offsets;
#                the next transfer, then rsync --inplace again (its delta
#                algorithm: both sides read the whole file)
# Each copy is compared with the source snapshot (cmp).  Every run starts
# with the files of the three XFS out of the page cache (sync, then
# posix_fadvise DONTNEED): each tool reads through its loop device, whose
# backing file the host keeps cached, so the machine's disk is not what is
# measured, and neither tool finds what the other read in the cache.  Prints the table: seconds, MiB/s of the disk's
# size, bytes sent (blocks for dsnfs, rsync's "Total bytes sent"), CPU
# seconds of the processes of each side, and rsync's time over dsnfs's.
# BENCH_REPL_PERF=1: perf record of both dsnfsd during the baseline
# (reports in $BENCH_TMP, kept); BENCH_REPL_STRACE=1: strace -c of both
# during the baseline instead (slower: every system call stops; the
# counts, not the time, are the figure).  Needs root; installs rsync (apt-get)
# when it is missing.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${1:-build}
BIN=$PWD/$BUILD/bin
SIZE=${BENCH_REPL_SIZE:-4G}
PCT=${BENCH_REPL_PCT:-1}
WKIB=${BENCH_REPL_WRITE_KIB:-64}
. perf/bench/lib.sh
. perf/bench/replication-lib.sh

[ "$(id -u)" = 0 ] || bench_die "needs root (loop mounts, namespaces)"
for b in dsnfsd dsvmdk; do
	[ -x "$BIN/$b" ] || bench_die "$BIN/$b missing: make progs"
done
# Before the private namespace: it has no network for apt-get.
[ "${REPL_IN_NS:-0}" = 1 ] || bench_install_packages rsync
repl_enter_ns "$0" "$@"

BENCH_TMP=$(mktemp -d /var/tmp/dsnfs-repl.XXXXXX)
[ "${BENCH_REPL_PERF:-0}${BENCH_REPL_STRACE:-0}" != 00 ] && BENCH_KEEP_TMP=1
trap repl_cleanup EXIT
bytes=$(numfmt --from=iec "$SIZE") || bench_die "BENCH_REPL_SIZE=$SIZE"
fs_bytes=$((bytes * 3 / 2 + 1073741824))
repl_xfs src "$fs_bytes"
repl_xfs dsr "$fs_bytes"
repl_xfs rsd "$fs_bytes"
repl_pair_start "$BIN" "schedule = none"
T=$BENCH_TMP

echo "replication bench: $SIZE thin disk, $PCT% rewritten in $WKIB KiB writes; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN/dsvmdk" create -t thin -s "$SIZE" "$T/src/disk.vmdk" >/dev/null ||
	bench_die "dsvmdk create"
t0=$(repl_now)
dd if=/dev/urandom of="$T/src/disk-flat.vmdk" bs=4M count=$((bytes / 4194304)) \
	conv=notrunc,fsync status=none || bench_die "filling the disk"
echo "filled disk-flat.vmdk with random bytes in $(printf '%.1f' "$(echo "$(repl_now) - $t0" | bc)") s"

# CPU seconds (user + system, children reaped included) of PIDs.
cpu_s() {
	local t=0 p stat
	for p in "$@"; do
		stat=$(cat "/proc/$p/stat") || continue
		stat=${stat##*) }
		t=$((t + $(echo "$stat" | awk '{ print $12 + $13 + $14 + $15 }')))
	done
	echo "scale=2; $t / $(getconf CLK_TCK)" | bc
}
# The XFS' files out of the page cache (not the loop files' blocks).
evict() {
	sync -f "$T/src" && sync -f "$T/dsr" && sync -f "$T/rsd"
	find "$T/src" "$T/dsr" "$T/rsd" -type f -print0 | python3 -c "
import os, sys
for f in sys.stdin.buffer.read().split(b'\\0'):
    if f:
        fd = os.open(f, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)"
}
mibps() { echo "scale=1; $bytes / 1048576 / $1" | bc; }

# The rsync daemon: module "bench" on its own XFS.
cat >"$T/rsyncd.conf" <<EOF
use chroot = no
[bench]
path = $T/rsd
read only = no
uid = root
gid = root
EOF
: >"$T/rsyncd.out"
rsync --daemon --no-detach --address=127.0.0.1 --port=873 \
	--config="$T/rsyncd.conf" --log-file="$T/rsyncd.log" \
	>"$T/rsyncd.out" 2>&1 &
RSYNCD_PID=$!
BENCH_PIDS+=("$RSYNCD_PID")
for _ in $(seq 1 50); do
	rsync rsync://127.0.0.1/ >/dev/null 2>&1 && break
	sleep 0.1
done
rsync rsync://127.0.0.1/ 2>/dev/null | grep -q '^bench' ||
	bench_die "the rsync daemon did not start: $(cat "$T/rsyncd.out")"

# repl_run KIND: one transfer, timed, its copy checked.
repl_run() {
	local snap c0 c1 perfpids=()
	evict
	c0=$(cpu_s "$SRC_PID" "$DST_PID")
	if [ "${BENCH_REPL_PERF:-0}" = 1 ] && [ "$1" = baseline ]; then
		for p in "$SRC_PID" "$DST_PID"; do
			perf record -g -F 499 -p "$p" -o "$T/perf-$p.data" \
				>/dev/null 2>&1 &
			perfpids+=("$!")
		done
		sleep 1
	fi
	if [ "${BENCH_REPL_STRACE:-0}" = 1 ] && [ "$1" = baseline ]; then
		for p in "$SRC_PID" "$DST_PID"; do
			strace -c -f -p "$p" -o "$T/strace-$p.txt" 2>/dev/null &
			perfpids+=("$!")
		done
		sleep 1
	fi
	repl_transfer || bench_die "$1 transfer failed"
	for p in "${perfpids[@]}"; do
		kill -INT "$p"
		wait "$p"
	done
	c1=$(cpu_s "$SRC_PID" "$DST_PID")
	snap=$(repl_rel "r['last_snapshot']")
	eval "R_${1}_s=$REPL_SECONDS"
	eval "R_${1}_sent=$(repl_rel "r['last']['sent_bytes']")"
	eval "R_${1}_cpu=$(echo "$c1 - $c0" | bc)"
	cmp "$T/src/.snapshot/$snap/disk-flat.vmdk" \
		"$T/dsr/.snapshot/$snap/disk-flat.vmdk" ||
		bench_die "$1: the replica $snap differs from the source's"
	cmp -s "$T/src/.snapshot/$snap/disk.vmdk" "$T/dsr/.snapshot/$snap/disk.vmdk" ||
		bench_die "$1: the replica's descriptor differs"
	echo "dsnfs $1: $snap in $REPL_SECONDS s, $(repl_rel "r['last']['sent_bytes']") bytes sent, the replica is the same (cmp)"
	SNAP=$snap
}

# rsync_run KIND: the source snapshot SNAP's files to the daemon.
rsync_run() {
	local t0 c0 c1 out
	evict
	c0=$(cpu_s "$RSYNCD_PID" $$)
	t0=$(repl_now)
	rsync -a --inplace --no-whole-file --stats \
		"$T/src/.snapshot/$SNAP/disk.vmdk" "$T/src/.snapshot/$SNAP/disk-flat.vmdk" \
		rsync://127.0.0.1/bench/ >"$T/rsync-$1.txt" 2>&1 ||
		bench_die "rsync $1: $(tail -3 "$T/rsync-$1.txt")"
	sync -f "$T/rsd"
	eval "S_${1}_s=$(echo "$(repl_now) - $t0" | bc)"
	c1=$(cpu_s "$RSYNCD_PID" $$)
	eval "S_${1}_cpu=$(echo "$c1 - $c0" | bc)"
	out=$(awk -F': ' '/^Total bytes sent/ { gsub(",", "", $2); print $2 }' "$T/rsync-$1.txt")
	eval "S_${1}_sent=$out"
	cmp "$T/src/.snapshot/$SNAP/disk-flat.vmdk" "$T/rsd/disk-flat.vmdk" ||
		bench_die "rsync $1: the copy differs"
	echo "rsync $1: $(eval echo "\$S_${1}_s") s, $out bytes sent ($(grep -E '^(Literal|Matched) data' "$T/rsync-$1.txt" | tr '\n' ' ')), the copy is the same (cmp)"
}

repl_run baseline
rsync_run baseline
t0=$(repl_now)
w=$(repl_nfs_rewrite disk-flat.vmdk "$PCT" "$WKIB" 28) || bench_die "rewrite"
echo "rewrote over NFS: $w in $(printf '%.1f' "$(echo "$(repl_now) - $t0" | bc)") s"
repl_run incremental
rsync_run incremental

if [ "${BENCH_REPL_STRACE:-0}" = 1 ]; then
	echo "syscall counts: $T/strace-$SRC_PID.txt (source), $T/strace-$DST_PID.txt (destination)"
fi
if [ "${BENCH_REPL_PERF:-0}" = 1 ]; then
	for f in "$T"/perf-*.data; do
		perf report -i "$f" --no-children --sort symbol --stdio 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -40 >"${f%.data}.txt"
	done
	echo "perf reports: $T/perf-$SRC_PID.txt (source), $T/perf-$DST_PID.txt (destination)"
fi

echo
echo "$SIZE thin disk (random bytes), $PCT% rewritten; loopback, XFS loop files; release build"
printf '%-12s %-6s %9s %9s %14s %8s\n' "" tool seconds "MiB/s" "bytes sent" "CPU s"
for k in baseline incremental; do
	for tool in dsnfs rsync; do
		[ $tool = dsnfs ] && p=R || p=S
		eval "s=\$${p}_${k}_s sent=\$${p}_${k}_sent cpu=\$${p}_${k}_cpu"
		printf '%-12s %-6s %9.2f %9s %14s %8s\n' "$k" "$tool" "$s" "$(mibps "$s")" "$sent" "$cpu"
	done
	eval "printf '%-12s %-6s %9.2fx  (rsync time / dsnfs time)\n' '' ratio \"\$(echo \"scale=3; \$S_${k}_s / \$R_${k}_s\" | bc)\""
done
