#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/callcpu.sh BUILD_DIR [BUILD_DIR...]: the server's CPU time per
# call of each dsnfsd build, the builds alternated (A B A B ...) for
# CALLCPU_ROUNDS rounds.  Where calls.sh counts instructions under
# callgrind, this runs each build natively and reads the CPU time the
# kernel charged to dsnfsd (the sum of /proc/PID/task/*/schedstat's first
# field: nanoseconds on a CPU, user and system, every thread) around each
# phase, on loopback (any free ports, one worker loop):
#   NULL        rpcping, one connection, 16 calls in flight, CALLCPU_SECONDS
#   write-8k    dsload, random 8 KiB UNSTABLE writes (a COMMIT every 4096),
#               every block of a CALLCPU_MIB MiB VMDK once (--one-pass; not
#               --prefill, whose writes are larger)
#   read-8k     dsload, random 8 KiB reads, every block once (--one-pass)
# and prints nanoseconds of server CPU per call, one row per run, then the
# median and the spread (min..max) of each build.  CPU per call, not
# calls per second: other work on the machine slows a run down but
# charges the server little of its own (caches and frequency aside: the
# rounds are alternated so that both builds meet the same load).
# Needs BUILD_DIR/bin/dsnfsd of each build, and bin/dsload and
# bench/rpcping of the first (perf/bench/run.sh builds rpcping).
# Environment: CALLCPU_ROUNDS [3], CALLCPU_SECONDS [5], CALLCPU_MIB [64],
# CALLCPU_EXPORTS [1]: datastores served, /bench the last of them (the
# export table is searched from its first slot).
set -u
cd "$(dirname "$0")/../.." || exit 1
. perf/bench/lib.sh

[ $# -ge 1 ] || bench_die "usage: perf/bench/callcpu.sh BUILD_DIR [BUILD_DIR...]"
ROUNDS=${CALLCPU_ROUNDS:-3}
SECS=${CALLCPU_SECONDS:-5}
MIB=${CALLCPU_MIB:-64}
EXPORTS=${CALLCPU_EXPORTS:-1}
FIRST=$1
DSLOAD=$FIRST/bin/dsload
RPCPING=$FIRST/bench/rpcping
bench_build_rpcping "$FIRST"
[ -x "$DSLOAD" ] || bench_die "no $DSLOAD: make BUILD=$FIRST $DSLOAD"
BENCH_TMP=$(mktemp -d /tmp/dsnfs-callcpu.XXXXXX) ||
	bench_die "cannot make a scratch directory"
BENCH_PIDS=()
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# cpu_ns PID: nanoseconds PID's threads have run so far.
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null |
		awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# One run of build $1: sets RES to "NULL write read" in ns per call.
run_one() {
	local build=$1 pid line nfs mnt t0 t1 t2 t3 calls dl
	local blocks=$((MIB * 1024 / 8))
	rm -rf "$BENCH_TMP/export" "$BENCH_TMP/state" "$BENCH_TMP"/pad*
	mkdir -p "$BENCH_TMP/export" "$BENCH_TMP/state"
	# CALLCPU_EXPORTS - 1 other datastores first: /bench is the last
	# one of the export table.
	: >"$BENCH_TMP/dsnfsd.conf"
	for i in $(seq 2 "$EXPORTS"); do
		mkdir -p "$BENCH_TMP/pad$i"
		printf '[datastore pad%d]\npath = %s\n' "$i" \
			"$BENCH_TMP/pad$i" >>"$BENCH_TMP/dsnfsd.conf"
	done
	# /bench with the labs' access (lab_access: dsload binds
	# unprivileged ports).
	{
		lab_access bench
		printf 'path = %s\n' "$BENCH_TMP/export"
	} >>"$BENCH_TMP/dsnfsd.conf"
	: >"$BENCH_TMP/dsnfsd.out"
	"$build/bin/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P off -A off -w 1 \
		-s "$BENCH_TMP/state" -c "$BENCH_TMP/dsnfsd.conf" \
		>"$BENCH_TMP/dsnfsd.out" 2>"$BENCH_TMP/dsnfsd.log" &
	pid=$!
	BENCH_PIDS+=("$pid")
	bench_wait_line "$BENCH_TMP/dsnfsd.out" '^dsnfsd: listening' "$pid" ||
		bench_die "$build: dsnfsd did not start"
	sleep 1
	line=$(head -1 "$BENCH_TMP/dsnfsd.out")
	nfs=$(echo "$line" | sed -n 's/.* nfs=\([0-9]*\).*/\1/p')
	mnt=$(echo "$line" | sed -n 's/.* mount=\([0-9]*\).*/\1/p')

	t0=$(cpu_ns "$pid")
	calls=$("$RPCPING" call 127.0.0.1 "$nfs" 100003 3 1 16 "$SECS" |
		sed -n 's/.*calls=\([0-9]*\).*/\1/p')
	t1=$(cpu_ns "$pid")

	: >"$BENCH_TMP/dsload.log"
	"$DSLOAD" run -s 127.0.0.1 --nfs-port "$nfs" --mount-port "$mnt" \
		-D bench -H 1 --vmdk-size "${MIB}m" --bs 8k \
		--stable unstable --commit-every 4096 \
		--pause-between-phases --read-pct 0,100 --random-pct 100 \
		--one-pass --quiet \
		>"$BENCH_TMP/dsload.out" 2>"$BENCH_TMP/dsload.log" &
	dl=$!
	BENCH_PIDS+=("$dl")
	bench_wait_line "$BENCH_TMP/dsload.log" 'paused before' "$dl" ||
		bench_die "$build: dsload did not pause: $(tail -3 "$BENCH_TMP/dsload.log")"
	t2=$(cpu_ns "$pid")
	kill -USR1 "$dl"
	wait "$dl" || bench_die "$build: dsload failed: $(tail -3 "$BENCH_TMP/dsload.log")"
	t3=$(cpu_ns "$pid")
	kill "$pid"
	wait "$pid" 2>/dev/null
	BENCH_PIDS=()
	# The write phase also holds dsload's few setup calls (MNT, LOOKUP,
	# CREATE ...) and its COMMITs: under 0.2% of the writes.
	RES="$(((t1 - t0) / calls)) $(((t2 - t1) / blocks)) $(((t3 - t2) / blocks))"
}

printf '%-6s %-40s %10s %10s %10s\n' round "build (server CPU ns/call)" \
	NULL write-8k read-8k
for r in $(seq 1 "$ROUNDS"); do
	for build in "$@"; do
		run_one "$build"
		echo "$build $RES" >>"$BENCH_TMP/rows"
		printf '%-6s %-40s %10s %10s %10s\n' "$r" "$build" $RES
	done
done
echo
printf '%-47s %21s %21s %21s\n' "build: median (min..max) of $ROUNDS" NULL \
	write-8k read-8k
for build in "$@"; do
	printf '%-47s' "$build"
	for col in 2 3 4; do
		awk -v b="$build" -v c=$col '$1 == b { print $c }' \
			"$BENCH_TMP/rows" | sort -n |
			awk '{ v[NR] = $1 } END {
				m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
				printf " %21s", sprintf("%d (%d..%d)", m, v[1], v[NR]) }'
	done
	echo
done
