#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/ilog.sh [BUILD_DIR]: stable writes with the intent log on,
# side by side in one run (docs/bench.md, "Intent log"), against
#   off       dsnfsd as before: pwrite + fsync per stable WRITE (group
#             commit per file)
#   ilog      dsnfsd with [server] intent_log (one log flush for every
#             WRITE in flight, files fsynced at checkpoints) and its
#             defaults (WRITEs of 32 KiB and up, and a file's sequential
#             stream from 16 KiB, fdatasynced in their file instead:
#             docs/durability.md), plus BENCH_ILOG_KEYS
#   ilog-all  the same with intent_log_inplace_min_bytes and
#             intent_log_inplace_sequential_min_bytes = 0 whatever
#             BENCH_ILOG_KEYS say: every stable WRITE's data copied into
#             the log (the default before those keys)
#   ilog-buffered  the same with intent_log_inplace_direct = no: in-place
#             writes over written blocks pwrite + fdatasync (group
#             commit per file) instead of O_DIRECT + RWF_DSYNC
#   ilog-noring  the same with intent_log_inplace_uring = no: those
#             direct writes each on a work thread (pwritev2), not
#             submitted through the log's io_uring (merged per file)
#   ilog-mem  the same with the log on tmpfs (/dev/shm): NOT durable; a
#             model of a log device with no latency (NVRAM), showing
#             what the log costs in CPU apart from its device
#   unstable  dsnfsd, the same load sent UNSTABLE with a COMMIT every 64
#             writes per VMDK: the ceiling the log is measured against
#   ganesha   nfs-ganesha (FSAL VFS) as perf/bench/run.sh starts it
#   ganesha-unstable  the same nfs-ganesha, the load sent UNSTABLE with
#             a COMMIT every 64 writes per VMDK: the peer of `unstable`
# dsload emulates F ESXi hosts x 1 datastore (F flows), one VMDK each,
# BENCH_ILOG_IODEPTH writes in flight per VMDK, FILE_SYNC unless unstable.
# Each run: a fresh server (ganesha: one for the whole run), a prefill,
# then perf stat on the server's syscalls over ramp + measured window:
#   flush/wr  flushes per stable write: fsync + fdatasync + log batch
#             writes (pwrite64 on the log's descriptor) + direct writes
#             (pwritev2 with RWF_DSYNC, and writevs submitted through
#             io_uring, each with RWF_DSYNC), over the data writes
#             (pwrite64 + pwritev + pwritev2 not on the log; when the
#             writes go through io_uring and no syscall names them, the
#             client's writes over ramp + window)
#   sys/wr    all the server's syscalls over the data writes
#   CPU us/wr the server's CPU time over the data writes
# Then per cell the medians and the ratios.  Needs root (namespaces, perf).
#
# Environment (defaults in brackets):
#   BENCH_SECONDS       [5]   measured seconds per run
#   BENCH_REPS          [2]   runs per mode and cell, modes alternated
#   BENCH_ILOG_CELLS    ["rand:8k:4 rand:8k:16 seq:64k:4 seq:64k:16"]
#                             pattern:block size:flows
#   BENCH_ILOG_MODES    ["ilog off unstable ganesha"] (and ilog-mem,
#                             ilog-all, ilog-buffered, ilog-noring,
#                             ganesha-unstable)
#   BENCH_ILOG_IODEPTH  [4]   writes in flight per VMDK
#   BENCH_ILOG_WORK_THREADS [16] dsnfsd's [server] work_threads (every
#                             mode): a stable WRITE holds one while it
#                             waits, so they bound what one flush covers
#   BENCH_ILOG_KEYS     []    more [server] keys of the ilog modes, e.g.
#                             "intent_log_mib=1024 intent_log_checkpoint_ms=0"
#   BENCH_ILOG_DIR      [BENCH_DIR]  where the log file goes (another
#                             device models a separate log device)
#   BENCH_DIR           [/tmp]
set -u
cd "$(dirname "$0")/../.." || exit 1
. perf/bench/lib.sh

BUILD=${1:-build}
SECONDS_RUN=${BENCH_SECONDS:-5}
REPS=${BENCH_REPS:-2}
CELLS=${BENCH_ILOG_CELLS:-rand:8k:4 rand:8k:16 seq:64k:4 seq:64k:16}
MODES=${BENCH_ILOG_MODES:-ilog off unstable ganesha}
IODEPTH=${BENCH_ILOG_IODEPTH:-4}
THREADS=${BENCH_ILOG_WORK_THREADS:-16}
ILOG_KEYS=${BENCH_ILOG_KEYS:-}
DSNFSD=$BUILD/bin/dsnfsd
DSLOAD=$BUILD/bin/dsload
EVENTS=syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync
EVENTS=$EVENTS,syscalls:sys_enter_pwrite64,syscalls:sys_enter_pwritev
# pwritev2: the in-place O_DIRECT writes, each with RWF_DSYNC (its own flush)
EVENTS=$EVENTS,syscalls:sys_enter_pwritev2
EVENTS=$EVENTS,raw_syscalls:sys_enter

case " $MODES " in
*" ganesha "* | *" ganesha-unstable "*) WITH_GANESHA=1 ;;
*) WITH_GANESHA=0 ;;
esac
if [ "${BENCH_IN_MOUNT_NS:-0}" != 1 ]; then
	[ "$(id -u)" = 0 ] || bench_die "needs root (namespaces, perf)"
	[ -x "$DSNFSD" ] && [ -x "$DSLOAD" ] ||
		bench_die "no $DSNFSD or $DSLOAD: make BUILD=$BUILD"
	command -v perf >/dev/null || bench_install_packages linux-perf
	[ $WITH_GANESHA = 0 ] ||
		bench_install_packages nfs-ganesha nfs-ganesha-vfs rpcbind
	bench_enter_mount_ns "$0" "$@"
fi
bench_private_run
BENCH_TMP=$(mktemp -d "${BENCH_DIR:-/tmp}/dsnfs-ilog.XXXXXX") ||
	bench_die "cannot make a scratch directory"
LOG_DIR=${BENCH_ILOG_DIR:-$BENCH_TMP}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

bench_ns_new NS_D
if [ $WITH_GANESHA = 1 ]; then
	bench_ns_new NS_G
	mkdir -p "$BENCH_TMP/g-export"
	bench_start_ganesha "$NS_G" "$BENCH_TMP/g-export"
fi

# The descriptor of @2 (a path) in process @1, or 65535 (none: a
# filter that matches nothing).
fd_of() {
	local f
	for f in /proc/"$1"/fd/*; do
		if [ "$(readlink "$f")" = "$2" ]; then
			basename "$f"
			return
		fi
	done
	echo 65535
}

# ilog_run MODE PATTERN BS FLOWS: one server run, one dsload run; a row.
ilog_run() {
	local mode=$1 pat=$2 bs=$3 flows=$4
	local conf=$BENCH_TMP/dsnfsd.conf json=$BENCH_TMP/dsload.json
	local ns=$NS_D spid lpid ppid logfd=65535 t0 t1 rnd=100 stable=file_sync
	local logpath
	rm -f "$json"
	[ "$pat" = seq ] && rnd=0
	case $mode in
	*unstable) stable=unstable ;;
	esac
	if [ "${mode%-unstable}" = ganesha ]; then
		ns=$NS_G
		spid=$GANESHA_PID
	else
		rm -rf "$BENCH_TMP/ds" "$BENCH_TMP/dsnfsd-state" "$LOG_DIR/intent.log"
		mkdir -p "$BENCH_TMP/ds"
		printf '[server]\nwork_threads = %s\n' "$THREADS" >"$conf"
		logpath=$LOG_DIR/intent.log
		[ "$mode" = ilog-mem ] && logpath=/dev/shm/dsnfs-bench-intent.log
		rm -f "$logpath"
		case $mode in
		ilog*)
			echo "intent_log = $logpath" >>"$conf"
			for kv in $ILOG_KEYS; do
				echo "${kv%%=*} = ${kv#*=}" >>"$conf"
			done
			[ "$mode" = ilog-all ] &&
				printf '%s = 0\n' intent_log_inplace_min_bytes \
					intent_log_inplace_sequential_min_bytes >>"$conf"
			[ "$mode" = ilog-buffered ] &&
				echo "intent_log_inplace_direct = no" >>"$conf"
			[ "$mode" = ilog-noring ] &&
				echo "intent_log_inplace_uring = no" >>"$conf"
			;;
		esac
		bench_start_dsnfsd_as dsnfsd "$NS_D" "$BENCH_TMP/ds" "$conf" \
			"$DSNFSD"
		spid=$BENCH_BG_PID
		case $mode in
		ilog*) logfd=$(fd_of "$spid" "$logpath") ;;
		esac
	fi
	bench_bg dsload "$ns" "$DSLOAD" run -D bench -H "$flows" \
		--vmdk-size 16m --prefill --pause-between-phases --bs "$bs" \
		--read-pct 0 --random-pct "$rnd" --stable "$stable" \
		--iodepth "$IODEPTH" --ramp 1 --runtime "$SECONDS_RUN" --quiet \
		--json "$json"
	lpid=$BENCH_BG_PID
	bench_wait_line "$BENCH_TMP/dsload.log" 'paused before' "$lpid" ||
		bench_die "dsload: $(tail -3 "$BENCH_TMP/dsload.log")"
	# IORING_OP_WRITEV is 2: the ring's direct writes (store/dring.c).
	perf stat -x, -e syscalls:sys_enter_pwrite64 --filter "fd == $logfd" \
		-e io_uring:io_uring_submit_req --filter "opcode == 2" \
		-e "$EVENTS" -p "$spid" -o "$BENCH_TMP/perf.txt" &
	ppid=$!
	BENCH_PIDS+=("$ppid")
	sleep 0.5
	kill -0 "$ppid" 2>/dev/null || bench_die "perf stat did not start"
	t0=$(bench_cpu_ticks "$spid")
	kill -USR1 "$lpid"
	wait "$lpid" || bench_die "dsload failed: $(tail -3 \
		"$BENCH_TMP/dsload.log")"
	bench_forget "$lpid"
	kill -INT "$ppid"
	wait "$ppid"
	bench_forget "$ppid"
	t1=$(bench_cpu_ticks "$spid")
	[ "${mode%-unstable}" = ganesha ] || bench_stop_pid "$spid"
	rm -f /dev/shm/dsnfs-bench-intent.log
	python3 - "$json" "$BENCH_TMP/perf.txt" "$mode" "$pat:$bs:$flows" \
		"$((t1 - t0))" "$(getconf CLK_TCK)" "$TSV" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["phases"][-1]
tot = [r for r in p["rows"] if r["level"] == "total"][0]
n, first = {}, True
for l in open(sys.argv[2]):
    f = l.strip().split(",")
    if len(f) > 2 and ":" in f[2]:
        v = int(f[0]) if f[0].isdigit() else 0
        if f[2] == "syscalls:sys_enter_pwrite64" and first:
            n["logpw"], first = v, False
        else:
            n[f[2].split(":")[1].replace("sys_enter_", "")] = v
logpw = n.get("logpw", 0)
direct = n.get("pwritev2", 0) + n.get("io_uring_submit_req", 0)
# The client's writes over ramp (1 s) + window, for writes no syscall names.
client = tot["write"]["ios"] * (1 + p["window_s"]) / p["window_s"]
data = max(n.get("pwrite64", 0) + n.get("pwritev", 0) +
           n.get("pwritev2", 0) - logpw, client, 1)
flushes = n.get("fsync", 0) + n.get("fdatasync", 0) + logpw + direct
row = (sys.argv[3], sys.argv[4], tot["write"]["ios"] / p["window_s"],
       tot["write"]["bytes"] / p["window_s"] / 2**20, tot["lat"]["p99_ms"],
       flushes / data, n.get("sys_enter", 0) / data,
       int(sys.argv[5]) * 1e6 / int(sys.argv[6]) / data)
print("%-16s %-14s %9.0f %8.1f %8.2f %8.3f %7.1f %9.1f" % row)
with open(sys.argv[7], "a") as f:
    f.write("\t".join(str(x) for x in row) + "\n")
PY
}

TSV=$BENCH_TMP/runs.tsv
: >"$TSV"
echo "== stable writes: intent log vs fsync vs UNSTABLE vs ganesha;" \
	"${SECONDS_RUN}s x ${REPS} per cell, iodepth ${IODEPTH} per VMDK," \
	"dsnfsd work_threads ${THREADS}," \
	"$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"data on $(df --output=fstype "$BENCH_TMP" | tail -1)," \
	"log on $(df --output=fstype "$LOG_DIR" | tail -1)"
echo "mode             cell                IOPS    MiB/s  p99(ms) flush/wr  sys/wr" \
	"CPU us/wr"
for cell in $CELLS; do
	IFS=: read -r pat bs flows <<<"$cell"
	for _ in $(seq 1 "$REPS"); do
		for mode in $MODES; do
			ilog_run "$mode" "$pat" "$bs" "$flows"
		done
	done
done
python3 - "$TSV" <<'PY'
import statistics, sys
runs = {}
for l in open(sys.argv[1]):
    f = l.rstrip("\n").split("\t")
    runs.setdefault(f[1], {}).setdefault(f[0], []).append(
        [float(x) for x in f[2:]])
print("\nmedians (IOPS, flushes per stable write); ratios of IOPS")
print("%-14s %12s %12s %12s %12s %12s %12s %12s %12s %12s  %8s %8s %8s %8s %8s %8s %8s %8s %8s" % (
    "cell", "ilog", "ilog-buf", "ilog-noring", "ilog-all", "ilog-mem", "off",
    "unstable", "ganesha", "gan-uns", "ilog/gan", "buf/gan", "all/gan",
    "ilog/buf", "ilog/nori", "ilog/off", "off/gan", "ilog/uns", "uns/guns"))
for cell, m in runs.items():
    med = {k: [statistics.median(c) for c in zip(*v)] for k, v in m.items()}
    iops = {k: v[0] for k, v in med.items()}
    fl = {k: v[3] for k, v in med.items()}
    def col(k):
        return "%6.0f/%-5.3f" % (iops[k], fl[k]) if k in iops else \
            "%12s" % "-"
    def ratio(a, b):
        return "%8.2f" % (iops[a] / iops[b]) if a in iops and b in iops \
            and iops[b] else "%8s" % "-"
    print("%-14s %s %s %s %s %s %s %s %s %s  %s %s %s %s %s %s %s %s %s" % (
        cell, col("ilog"), col("ilog-buffered"), col("ilog-noring"),
        col("ilog-all"), col("ilog-mem"), col("off"), col("unstable"),
        col("ganesha"), col("ganesha-unstable"), ratio("ilog", "ganesha"),
        ratio("ilog-buffered", "ganesha"), ratio("ilog-all", "ganesha"),
        ratio("ilog", "ilog-buffered"), ratio("ilog", "ilog-noring"),
        ratio("ilog", "off"),
        ratio("off", "ganesha"), ratio("ilog", "unstable"),
        ratio("unstable", "ganesha-unstable")))
PY
