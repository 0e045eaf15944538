#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/profile.sh [BUILD_DIR]: where dsnfsd spends its time under the
# two loads the fast path is judged by, driven by qemu-img bench over
# nfs:// in a loopback-only network namespace (as run.sh does):
#   seq-read    64 KiB sequential reads
#   rand-write  8 KiB scattered writes (run.sh's stepping trick)
# For each load it records, into BENCH_OUT/profile-STAMP/:
#   LOAD.perf.txt      perf record -e cpu-clock (software clock sampling:
#                      this VM has no hardware counters), flat by symbol
#                      (user and kernel) and by shared object
#   LOAD.syscalls.txt  perf stat of every syscall tracepoint, per NFS op
#   LOAD.callgrind.txt valgrind --tool=callgrind on a shorter run, the
#                      user-space instruction profile, inclusive and self
# Environment: BENCH_LOADS ["seq-read rand-write"; also seq-write and
# rand-read], BENCH_DEPTH [16], BENCH_SECONDS [5], BENCH_FILE_MIB [1024],
# BENCH_DIR [/tmp], BENCH_OUT [BUILD_DIR/bench], BENCH_CALLGRIND [1].
set -u
cd "$(dirname "$0")/../.." || exit 1
. perf/bench/lib.sh

BUILD=${1:-build}
DEPTH=${BENCH_DEPTH:-16}
SECONDS_RUN=${BENCH_SECONDS:-5}
FILE_MIB=${BENCH_FILE_MIB:-1024}
OUT=${BENCH_OUT:-$BUILD/bench}
DSNFSD=$BUILD/bin/dsnfsd
URL=nfs://127.0.0.1/bench/disk.raw

if [ "${BENCH_IN_MOUNT_NS:-0}" != 1 ]; then
	[ "$(id -u)" = 0 ] || bench_die "needs root (namespaces, perf)"
	[ -x "$DSNFSD" ] || bench_die "no $DSNFSD: make BUILD=$BUILD $DSNFSD"
	bench_install_packages qemu-utils qemu-block-extra valgrind linux-perf
	mkdir -p "$OUT"
	bench_enter_mount_ns "$0" "$@"
fi

bench_private_run
BENCH_TMP=$(mktemp -d "${BENCH_DIR:-/tmp}/dsnfs-prof.XXXXXX") ||
	bench_die "cannot make a scratch directory"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM
DIR=$OUT/profile-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$DIR"

mkdir -p "$BENCH_TMP/export"
dd if=/dev/urandom of="$BENCH_TMP/export/disk.raw" bs=1M count="$FILE_MIB" \
	status=none || bench_die "cannot write the test file"
bench_ns_new NS
SCATTER=$((FILE_MIB * 128 * 618 / 1000 | 1))

# load_args LOAD COUNT: the qemu-img bench arguments of LOAD.
load_args() {
	case $1 in
	seq-read) echo "-f raw -c $2 -d $DEPTH -s 65536" ;;
	seq-write) echo "-f raw -c $2 -d $DEPTH -s 65536 -w --pattern=165" ;;
	rand-read) echo "-f raw -c $2 -d $DEPTH -s 8192 -S $((SCATTER * 8192))" ;;
	rand-write)
		echo "-f raw -c $2 -d $DEPTH -s 8192 -S $((SCATTER * 8192))" \
			"-w --pattern=165"
		;;
	esac
}

# qemu_bench LOAD COUNT: prints qemu-img's seconds.
qemu_bench() {
	# shellcheck disable=SC2046
	bench_in_ns "$NS" qemu-img bench $(load_args "$1" "$2") "$URL" |
		sed -n 's/^Run completed in \([0-9.]*\) seconds.*/\1/p'
}

# measure LOAD COUNT TOOL ARGS...: runs TOOL ARGS... -p DSNFSD_PID around
# one qemu-img run and stops it with SIGINT; sets SECS and TICKS.
measure() {
	local load=$1 count=$2 tool t0 t1
	shift 2
	"$@" -p "$DSNFSD_PID" 2>/dev/null &
	tool=$!
	BENCH_PIDS+=("$tool")
	sleep 0.5
	t0=$(bench_cpu_ticks "$DSNFSD_PID")
	SECS=$(qemu_bench "$load" "$count")
	t1=$(bench_cpu_ticks "$DSNFSD_PID")
	TICKS=$((t1 - t0))
	kill -INT "$tool"
	wait "$tool"
	bench_forget "$tool"
}

# The data rows of callgrind_annotate, one per function: it lists a
# function once per spelling of its file name.
callgrind_rows() {
	grep -E '^ *[0-9,]+ \( *[0-9.]+%\) .*\[.*\]$' |
		sed -E 's|^( *[0-9,]+ \( *[0-9.]+%\)) +[^ ]*:([^ :]+) \[.*/([^/]+)\]$|\1 \2 \3|' |
		awk '!seen[$3 $4]++'
}

perf_report() {
	perf report -i "$1" --stdio --no-children -g none "${@:2}" 2>/dev/null |
		grep -v '^#' | grep -v '^$'
}

for load in ${BENCH_LOADS:-seq-read rand-write}; do
	echo "profile: $load, perf" >&2
	bench_start_dsnfsd "$NS" "$BENCH_TMP/export" "$DSNFSD"
	secs=$(qemu_bench "$load" 5000)
	count=$(awk -v s="$secs" -v t="$SECONDS_RUN" \
		'BEGIN { print int(5000 / s * t) }')
	measure "$load" "$count" perf record -q -e cpu-clock -F 1999 -g \
		-o "$DIR/$load.perf.data"
	{
		echo "# $load: qemu-img bench $(load_args "$load" "$count") $URL"
		echo "# perf record -e cpu-clock -F 1999 -g -p DSNFSD_PID:" \
			"$count ops in $SECS s, $(awk -v c="$count" -v s="$SECS" \
			'BEGIN { printf "%.0f", c / s }') IOPS; dsnfsd CPU" \
			"$((TICKS * 10)) ms, $(awk -v c="$count" -v t="$TICKS" \
				'BEGIN { printf "%.1f", t * 10000 / c }') us/op"
		echo "## by shared object (self)"
		perf_report "$DIR/$load.perf.data" --sort dso | head -12
		echo "## by symbol (self)"
		perf_report "$DIR/$load.perf.data" --sort dso,sym | head -45
		echo "## kernel paths, inclusive"
		perf report -i "$DIR/$load.perf.data" --stdio --children \
			--sort sym -g none 2>/dev/null | grep -v '^#' |
			grep -E '\[k\] (__x64_sys_|do_writev|tcp_sendmsg|tcp_recvmsg|vfs_|filemap_read|ext4_|copy_page|__schedule|do_epoll_wait)' |
			head -30
	} >"$DIR/$load.perf.txt"

	measure "$load" "$count" perf stat -x, -e 'syscalls:sys_enter_*' \
		-o "$DIR/$load.syscalls.csv"
	{
		echo "# $load: syscalls of dsnfsd (perf stat of the syscall" \
			"tracepoints), $count ops"
		awk -F, -v c="$count" '$1 ~ /^[0-9]+$/ && $1 > 0 {
			sub("syscalls:sys_enter_", "", $3)
			printf "%-24s %12d %8.3f per op\n", $3, $1, $1 / c }' \
			"$DIR/$load.syscalls.csv" | sort -k2 -n -r
	} >"$DIR/$load.syscalls.txt"
	bench_stop_pid "$DSNFSD_PID"

	if [ "${BENCH_CALLGRIND:-1}" = 1 ]; then
		echo "profile: $load, callgrind" >&2
		bench_start_dsnfsd "$NS" "$BENCH_TMP/export" \
			valgrind --tool=callgrind -q \
			--callgrind-out-file="$DIR/$load.callgrind.out" \
			"$DSNFSD"
		qemu_bench "$load" 200 >/dev/null
		secs=$(qemu_bench "$load" 20000)
		bench_stop_pid "$DSNFSD_PID"
		{
			echo "# $load under callgrind: 20000 ops in $secs s" \
				"(Ir = instructions executed)"
			echo "## inclusive"
			callgrind_annotate --auto=no --inclusive=yes \
				"$DIR/$load.callgrind.out" 2>/dev/null |
				callgrind_rows | head -40
			echo "## self"
			callgrind_annotate --auto=no "$DIR/$load.callgrind.out" \
				2>/dev/null | callgrind_rows | head -30
		} >"$DIR/$load.callgrind.txt"
	fi
done
echo "profile: reports in $DIR" >&2
for f in "$DIR"/*.txt; do
	echo "==== $f"
	head -80 "$f"
done
