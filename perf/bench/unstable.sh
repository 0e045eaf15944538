#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/unstable.sh OLD_BUILD NEW_BUILD: UNSTABLE WRITEs, two dsnfsd
# builds side by side, and what this machine's disk takes from fio in the
# same shape, for the ceiling.  Corners:
#   rand-8k   random 8 KiB UNSTABLE writes
#   seq-64k   sequential 64 KiB UNSTABLE writes
# each at UNSTABLE_CONNS connections (4 16): dsload emulates that many
# hosts (127.0.1.x), one VMDK of UNSTABLE_VMDK_SIZE each, prefilled (so
# the measured writes overwrite allocated blocks, as a VM's do), with
# UNSTABLE_IODEPTH writes in flight per connection and a COMMIT every 64
# (dsload's default).  The builds alternate, UNSTABLE_REPS runs each, each
# run on a new server and new VMDKs, UNSTABLE_SECONDS measured after 1 s
# of ramp; the table gives the median MiB/s of each build, new/old, the
# median of the server's CPU seconds (user + system, all its threads) per
# GiB written, new/old, and fio's MiB/s for the same I/O (buffered writes into as many files, the
# page cache as UNSTABLE has it, psync, one job per connection) with
# new/fio.  Loopback only; needs root (dsload binds 127.0.1.x).
#
# Environment: UNSTABLE_SECONDS [5], UNSTABLE_REPS [3], UNSTABLE_CONNS
# ["4 16"], UNSTABLE_IODEPTH [4], UNSTABLE_VMDK_SIZE [16m],
# UNSTABLE_CORNERS ["rand-8k seq-64k"], BENCH_DIR [/var/tmp].
set -u
cd "$(dirname "$0")/../.." || exit 1
. perf/bench/lib.sh

[ $# -eq 2 ] || bench_die "usage: perf/bench/unstable.sh OLD_BUILD NEW_BUILD"
OLD=$1
NEW=$2
SECS=${UNSTABLE_SECONDS:-5}
REPS=${UNSTABLE_REPS:-3}
CONNS=${UNSTABLE_CONNS:-4 16}
DEPTH=${UNSTABLE_IODEPTH:-4}
VMDK_SIZE=${UNSTABLE_VMDK_SIZE:-16m}
CORNERS=${UNSTABLE_CORNERS:-rand-8k seq-64k}
DSLOAD=$NEW/bin/dsload
for b in "$OLD" "$NEW"; do
	[ -x "$b/bin/dsnfsd" ] || bench_die "no $b/bin/dsnfsd: make BUILD=$b progs"
done
[ -x "$DSLOAD" ] || bench_die "no $DSLOAD: make BUILD=$NEW progs"
command -v fio >/dev/null || bench_install_packages fio
BENCH_TMP=$(mktemp -d "${BENCH_DIR:-/var/tmp}/dsnfs-unstable.XXXXXX") ||
	bench_die "cannot make a scratch directory"
BENCH_PIDS=()
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# corner_args CORNER: dsload's --bs and --random-pct, fio's bs and rw.
corner_args() {
	case $1 in
	rand-8k) echo "8k 100 randwrite" ;;
	seq-64k) echo "64k 0 write" ;;
	*) bench_die "unknown corner $1" ;;
	esac
}

# run_dsnfsd BUILD CORNER CONNS: one run; prints MiB/s and the server's
# CPU seconds per GiB written ("0 0" on failure).
run_dsnfsd() {
	local build=$1 corner=$2 conns=$3 bs rnd rw d pid nfs mnt json dl rc t0 t1
	read -r bs rnd rw <<<"$(corner_args "$corner")"
	d=$BENCH_TMP/run
	rm -rf "$d"
	mkdir -p "$d/export" "$d/state"
	bench_access "$d/access.conf" bench
	"$build/bin/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P off -A off \
		-s "$d/state" -e bench="$d/export" -c "$d/access.conf" \
		>"$d/dsnfsd.out" 2>"$d/dsnfsd.log" &
	pid=$!
	BENCH_PIDS+=("$pid")
	if ! bench_wait_line "$d/dsnfsd.out" '^dsnfsd: listening' "$pid"; then
		echo "unstable: $build: dsnfsd did not start" >&2
		echo "0 0"
		return
	fi
	nfs=$(sed -n 's/.* nfs=\([0-9]*\).*/\1/p' "$d/dsnfsd.out")
	mnt=$(sed -n 's/.* mount=\([0-9]*\).*/\1/p' "$d/dsnfsd.out")
	json=$d/dsload.json
	"$DSLOAD" run -s 127.0.0.1 --nfs-port "$nfs" --mount-port "$mnt" \
		-D bench -H "$conns" --vmdk-size "$VMDK_SIZE" --prefill \
		--pause-between-phases --bs "$bs" --read-pct 0 \
		--random-pct "$rnd" --stable unstable --iodepth "$DEPTH" \
		--ramp 1 --runtime "$SECS" --quiet --json "$json" \
		>"$d/dsload.out" 2>"$d/dsload.log" &
	dl=$!
	BENCH_PIDS+=("$dl")
	if ! bench_wait_line "$d/dsload.log" 'paused before' "$dl"; then
		echo "unstable: $build: dsload did not pause: $(tail -3 "$d/dsload.log")" >&2
		bench_stop_pid "$dl"
		bench_stop_pid "$pid"
		echo "0 0"
		return
	fi
	# The server's CPU from after the prefill to the end (ramp + window).
	t0=$(bench_cpu_ticks "$pid")
	kill -USR1 "$dl"
	wait "$dl"
	rc=$?
	t1=$(bench_cpu_ticks "$pid")
	bench_forget "$dl"
	bench_stop_pid "$pid"
	if [ "$rc" != 0 ] || [ ! -s "$json" ]; then
		echo "unstable: $build: dsload exited $rc: $(tail -3 "$d/dsload.log")" >&2
		echo "0 0"
		return
	fi
	python3 - "$json" "$((t1 - t0))" "$(getconf CLK_TCK)" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))["phases"][-1]
tot = [r for r in p["rows"] if r["level"] == "total"][0]
win = p["window_s"]
moved = tot["write"]["bytes"]
# The ticks cover 1 s of ramp and the window: the window's share.
cpu_s = int(sys.argv[2]) / float(sys.argv[3]) * win / (win + 1.0)
print("%.1f %.2f" % (moved / win / 1048576.0,
                     cpu_s / (moved / 1073741824.0) if moved else 0))
EOF
}

# run_fio CORNER CONNS: prints fio's MiB/s for the same writes.
run_fio() {
	local corner=$1 conns=$2 bs rnd rw d
	read -r bs rnd rw <<<"$(corner_args "$corner")"
	d=$BENCH_TMP/fio
	rm -rf "$d"
	mkdir -p "$d"
	fio --name=unstable --directory="$d" --rw="$rw" --bs="$bs" \
		--size="$VMDK_SIZE" --numjobs="$conns" --ioengine=psync \
		--time_based --runtime="$SECS" --ramp_time=1 \
		--group_reporting --output-format=json >"$d.json" 2>/dev/null ||
		{
			echo 0
			return
		}
	python3 - "$d.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print("%.1f" % (j["write"]["bw_bytes"] / 1048576.0))
EOF
}

median() {
	tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 }
		END { if (NR == 0) print 0; else if (NR % 2) print a[(NR + 1) / 2];
		      else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'
}

echo "unstable: $(uptime)"
printf '%-9s %5s %9s %9s %7s %9s %9s %7s %9s %7s\n' corner conns \
	"old MiB/s" "new MiB/s" new/old "old cpu" "new cpu" new/old \
	"fio MiB/s" new/fio
for corner in $CORNERS; do
	for conns in $CONNS; do
		olds="" news="" ocpu="" ncpu=""
		for _ in $(seq 1 "$REPS"); do
			read -r m c <<<"$(run_dsnfsd "$OLD" "$corner" "$conns")"
			olds="$olds $m" ocpu="$ocpu $c"
			read -r m c <<<"$(run_dsnfsd "$NEW" "$corner" "$conns")"
			news="$news $m" ncpu="$ncpu $c"
		done
		o=$(echo "$olds" | median)
		n=$(echo "$news" | median)
		oc=$(echo "$ocpu" | median)
		nc=$(echo "$ncpu" | median)
		f=$(run_fio "$corner" "$conns")
		printf '%-9s %5s %9s %9s %7s %9s %9s %7s %9s %7s\n' "$corner" \
			"$conns" "$o" "$n" "$(ratio "$n" "$o")" "$oc" "$nc" \
			"$(ratio "$nc" "$oc")" "$f" "$(ratio "$n" "$f")"
	done
done
echo "unstable: $(uptime)"
