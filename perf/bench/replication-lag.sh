#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/replication-lag.sh [BUILD_DIR] [--lab]: the lag (the RPO) of
# relation r1 under a write load (issue 28 item 4; docs/replication.md).
# Two dsnfsd on XFS loop files in a private network namespace
# (replication-lib.sh); the source transfers every BENCH_LAG_EVERY (5)
# seconds (schedule_seconds); dsload writes to the source for
# BENCH_LAG_SECONDS (60): BENCH_LAG_VMS (2) VMs, one 256 MiB thin VMDK
# each, 64 KiB random FILE_SYNC writes at depth 4, each VM held to
# BENCH_LAG_VM_IOPS (64: 4 MiB/s).  Every second the source's /metrics is
# read: dsnfs_replication_lag_seconds (the metric), and the age of the
# replica the destination holds (now minus the time the source took the
# snapshot GET /volumes/src/replication names as the last: what the lag
# should be), transfers, failures, skipped runs.  Prints the RPO (the
# largest lag), the mean, the transfers and their bytes; draws both ages
# over time with gnuplot into BENCH_LAG_PNG (var/bench/replication-lag.png).
#
# --lab: lab 10's story (docs/labs.md) on the same load: at
# BENCH_LAB_DOWN (30 s) the destination stops (the link is down: every
# transfer fails, the lag climbs), at BENCH_LAB_UP (50 s) it comes back,
# at BENCH_LAB_LOST (75 s) the source is killed (kill -9: the disaster);
# then the destination is broken off, written to over NFS, and its
# replica is compared file by file with the source snapshot of the same
# name.  The picture goes to BENCH_LAG_PNG (make lab-replication:
# docs/img/lab10-lag.png), with the three moments marked.
# Needs root and gnuplot (gnuplot-nox).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${1:-build}
LAB=0
[ "${2:-}" = --lab ] && LAB=1
BIN=$PWD/$BUILD/bin
EVERY=${BENCH_LAG_EVERY:-5}
SECONDS_LOAD=${BENCH_LAG_SECONDS:-60}
VMS=${BENCH_LAG_VMS:-2}
VM_IOPS=${BENCH_LAG_VM_IOPS:-64}
DOWN=${BENCH_LAB_DOWN:-30}
UP=${BENCH_LAB_UP:-50}
LOST=${BENCH_LAB_LOST:-75}
PNG=${BENCH_LAG_PNG:-var/bench/replication-lag.png}
[ "$LAB" = 1 ] && SECONDS_LOAD=$((LOST + 10))
. perf/bench/lib.sh
. perf/bench/replication-lib.sh

[ "$(id -u)" = 0 ] || bench_die "needs root (loop mounts, namespaces)"
for b in dsnfsd dsload; do
	[ -x "$BIN/$b" ] || bench_die "$BIN/$b missing: make progs"
done
command -v gnuplot >/dev/null || bench_die "needs gnuplot (apt-get install gnuplot-nox)"
mkdir -p "$(dirname "$PNG")"
PNG=$(cd "$(dirname "$PNG")" && pwd)/$(basename "$PNG")
repl_enter_ns "$0" "$@"

BENCH_TMP=$(mktemp -d /var/tmp/dsnfs-repl-lag.XXXXXX)
trap repl_cleanup EXIT
T=$BENCH_TMP
repl_xfs src 2G
repl_xfs dsr 2G
repl_pair_start "$BIN" "schedule = none
schedule_seconds = $EVERY"
echo "replication lag: a transfer every $EVERY s; dsload: $VMS VMs x 64 KiB random writes, $VM_IOPS IOPS each, for $SECONDS_LOAD s; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"

"$BIN/dsload" -s 127.0.0.1 --nfs-port "$SRC_NFS" --mount-port "$SRC_MOUNT" \
	-D src -H 1 --vms "$VMS" --vmdks 1 --vmdk-size 256m --bs 64k \
	--read-pct 0 --random-pct 100 --iodepth 4 --vm-iops "$VM_IOPS" \
	--reconnect-timeout 5000 --ramp 0 --runtime "$SECONDS_LOAD" --quiet \
	>"$T/dsload.txt" 2>&1 &
LOAD_PID=$!
BENCH_PIDS+=("$LOAD_PID")

# One sample: t, the metric, the replica's age, transfers ok, failed,
# skipped, the last transfer's bytes ("-" where the source is gone).
sample() {
	local t=$1 m
	m=$(repl_api src /metrics 2>/dev/null) || {
		echo "$t - - - - - -"
		return
	}
	python3 - "$t" "$m" "$(repl_api src /volumes/src/replication 2>/dev/null)" \
		"$(repl_api src /volumes/src/snapshots 2>/dev/null)" <<'PY'
import json, sys, time
t, metrics, rel, snaps = sys.argv[1:5]
v = {}
for line in metrics.splitlines():
    if line.startswith("dsnfs_replication_") and 'relation="r1"' in line:
        v[line.split("{")[0][len("dsnfs_replication_"):]] = line.split()[-1]
age = "-"
try:
    r = [x for x in json.loads(rel)["relations"] if x["name"] == "r1"][0]
    s = json.loads(snaps)
    for x in s.get("snapshots", []):
        if x.get("name") == r["last_snapshot"]:
            age = str(int(time.time()) - int(x["created_s"]))
except (ValueError, KeyError, IndexError):
    pass
print(t, v.get("lag_seconds", "-"), age, v.get("transfers_total", "-"),
      v.get("transfers_failed_total", "-"), v.get("runs_skipped_total", "-"),
      v.get("last_sent_bytes", "-"))
PY
}

echo "# t lag_metric replica_age transfers failed skipped last_sent_bytes" >"$T/lag.dat"
start=$(date +%s)
end=$((SECONDS_LOAD + 2 * EVERY))
[ "$LAB" = 1 ] && end=$LOST
marks=""
for ((i = 0; i <= end; i++)); do
	while [ $(($(date +%s) - start)) -lt "$i" ]; do sleep 0.05; done
	if [ "$LAB" = 1 ] && [ "$i" = "$DOWN" ]; then
		bench_stop_pid "$DST_PID"
		echo "t=$i s: the destination stops (the link is down)"
	fi
	if [ "$LAB" = 1 ] && [ "$i" = "$UP" ]; then
		REPL_DST_ADMIN_PORT=$DST_ADMIN repl_dst_start "$BIN"
		echo "t=$i s: the destination is back"
	fi
	sample "$i" >>"$T/lag.dat"
done
if [ "$LAB" = 1 ]; then
	kill -KILL "$SRC_PID"
	wait "$SRC_PID" 2>/dev/null
	bench_forget "$SRC_PID"
	# The replica is what the destination committed last: its newest
	# snapshot (the source may have committed one more after its last
	# sample).
	last=$(repl_api dst /volumes/dsr/snapshots | python3 -c "
import json, sys
s = json.load(sys.stdin)['snapshots']
print(max(s, key=lambda x: x['created_s'])['name'] if s else '')")
	echo "t=$LOST s: the source is lost (kill -9); the lag was $(tail -1 "$T/lag.dat" | cut -d' ' -f2) s; the destination's last replica: $last"
fi
wait "$LOAD_PID" 2>/dev/null
bench_forget "$LOAD_PID"

awk '$2 != "-"' "$T/lag.dat" | awk '
	NR > 1 && $2 >= 0 { n++; sum += $2; if ($2 > max) max = $2
		if ($3 != "-" && $3 > amax) amax = $3 }
	NR > 1 { tr = $4; fl = $5; sk = $6 }
	END { printf "lag (dsnfs_replication_lag_seconds): max %d s (the RPO), mean %.1f s over %d samples; replica age: max %d s\n", max, sum / n, n, amax
	      printf "transfers: %d done, %d failed, %d runs skipped\n", tr, fl, sk }'
grep -ho 'replication: r1: transfer .* done .* resumed), [0-9]* bytes sent' "$T/src.log" |
	awk '{ b = $(NF - 2); n++; s += b; if (b > m) m = b }
	     END { if (n) printf "bytes sent per transfer: mean %.1f MiB, max %.1f MiB (%d transfers)\n", s / n / 1048576, m / 1048576, n }'
grep -E '^ *(write|total)' "$T/dsload.txt" | head -3

title="replication lag: a transfer every $EVERY s, $VMS VMs writing 64 KiB at $VM_IOPS IOPS each"
arrows=""
pad=2
if [ "$LAB" = 1 ]; then
	pad=12 # room for the label of the last moment
	title="lab 10: a transfer every $EVERY s under dsload; the destination down at ${DOWN} s, back at ${UP} s; the source lost at ${LOST} s"
	for m in "$DOWN:destination down" "$UP:destination back" "$LOST:source lost"; do
		arrows="$arrows
set arrow from ${m%%:*}, graph 0 to ${m%%:*}, graph 1 nohead dt 2 lc rgb 'gray40'
set label '${m#*:}' at ${m%%:*}, graph 0.96 left offset 0.5,0 font ',9'"
	done
fi
awk '$2 != "-" && $2 >= 0 { if ($3 == "-") $3 = "NaN"; print }' "$T/lag.dat" >"$T/lag.plot"
gnuplot <<EOF || bench_die "gnuplot failed"
set terminal pngcairo size 900,420 font ',10'
set output '$PNG'
set title "$title" font ',10'
set xlabel 'seconds since the load started'
set ylabel 'seconds'
set grid
set yrange [0:*]
set offsets 0, 0, 1, 0
set xrange [0:$((end + pad))]
set key below
$arrows
plot '$T/lag.plot' using 1:2 with steps lw 3 lc rgb '#1f77b4' title 'dsnfs\_replication\_lag\_seconds (the metric)', \
     '' using 1:3 with steps lw 1 dt 2 lc rgb 'black' title 'age of the last replica (from its snapshot time)'
EOF
echo "plot: $PNG"

if [ "$LAB" = 1 ]; then
	# The failover: the destination broken off, writable, its replica
	# the source's snapshot of the same name, file by file.
	code=$(repl_api dst -o "$T/body" -w '%{http_code}' -X POST \
		-H 'Content-Type: application/json' -d '{}' \
		/volumes/dsr/replication/break)
	echo "break on the destination: HTTP $code"
	echo "after the break" >"$T/after.txt"
	nfs-cp "$T/after.txt" "nfs://127.0.0.1/dsr/after.txt?nfsport=$DST_NFS&mountport=$DST_MOUNT" >/dev/null &&
		echo "the destination takes an NFS client's write: after.txt"
	[ -d "$T/src/.snapshot/$last" ] ||
		bench_die "the source has no snapshot $last to compare with"
	same=0 diff=0
	while IFS= read -r -d '' f; do
		rel=${f#"$T/src/.snapshot/$last/"}
		if cmp -s "$f" "$T/dsr/.snapshot/$last/$rel"; then
			same=$((same + 1))
		else
			diff=$((diff + 1))
			echo "differs: $rel"
		fi
	done < <(find "$T/src/.snapshot/$last" -type f -print0)
	echo "replica $last: $same files the same as the source's snapshot, $diff different"
fi
