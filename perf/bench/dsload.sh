# SPDX-License-Identifier: Apache-2.0
# The dsload half of perf/bench/run.sh (sourced by it, bash): the four
# corners at each flow count, caps off, against both servers alternately.
#
# F flows = F emulated hosts (127.0.1.1 ...) x the one datastore /bench,
# one VM with one VMDK each, BENCH_DSLOAD_IODEPTH (1) I/Os in flight per
# VMDK: F connections with one call each, where qemu-img has one
# connection with F.  Writes are FILE_SYNC, as ESXi sends them.  Every run
# makes its VMDKs anew (dsload empties them), so each run starts with a
# prefill (every block written once, 256 KiB FILE_SYNC writes) and pauses
# (--pause-between-phases); the server's CPU is read after the prefill,
# then dsload is let go (SIGUSR1) for BENCH_DSLOAD_RAMP s of ramp and
# BENCH_SECONDS s measured.  CPU per GiB scales the ticks of ramp + window
# by window / (ramp + window): the ramp runs the same load unmeasured.
#
# Uses from run.sh: DSLOAD FLOWS REPS SECONDS_RUN BENCH_TMP, ns_of, pid_of,
# record, bench_bg, bench_wait_line, bench_cpu_ticks, bench_stop_pid.

DSLOAD_VMDK_SIZE=${BENCH_DSLOAD_VMDK_SIZE:-16m}
DSLOAD_IODEPTH=${BENCH_DSLOAD_IODEPTH:-1}
DSLOAD_RAMP=${BENCH_DSLOAD_RAMP:-1}

# dsload_run SERVER CORNER FLOWS REP BS READ_PCT RANDOM_PCT
dsload_run() {
	local srv=$1 corner=$2 f=$3 rep=$4 bs=$5 rd=$6 rnd=$7
	local json=$BENCH_TMP/dsload.json pid spid t0 t1 line rc
	rm -f "$json"
	bench_bg dsload "$(ns_of "$srv")" "$DSLOAD" run -D bench -H "$f" \
		--vmdk-size "$DSLOAD_VMDK_SIZE" --prefill --pause-between-phases \
		--bs "$bs" --read-pct "$rd" --random-pct "$rnd" \
		--iodepth "$DSLOAD_IODEPTH" --ramp "$DSLOAD_RAMP" \
		--runtime "$SECONDS_RUN" --quiet --json "$json"
	pid=$BENCH_BG_PID
	spid=$(pid_of "$srv")
	if ! bench_wait_line "$BENCH_TMP/dsload.log" 'paused before' "$pid"; then
		echo "bench: $srv: dsload $corner $f flows:" \
			"$(tail -3 "$BENCH_TMP/dsload.log" "$BENCH_TMP/dsload.out")" >&2
		bench_stop_pid "$pid"
		record dsload "$corner" "$f" "$srv" "$rep" 0 0 0 0 -
		return
	fi
	t0=$(bench_cpu_ticks "$spid")
	kill -USR1 "$pid"
	wait "$pid"
	rc=$?
	t1=$(bench_cpu_ticks "$spid")
	bench_forget "$pid"
	if [ "$rc" != 0 ] || [ ! -s "$json" ]; then
		echo "bench: $srv: dsload $corner $f flows exited $rc:" \
			"$(tail -3 "$BENCH_TMP/dsload.log")" >&2
		record dsload "$corner" "$f" "$srv" "$rep" 0 0 0 0 -
		return
	fi
	line=$(python3 - "$json" "$((t1 - t0))" "$DSLOAD_RAMP" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["phases"][-1]
tot = [r for r in p["rows"] if r["level"] == "total"][0]
ops = tot["read"]["ios"] + tot["write"]["ios"]
moved = tot["read"]["bytes"] + tot["write"]["bytes"]
win = p["window_s"]
ticks = round(int(sys.argv[2]) * win / (win + float(sys.argv[3])))
print(ops, moved, win, ticks, tot["lat"]["p99_ms"] * 1000.0)
EOF
)
	# shellcheck disable=SC2086
	record dsload "$corner" "$f" "$srv" "$rep" $line
}

bench_dsload_all() {
	local c corner bs rd rnd f rep srv
	for c in seq-read:64k:100:0 seq-write:64k:0:0 rand-read:8k:100:100 \
		rand-write:8k:0:100; do
		IFS=: read -r corner bs rd rnd <<<"$c"
		corner_wanted "$corner" || continue
		for f in $FLOWS; do
			echo "dsload $corner $f flows" >&2
			for rep in $(seq 1 "$REPS"); do
				for srv in $SERVERS; do
					dsload_run $srv "$corner" "$f" "$rep" \
						"$bs" "$rd" "$rnd"
				done
			done
		done
	done
}
