#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/calls.sh BUILD_DIR [BUILD_DIR...]: user-space instructions
# per call of each dsnfsd build, side by side, counted by callgrind (so
# other work on the machine changes nothing but the time it takes).  Each
# build's dsnfsd runs under valgrind --tool=callgrind on loopback (any free
# ports, one worker loop) and gets, in phases dumped apart with
# callgrind_control:
#   NULL        rpcping, one connection, 16 calls in flight, CALLS_SECONDS
#   write-8k    dsload, random 8 KiB FILE_SYNC writes, every block of a
#               16 MiB VMDK once (--one-pass)
#   read-8k     dsload, random 8 KiB reads, every block once (--one-pass)
#   write-64k   dsload, random 64 KiB FILE_SYNC writes, every block once,
#               the second of two passes (the first holds the setup calls)
#   uwrite-8k   dsload, random 8 KiB UNSTABLE writes (a COMMIT every 64,
#               dsload's default), every block once, the second of two
#               passes
#   uwrite-64k  dsload, sequential 64 KiB UNSTABLE writes, the same way
# and prints instructions per call (the phase's total Ir / its calls; the
# phases include everything the process does meanwhile: libev, conn,
# dispatch, XDR, the store, libc, libtirpc).  Needs valgrind (installed
# when missing) and BUILD_DIR/bin/dsload and BUILD_DIR/bench/rpcping of the
# first build (perf/bench/run.sh builds rpcping).
# The dumps stay in CALLS_OUT/calls-STAMP/N.PHASE.callgrind.out (N: the
# build's place on the command line) for callgrind_annotate.
# Environment: CALLS_SECONDS [5], CALLS_OUT [first BUILD_DIR/bench].
set -u
cd "$(dirname "$0")/../.." || exit 1
. perf/bench/lib.sh

[ $# -ge 1 ] || bench_die "usage: perf/bench/calls.sh BUILD_DIR [BUILD_DIR...]"
SECS=${CALLS_SECONDS:-5}
FIRST=$1
OUT=${CALLS_OUT:-$FIRST/bench}
DSLOAD=$FIRST/bin/dsload
RPCPING=$FIRST/bench/rpcping
bench_install_packages valgrind
bench_build_rpcping "$FIRST"
[ -x "$DSLOAD" ] || bench_die "no $DSLOAD: make BUILD=$FIRST $DSLOAD"
mkdir -p "$OUT"
BENCH_TMP=$(mktemp -d /tmp/dsnfs-calls.XXXXXX) ||
	bench_die "cannot make a scratch directory"
BENCH_PIDS=()
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# ir_of FILE: the total instructions of one callgrind dump.
ir_of() {
	awk '/^(summary|totals):/ { print $2; exit }' "$1"
}

# dump NAME: makes callgrind write (and zero) its counters; the newest
# dump file is renamed NAME.
dump() {
	local before after
	before=$(ls "$BENCH_TMP"/cg.out* 2>/dev/null | wc -l)
	callgrind_control -d "$VG_PID" >/dev/null 2>&1 ||
		bench_die "callgrind_control -d $VG_PID failed"
	for _ in $(seq 1 100); do
		after=$(ls "$BENCH_TMP"/cg.out* 2>/dev/null | wc -l)
		[ "$after" -gt "$before" ] && break
		sleep 0.1
	done
	mv "$(ls -t "$BENCH_TMP"/cg.out* | head -1)" "$BENCH_TMP/$1"
}

RUN=$OUT/calls-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$RUN"
printf '%-40s %12s %12s %12s %12s %12s %12s\n' \
	"build (user-space Ir per call)" NULL write-8k read-8k write-64k \
	uwrite-8k uwrite-64k | tee "$RUN/table.txt"
n=0
for build in "$@"; do
	n=$((n + 1))
	rm -rf "$BENCH_TMP/export" "$BENCH_TMP/state" "$BENCH_TMP"/cg.out*
	mkdir -p "$BENCH_TMP/export" "$BENCH_TMP/state"
	: >"$BENCH_TMP/dsnfsd.out"
	# rpcping and dsload bind unprivileged ports (bench_access).
	bench_access "$BENCH_TMP/access.conf" bench
	valgrind --tool=callgrind -q --compress-strings=no \
		--callgrind-out-file="$BENCH_TMP/cg.out" \
		"$build/bin/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P off -A off \
		-w 1 -s "$BENCH_TMP/state" -e bench="$BENCH_TMP/export" \
		-c "$BENCH_TMP/access.conf" \
		>"$BENCH_TMP/dsnfsd.out" 2>"$BENCH_TMP/dsnfsd.log" &
	VG_PID=$!
	BENCH_PIDS+=("$VG_PID")
	bench_wait_line "$BENCH_TMP/dsnfsd.out" '^dsnfsd: listening' \
		"$VG_PID" || bench_die "$build: dsnfsd did not start"
	# Let the loops settle, then count from zero.
	sleep 2
	line=$(head -1 "$BENCH_TMP/dsnfsd.out")
	nfs=$(echo "$line" | sed -n 's/.* nfs=\([0-9]*\).*/\1/p')
	mnt=$(echo "$line" | sed -n 's/.* mount=\([0-9]*\).*/\1/p')
	dump start

	null_calls=$("$RPCPING" call 127.0.0.1 "$nfs" 100003 3 1 16 "$SECS" |
		sed -n 's/.*calls=\([0-9]*\).*/\1/p')
	dump null

	: >"$BENCH_TMP/dsload.log"
	"$DSLOAD" run -s 127.0.0.1 --nfs-port "$nfs" --mount-port "$mnt" \
		-D bench -H 1 --vmdk-size 16m --bs 8k \
		--pause-between-phases --read-pct 0,100 --random-pct 100 \
		--one-pass --quiet \
		>"$BENCH_TMP/dsload.out" 2>"$BENCH_TMP/dsload.log" &
	dl=$!
	bench_wait_line "$BENCH_TMP/dsload.log" 'paused before' "$dl" ||
		bench_die "$build: dsload did not pause: $(tail -3 "$BENCH_TMP/dsload.log")"
	dump write
	kill -USR1 "$dl"
	wait "$dl" || bench_die "$build: dsload failed: $(tail -3 "$BENCH_TMP/dsload.log")"
	dump read
	"$DSLOAD" run -s 127.0.0.1 --nfs-port "$nfs" --mount-port "$mnt" \
		-D bench -H 1 --vmdk-size 16m --bs 64k \
		--pause-between-phases --read-pct 0,0 --random-pct 100 \
		--one-pass --quiet \
		>"$BENCH_TMP/dsload.out" 2>"$BENCH_TMP/dsload64.log" &
	dl=$!
	bench_wait_line "$BENCH_TMP/dsload64.log" 'paused before' "$dl" ||
		bench_die "$build: dsload 64k did not pause: $(tail -3 "$BENCH_TMP/dsload64.log")"
	dump setup64
	kill -USR1 "$dl"
	wait "$dl" || bench_die "$build: dsload 64k failed: $(tail -3 "$BENCH_TMP/dsload64.log")"
	dump write64
	# UNSTABLE: two passes of one phase each, the second measured.
	for u in "8k 100 uwrite8" "64k 0 uwrite64"; do
		read -r bs rnd ph <<<"$u"
		"$DSLOAD" run -s 127.0.0.1 --nfs-port "$nfs" \
			--mount-port "$mnt" -D bench -H 1 --vmdk-size 16m \
			--bs "$bs" --stable unstable --pause-between-phases \
			--read-pct 0,0 --random-pct "$rnd" --one-pass --quiet \
			>"$BENCH_TMP/dsload.out" 2>"$BENCH_TMP/dsload-$ph.log" &
		dl=$!
		bench_wait_line "$BENCH_TMP/dsload-$ph.log" 'paused before' \
			"$dl" ||
			bench_die "$build: dsload $ph did not pause: $(tail -3 "$BENCH_TMP/dsload-$ph.log")"
		dump "setup-$ph"
		kill -USR1 "$dl"
		wait "$dl" ||
			bench_die "$build: dsload $ph failed: $(tail -3 "$BENCH_TMP/dsload-$ph.log")"
		dump "$ph"
	done
	# One 8 KiB call per block of the 16 MiB VMDK in each phase (the
	# write phase also holds dsload's few setup calls: MNT, LOOKUP,
	# CREATE ...).  Not dsload's --prefill: it writes in blocks of
	# RUN_PREFILL_BS, not 8 KiB.
	writes=$((16 * 1024 * 1024 / 8192))
	reads=$writes
	writes64=$((16 * 1024 * 1024 / 65536))
	printf '%-40s %12d %12d %12d %12d %12d %12d\n' "$build" \
		$(($(ir_of "$BENCH_TMP/null") / null_calls)) \
		$(($(ir_of "$BENCH_TMP/write") / writes)) \
		$(($(ir_of "$BENCH_TMP/read") / reads)) \
		$(($(ir_of "$BENCH_TMP/write64") / writes64)) \
		$(($(ir_of "$BENCH_TMP/uwrite8") / writes)) \
		$(($(ir_of "$BENCH_TMP/uwrite64") / writes64)) |
		tee -a "$RUN/table.txt"
	for phase in null write read write64 uwrite8 uwrite64; do
		cp "$BENCH_TMP/$phase" "$RUN/$n.$phase.callgrind.out"
	done
	kill "$VG_PID"
	wait "$VG_PID" 2>/dev/null
done
