#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/syncgroup.sh [BUILD_DIR]: group commit on against off, side by
# side in one run (docs/bench.md, "Group commit").  One emulated ESXi host, one VMDK,
# random FILE_SYNC writes with BENCH_SYNC_IODEPTH in flight: dsnfsd with
# [server] group_commit = true and = false, alternated, at each
# work_threads value of BENCH_SYNC_THREADS.  For each run it prints IOPS,
# p99 latency, syncs per write (fsync(2) + fdatasync(2) over pwrite(2)
# calls of the server, counted by perf stat on the syscall tracepoints
# while the measured phase and its ramp run) and the server's CPU time per
# write over the same span; then, per cell, the medians and on / off.
# Needs root (perf tracepoints).
#
# Environment (defaults in brackets):
#   BENCH_SECONDS        [5]        measured seconds per run
#   BENCH_REPS           [2]        runs per cell, on and off alternated
#   BENCH_SYNC_IODEPTH   [1 4 16]   WRITEs in flight on the VMDK
#   BENCH_SYNC_THREADS   [4 16]     [server] work_threads
#   BENCH_SYNC_BS        [8k]       write size
#   BENCH_DIR            [/tmp]     where the scratch directory is made
set -u
cd "$(dirname "$0")/../.." || exit 1
. perf/bench/lib.sh

BUILD=${1:-build}
SECONDS_RUN=${BENCH_SECONDS:-5}
REPS=${BENCH_REPS:-2}
DEPTHS=${BENCH_SYNC_IODEPTH:-1 4 16}
THREADS=${BENCH_SYNC_THREADS:-4 16}
BS=${BENCH_SYNC_BS:-8k}
DSNFSD=$BUILD/bin/dsnfsd
DSLOAD=$BUILD/bin/dsload
EVENTS=syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync
EVENTS=$EVENTS,syscalls:sys_enter_pwrite64

[ "$(id -u)" = 0 ] || bench_die "needs root (perf tracepoints)"
[ -x "$DSNFSD" ] && [ -x "$DSLOAD" ] ||
	bench_die "no $DSNFSD or $DSLOAD: make BUILD=$BUILD"
command -v perf >/dev/null || bench_install_packages linux-perf
BENCH_TMP=$(mktemp -d "${BENCH_DIR:-/tmp}/dsnfs-sync.XXXXXX") ||
	bench_die "cannot make a scratch directory"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM
# bench_bg runs in a network namespace: ours.
SELF_NS=$$

# sync_run MODE THREADS DEPTH: one server, one dsload run; prints a row.
sync_run() {
	local mode=$1 threads=$2 depth=$3
	local conf=$BENCH_TMP/dsnfsd.conf json=$BENCH_TMP/dsload.json
	local spid lpid ppid line nfs mnt t0 t1
	rm -rf "$BENCH_TMP/ds" "$json"
	mkdir -p "$BENCH_TMP/ds" "$BENCH_TMP/state"
	printf '[server]\nwork_threads = %s\ngroup_commit = %s\n' \
		"$threads" "$mode" >"$conf"
	printf '[datastore bench]\npath = %s\n' "$BENCH_TMP/ds" >>"$conf"
	# dsload binds unprivileged ports, writes as uid 0 (bench_access).
	lab_access bench >>"$conf"
	bench_bg dsnfsd $SELF_NS "$DSNFSD" -f -c "$conf" -l 127.0.0.1 -p 0 \
		-m 0 -P off -A off -s "$BENCH_TMP/state"
	spid=$BENCH_BG_PID
	bench_wait_line "$BENCH_TMP/dsnfsd.out" '^dsnfsd: listening' "$spid" ||
		bench_die "dsnfsd did not start: $(cat "$BENCH_TMP/dsnfsd.log")"
	line=$(grep '^dsnfsd: listening' "$BENCH_TMP/dsnfsd.out")
	nfs=$(echo "$line" | sed 's/.* nfs=\([0-9]*\).*/\1/')
	mnt=$(echo "$line" | sed 's/.* mount=\([0-9]*\).*/\1/')
	bench_bg dsload $SELF_NS "$DSLOAD" run --nfs-port "$nfs" \
		--mount-port "$mnt" -H 1 -D bench --vmdk-size 64m --prefill \
		--pause-between-phases --bs "$BS" --read-pct 0 \
		--random-pct 100 --stable file_sync --iodepth "$depth" \
		--ramp 1 --runtime "$SECONDS_RUN" --quiet --json "$json"
	lpid=$BENCH_BG_PID
	bench_wait_line "$BENCH_TMP/dsload.log" 'paused before' "$lpid" ||
		bench_die "dsload: $(tail -3 "$BENCH_TMP/dsload.log")"
	perf stat -x, -e "$EVENTS" -p "$spid" -o "$BENCH_TMP/perf.txt" &
	ppid=$!
	BENCH_PIDS+=("$ppid")
	# perf attaches asynchronously and says nothing until it exits; a
	# late start only shortens what it counts (the ratio stays).
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
	bench_stop_pid "$spid"
	python3 - "$json" "$BENCH_TMP/perf.txt" "$mode" "$threads" "$depth" \
		"$((t1 - t0))" "$(getconf CLK_TCK)" "$TSV" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["phases"][-1]
tot = [r for r in p["rows"] if r["level"] == "total"][0]
n = {}
for l in open(sys.argv[2]):
    f = l.strip().split(",")
    if len(f) > 2 and f[2].startswith("syscalls:"):
        n[f[2].split("_")[-1]] = int(f[0]) if f[0].isdigit() else 0
syncs = n.get("fsync", 0) + n.get("fdatasync", 0)
pw = max(n.get("pwrite64", 0), 1)
on = "on" if sys.argv[3] == "true" else "off"
row = (on, sys.argv[4], sys.argv[5], tot["write"]["ios"] / p["window_s"],
       tot["lat"]["p99_ms"], syncs / pw, pw, syncs,
       int(sys.argv[6]) * 1e6 / int(sys.argv[7]) / pw)
print("%-3s %7s %7s %9.0f %9.2f %7.3f %9d %9d %9.1f" % row)
with open(sys.argv[8], "a") as f:
    f.write("\t".join(str(x) for x in row) + "\n")
EOF
}

echo "== group commit: ${BS} random FILE_SYNC writes, 1 VMDK," \
	"${SECONDS_RUN}s x ${REPS} runs per cell ($(nproc) CPUs)"
echo "gc  threads iodepth      IOPS   p99(ms) sync/wr   pwrites" \
	"    syncs CPU us/wr"
TSV=$BENCH_TMP/runs.tsv
: >"$TSV"
for t in $THREADS; do
	for d in $DEPTHS; do
		for _ in $(seq 1 "$REPS"); do
			sync_run true "$t" "$d"
			sync_run false "$t" "$d"
		done
	done
done
python3 - "$TSV" <<'EOF'
import statistics, sys
runs = {}
for l in open(sys.argv[1]):
    f = l.rstrip("\n").split("\t")
    runs.setdefault((int(f[1]), int(f[2])), {}).setdefault(f[0], []).append(
        [float(x) for x in f[3:]])
print("\nmedians; on/off = IOPS with group commit over IOPS without")
print("threads iodepth  on IOPS off IOPS  on/off  on p99 off p99"
      "  on s/w off s/w  on CPU off CPU (us/wr)")
for (t, d), m in sorted(runs.items()):
    med = {k: [statistics.median(c) for c in zip(*v)] for k, v in m.items()}
    on, off = med["on"], med["off"]
    print("%7d %7d %8.0f %8.0f %7.2f %7.2f %7.2f %7.3f %7.3f %7.1f %7.1f" % (
        t, d, on[0], off[0], on[0] / max(off[0], 1), on[1], off[1], on[2],
        off[2], on[5], off[5]))
EOF
