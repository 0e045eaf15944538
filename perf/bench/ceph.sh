#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/ceph.sh [BUILD_DIR]: dsnfsd on CephFS against nfs-ganesha with
# FSAL_CEPH, on one one-node cluster (tests/ceph/cluster.sh), same client
# (dsload), in one run; and librados itself (rados bench) beside them, so
# that what a gateway costs shows.  `make bench-ceph` runs it.  Needs root:
# it runs in a network namespace of its own (loopback only: ganesha's
# wildcard sockets reach nowhere else).  docs/ceph.md, "Benchmark".
#
# Environment (defaults in brackets):
#   BENCH_SECONDS [5]    measured seconds of one run
#   BENCH_DEPTH   [16]   I/Os in flight (one emulated host, one VMDK)
#   BENCH_VMDK    [256m] the test file
#   BENCH_HOSTS   [1]    emulated hosts, one TCP connection (flow) each
#   BENCH_PERF    [0]    1: `perf record -g` of the NFS server during each
#                        corner, the top functions printed after,
#                        the recordings kept in BENCH_OUT
#   BENCH_PERF_GRAPH [fp] perf's --call-graph (dwarf: through libraries
#                        built without frame pointers, as libcephfs)
#   BENCH_CORNERS [all]  the corners to run, e.g. "rand-write file-sync-rand"
#   BENCH_SERVERS [dsnfsd ganesha rados libcephfs] which to run, in this
#                        order ("libcephfs": the corners as libcephfs calls
#                        in one process, perf/bench/cephfloor.c: the floor
#                        under any gateway on it)
#   BENCH_ROUNDS  [1]    runs of that list, one after the other: the
#                        table gives each corner's median, and the range
#                        of the ratios of the rounds' runs (a server
#                        named twice in the list counts twice too)
#                        ("base": BENCH_BASE's dsnfsd)
#   BENCH_BASE           another build dir: its dsnfsd is server "base"
#                        (same settings, a directory of its own), so that
#                        before and after run on one cluster, e.g.
#                        BENCH_SERVERS="base dsnfsd ganesha"
#   BENCH_DSNFSD_CONF    lines added to dsnfsd's config (e.g. its
#                        [datastore ds1] section: "work_threads = 64" goes
#                        before it, in [server])
#   BENCH_DSNFSD_DS      lines added to dsnfsd's [datastore ds1] (e.g.
#                        "intent_log = rados")
#   BENCH_DSNFSD_CEPH    lines added to dsnfsd's copy of ceph.conf, in
#                        [client.admin] (e.g. "client_oc = false")
#   BENCH_BASE_CEPH      the same for server "base" [BENCH_DSNFSD_CEPH]
#   BENCH_BASE_CONF      server "base"'s own [server] lines
#                        [BENCH_DSNFSD_CONF]; with BENCH_BASE=BUILD_DIR,
#                        one binary under two settings
#   BENCH_OUT     [BUILD_DIR/bench] where ceph-STAMP.txt goes
#   CEPH_OSDS     [1]    3: three OSDs, size 3 (tests/ceph/cluster.sh)
#
# Beside the rates it prints where the CPU goes: microseconds of CPU per
# I/O of the NFS server, each Ceph daemon (OSD, MDS, MON) and the client,
# from /proc/PID/stat around each run (user + system, every thread).  CPU
# per I/O, unlike the rates, holds on a machine that other work loads.
set -u
cd "$(dirname "$0")/../.." || exit 1
. perf/bench/ceph-lib.sh
BUILD=${1:-build}
bench_ceph_netns "$@"

SECS=${BENCH_SECONDS:-5}
DEPTH=${BENCH_DEPTH:-16}
VMDK=${BENCH_VMDK:-256m}
HOSTS=${BENCH_HOSTS:-1}
PERF=${BENCH_PERF:-0}
PERF_GRAPH=${BENCH_PERF_GRAPH:-fp}
ONLY=${BENCH_CORNERS:-}
SERVERS=" ${BENCH_SERVERS:-dsnfsd ganesha rados libcephfs} "
RAMP=1
OUT=${BENCH_OUT:-$BUILD/bench}
DSNFSD=$BUILD/bin/dsnfsd
BASE=${BENCH_BASE:-}
DSLOAD=$BUILD/bin/dsload
mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%d-%H%M%S)
TABLE=$OUT/ceph-$STAMP.txt
bench_ceph_start || exit 1

# name kind args...: one dsload run against the server on ports 2049 /
# 20048 -> "MiB/s IOPS" on stdout, and "us-per-op of server osd mds mon
# client" in $TMP/cpu.  A prefill is left out of the CPU (dsload pauses
# after it); the ramp is in it, so its I/Os count: IOPS x (ramp + run).
dsload_run() {
	local pids before after now dl prof="" rc osd_before osd_after
	# shellcheck disable=SC2207
	pids=($(cpu_pids))
	"$DSLOAD" run -s 127.0.0.1 --nfs-port 2049 --mount-port 20048 -D ds1 \
		-H "$HOSTS" --vmdk-size "$VMDK" --iodepth "$DEPTH" --ramp "$RAMP" \
		--runtime "$SECS" --pause-between-phases \
		--quiet --json "$TMP/run.json" "$@" >"$TMP/dsload.out" 2>&1 &
	dl=$!
	if [[ " $* " == *" --prefill "* ]]; then
		for _ in $(seq 1 1200); do
			grep -q 'paused before' "$TMP/dsload.out" && break
			kill -0 "$dl" 2>/dev/null || break
			sleep 0.1
		done
	fi
	before=$(cpu_ticks "${pids[@]}" "$dl")
	after=$before
	osd_before=$(osd_counters)
	if [ "$PERF" = 1 ]; then
		prof=$TMP/perf-$SERVER-$CORNER.data
		perf record -q --call-graph "$PERF_GRAPH" -o "$prof" \
			-p "$SRV_PID" >/dev/null 2>&1 &
	fi
	kill -USR1 "$dl" 2>/dev/null
	# The client's own CPU: read just before it ends, from its last look.
	while kill -0 "$dl" 2>/dev/null; do
		now=$(cpu_ticks "${pids[@]}" "$dl")
		# Gone between the look and the read: 0, not its last ticks.
		case ${now##* } in - | 0) ;; *) after=$now ;; esac
		sleep 0.2
	done
	wait "$dl"
	rc=$?
	after="$(cpu_ticks "${pids[@]}") ${after##* }"
	osd_after=$(osd_counters)
	if [ -n "$prof" ]; then
		pkill -INT -f "perf record -q --call-graph $PERF_GRAPH -o $prof" \
			2>/dev/null
		sleep 1
	fi
	if [ $rc != 0 ]; then
		# What failed, said by both sides (the scratch goes at exit).
		grep -i -m 8 'STOPPED\|NFS3ERR\|error' "$TMP/dsload.out" >&2
		tail -5 "$TMP/dsload.out" >&2
		echo "  the server's log ends (kept whole in $OUT/$SERVER-$STAMP.log):" >&2
		tail -8 "$TMP/$SERVER.log" >&2
		cp "$TMP/$SERVER.log" "$OUT/$SERVER-$STAMP.log" 2>/dev/null
		echo "0 0"
		return
	fi
	# The I/Os: the ramp's count too, as the CPU's window holds it.
	python3 - "$TMP/run.json" "$RAMP" "$SECS" "$TMP/ops" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = [r for r in j["phases"][-1]["rows"] if r["level"] == "total"]
t = rows[0]
bad = t["errors"] + t["mismatches"]
print("%.1f %.0f%s" % (t["mib_per_s"], t["iops"], "" if not bad else " ERR"))
open(sys.argv[4], "w").write(
    "%f\n" % (t["iops"] * (float(sys.argv[2]) + float(sys.argv[3]))))
PY
	python3 perf/bench/ceph_costs.py "$(cat "$TMP/ops")" "$before" "$after" \
		"$TMP/cpu" "$osd_before" "$osd_after" "$TMP/osdops"
}

CORNERS="seq-read:--bs=64k,--read-pct=100,--random-pct=0,--prefill
seq-write:--bs=64k,--read-pct=0,--random-pct=0,--stable=unstable
rand-read:--bs=8k,--read-pct=100,--random-pct=100,--prefill
rand-write:--bs=8k,--read-pct=0,--random-pct=100,--stable=unstable
file-sync-write:--bs=64k,--read-pct=0,--random-pct=0,--stable=file_sync
file-sync-rand:--bs=8k,--read-pct=0,--random-pct=100,--stable=file_sync"

# server: runs every corner, "corner MiB/s IOPS" lines added to
# $TMP/$server, "corner us-per-op..." to $TMP/$server.cpu.
corners() {
	local server=$1 line name args
	SERVER=$server
	while IFS= read -r line; do
		name=${line%%:*}
		args=${line#*:}
		[ -z "$ONLY" ] || [[ " $ONLY " == *" $name "* ]] || continue
		CORNER=$name
		: >"$TMP/cpu"
		: >"$TMP/osdops"
		# shellcheck disable=SC2086
		echo "$name $(dsload_run ${args//,/ })" >>"$TMP/$server"
		echo "$name $(cat "$TMP/cpu")" >>"$TMP/$server.cpu"
		echo "$name $server $(cat "$TMP/osdops")" >>"$TMP/osdops.all"
		# How many COMMITs the run's UNSTABLE writes got answered: a
		# client waits for one before it sends the next.
		echo "  $server $name: $(tail -1 "$TMP/$server")," \
			"CPU us/op (server osd mds mon client):" \
			"$(cat "$TMP/cpu")" \
			"$(grep -o 'commits [0-9]*' "$TMP/dsload.out")" >&2
	done <<<"$CORNERS"
}

# NAME BINARY: a dsnfsd, its corners into $TMP/NAME.
run_dsnfsd_as() {
	local name=$1 bin=$2
	bench_dsnfsd_up "$name" "$bin" || exit 1
	echo "$name: $bin (cephfs backend):" >&2
	corners "$name"
	bench_server_down
	# The RADOS log's counts (records, flushes: records per RADOS write).
	grep -ho 'rlog: .* closed.*' "$TMP/$name.log" >&2
}

run_dsnfsd() {
	run_dsnfsd_as dsnfsd "$DSNFSD"
}

run_base() {
	[ -n "$BASE" ] || { echo "bench-ceph: base needs BENCH_BASE" >&2; exit 1; }
	run_dsnfsd_as base "$BASE/bin/dsnfsd"
}

# libcephfs alone (perf/bench/cephfloor.c): the same corners as calls in
# one process, no NFS: what any gateway on libcephfs pays at least.  Its
# CPU is the "server" column (client 0); its corners into $TMP/libcephfs.
FLOOR=$BUILD/bench/cephfloor
floor_run() {
	local mode=$1 bs=$2 fifo=$TMP/floor.in out=$TMP/floor.out pid
	local before after pids osd_before osd_after
	rm -f "$fifo"
	mkfifo "$fifo"
	"$FLOOR" "$CONF" /bench-libcephfs "$mode" "$bs" "$HOSTS" "$DEPTH" \
		"$SECS" "${VMDK%m}" <"$fifo" >"$out" 2>"$TMP/floor.err" &
	pid=$!
	exec 7>"$fifo"
	while ! grep -q 'cephfloor: ready' "$TMP/floor.err"; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	SRV_PID=$pid
	# shellcheck disable=SC2207
	pids=($(cpu_pids))
	before=$(cpu_ticks "${pids[@]}")
	osd_before=$(osd_counters)
	echo go >&7
	while ! grep -q '^ops=' "$out"; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	after=$(cpu_ticks "${pids[@]}")
	osd_after=$(osd_counters)
	echo unmount >&7
	exec 7>&-
	wait "$pid"
	SRV_PID=""
	python3 - "$out" <<'PY'
import sys
f = dict(kv.split("=") for kv in open(sys.argv[1]).read().split())
print("%s %s%s" % (f["mib_per_s"], f["iops"], " ERR" if int(f["errors"]) else ""))
PY
	# No client process: its column is 0.
	python3 perf/bench/ceph_costs.py "$(sed 's/^ops=\([0-9]*\).*/\1/' "$out")" \
		"$before 0" "$after 0" "$TMP/cpu" "$osd_before" "$osd_after" \
		"$TMP/osdops"
}

run_libcephfs() {
	local line name bs
	case $VMDK in *m) ;; *)
		echo "bench-ceph: libcephfs needs BENCH_VMDK in MiB (256m)" >&2
		exit 1 ;;
	esac
	mkdir -p "$BUILD/bench"
	cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
		-D_FILE_OFFSET_BITS=64 -o "$FLOOR" perf/bench/cephfloor.c \
		-lcephfs -lpthread || exit 1
	echo "libcephfs alone ($FLOOR):" >&2
	SERVER=libcephfs
	while IFS= read -r line; do
		name=${line%%:*}
		[ -z "$ONLY" ] || [[ " $ONLY " == *" $name "* ]] || continue
		bs=${line#*--bs=}
		bs=$((${bs%%k*} * 1024))
		: >"$TMP/cpu"
		: >"$TMP/osdops"
		echo "$name $(floor_run "$name" "$bs")" >>"$TMP/libcephfs"
		echo "$name $(cat "$TMP/cpu")" >>"$TMP/libcephfs.cpu"
		echo "$name libcephfs $(cat "$TMP/osdops")" >>"$TMP/osdops.all"
		echo "  libcephfs $name: $(tail -1 "$TMP/libcephfs")," \
			"CPU us/op (process osd mds mon):" "$(cat "$TMP/cpu")" >&2
	done <<<"$CORNERS"
}

# The nfs-ganesha side: its corners into $TMP/ganesha.
run_ganesha() {
	bench_ganesha_up || exit 1
	echo "nfs-ganesha FSAL_CEPH:" >&2
	corners ganesha
	bench_server_down
}

# librados alone: 16 ops in flight, the block sizes of the corners, then
# whole 4 MiB objects.
run_rados() {
	rados_bench() {
		local bs=$1 mode=$2 size=()
		# -b is the write's; seq and rand read what the last write left.
		[ "$mode" = write ] && size=(-b "$bs")
		rados -c "$CONF" -p cephfs_data bench "$SECS" "$mode" "${size[@]}" \
			-t "$DEPTH" --no-cleanup 2>/dev/null |
			awk '/^Bandwidth \(MB\/sec\)/ { bw = $3 }
			     /^Average IOPS/ { iops = $3 }
			     END { printf "%.1f %.0f\n", bw, iops }'
	}
	echo "rados bench:" >&2
	{
		echo "seq-write $(rados_bench 65536 write)"
		echo "seq-read $(rados_bench 65536 seq)"
		echo "rand-write $(rados_bench 8192 write)"
		echo "rand-read $(rados_bench 8192 rand)"
		# CephFS's object size: what the cluster takes in and gives
		# out in the pieces a gateway's cache writes and reads ahead.
		echo "object-write $(rados_bench 4194304 write)"
		echo "object-read $(rados_bench 4194304 seq)"
	} >>"$TMP/rados"
	rados -c "$CONF" -p cephfs_data cleanup >/dev/null 2>&1
}

: >"$TMP/dsnfsd"
: >"$TMP/ganesha"
: >"$TMP/rados"
: >"$TMP/dsnfsd.cpu"
: >"$TMP/base"
: >"$TMP/base.cpu"
: >"$TMP/ganesha.cpu"
: >"$TMP/osdops.all"
: >"$TMP/libcephfs"
: >"$TMP/libcephfs.cpu"
for _ in $(seq 1 "${BENCH_ROUNDS:-1}"); do
	for s in $SERVERS; do
		case $s in dsnfsd | base | ganesha | rados | libcephfs) run_$s ;; esac
	done
done

{
	echo "dsnfs bench-ceph $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPU," \
		"Linux $(uname -r), ceph $(dpkg-query -W -f '${Version}' ceph-osd)," \
		"nfs-ganesha $(dpkg-query -W -f '${Version}' nfs-ganesha-ceph)"
	if [ "${CEPH_OSDS:-1}" = 3 ]; then
		echo -n "one-node cluster (3 bluestore OSDs, a sparse file each, size 3, min_size 2), loopback; "
	else
		echo -n "one-node cluster (1 bluestore OSD on a sparse file, size 1), loopback; "
	fi
	echo \
		"dsload $HOSTS host(s) (a connection each), 1 VMDK of $VMDK each," \
		"depth $DEPTH, ${SECS} s a run;" \
		"load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	python3 - "$TMP/dsnfsd" "$TMP/ganesha" "$TMP/rados" "$TMP/base" \
		"$TMP/libcephfs" <<'PY'
import statistics, sys
def load(p):
    """corner -> [(MiB/s, IOPS)], a pair per run, in order."""
    d = {}
    for line in open(p):
        f = line.split()
        # a run with errors or mismatches counts as nothing
        d.setdefault(f[0], []).append(
            (0.0, 0.0) if len(f) > 3 else (float(f[1]), float(f[2])))
    return d
def med(runs, i):
    return statistics.median(r[i] for r in runs) if runs else 0.0
def spread(a, b, i):
    """The ratios of a's and b's runs taken in turn: "lo-hi", or ""."""
    rs = [x[i] / y[i] for x, y in zip(a, b) if y[i]]
    return "%.2f-%.2f" % (min(rs), max(rs)) if len(rs) > 1 else ""
d, g, r, b, f = (load(p) for p in sys.argv[1:6])
rounds = max([len(v) for t in (d, g, b, f) for v in t.values()] or [1])
if rounds > 1:
    print("medians of %d runs a server; \"runs\": the ratios of the runs "
          "taken in turn" % rounds)
print("%-16s %10s %10s %10s %8s %12s %8s" % ("corner", "dsnfsd", "ganesha",
      "rados", "d/g", "d/rados", "unit") +
      ("%12s" % "d/g runs" if rounds > 1 else "") +
      ("%10s %8s %8s" % ("base", "base/g", "d/base") if b else "") +
      ("%12s" % "d/base runs" if b and rounds > 1 else "") +
      ("%10s %8s" % ("libcephfs", "d/lib") if f else ""))
for k in ["seq-read", "seq-write", "rand-read", "rand-write",
          "file-sync-write", "file-sync-rand"]:
    big = k.startswith("seq") or k == "file-sync-write"
    i = 0 if big else 1
    unit = "MiB/s" if big else "IOPS"
    dr, gr, br = d.get(k, []), g.get(k, []), b.get(k, [])
    dv, gv = med(dr, i), med(gr, i)
    rv = med(r[k], i) if k in r else None
    ratio = "%.2f" % (dv / gv) if gv else "-"
    rr = "%.2f" % (dv / rv) if rv else "-"
    line = "%-16s %10.1f %10.1f %10s %8s %12s %8s" % (k, dv, gv,
           "%.1f" % rv if rv is not None else "-", ratio, rr, unit)
    if rounds > 1:
        line += "%12s" % spread(dr, gr, i)
    if b:
        bv = med(br, i)
        line += "%10.1f %8s %8s" % (bv, "%.2f" % (bv / gv) if gv else "-",
                                    "%.2f" % (dv / bv) if bv else "-")
        if rounds > 1:
            line += "%12s" % spread(dr, br, i)
    if f:
        fv = med(f.get(k, []), i)
        line += "%10.1f %8s" % (fv, "%.2f" % (dv / fv) if fv else "-")
    print(line)
PY
	awk -v d="$DEPTH" '/^object-write/ { w = $2 } /^object-read/ { r = $2 }
		END { if (w != "") printf "\nrados bench, 4 MiB objects (CephFS'"'"'s), " \
			"%d in flight: write %s MiB/s, read %s MiB/s (its last " \
			"round)\n", d, w, r }' "$TMP/rados"
	echo
	echo "CPU per I/O, microseconds (user + system, every thread);"
	echo "bound: the I/Os a second the CPUs would give if the server cost"
	echo "nothing (CPUs / the others' CPU per I/O); rate/bound: how near"
	echo "the server came to that:"
	python3 - "$(nproc)" "$TMP"/{dsnfsd,base,ganesha,libcephfs}{.cpu,} <<'PY'
import statistics, sys
def load(p):
    """corner -> the median of each column over its runs."""
    runs = {}
    for line in open(p):
        f = line.split()
        if len(f) == 6:
            runs.setdefault(f[0], []).append([int(x) for x in f[1:]])
    return {k: [int(statistics.median(c)) for c in zip(*v)]
            for k, v in runs.items()}
def iops(p):
    """corner -> the median IOPS of its runs (failed runs left out)."""
    runs = {}
    for line in open(p):
        f = line.split()
        if len(f) == 3:
            runs.setdefault(f[0], []).append(float(f[2]))
    return {k: statistics.median(v) for k, v in runs.items()}
cpus = int(sys.argv[1])
servers = [(name, load(sys.argv[2 + 2 * i]), iops(sys.argv[3 + 2 * i]))
           for i, name in enumerate(("dsnfsd", "base", "ganesha",
                                     "libcephfs"))]
cols = ("server", "osd", "mds", "mon", "client")
print("%-16s %-9s" % ("corner", "server") +
      "".join("%9s" % c for c in cols) + "%9s %9s %11s" % (
          "total", "bound", "rate/bound"))
for k in dict.fromkeys(k for _, t, _ in servers for k in t):
    for name, t, rate in servers:
        if k in t:
            v = t[k]
            others = sum(v) - v[0]
            bound = cpus * 1e6 / others if others else 0
            near = "%.2f" % (rate[k] / bound) if bound and k in rate else "-"
            print("%-16s %-9s" % (k, name) + "".join("%9d" % x for x in v) +
                  "%9d %9.0f %11s" % (sum(v), bound, near))
PY
	echo
	echo "What reached the OSDs per I/O (their perf counters):"
	awk 'BEGIN { printf "%-16s %-9s %9s %9s %9s %9s %9s\n", "corner",
		"server", "writes", "KiB/w", "reads", "KiB/r", "deferred" }
	     NF == 7 { printf "%-16s %-9s %9s %9s %9s %9s %9s\n", $1, $2, $3,
		$4, $5, $6, $7 }' "$TMP/osdops.all"
	if [ "$PERF" = 1 ]; then
		for f in "$TMP"/perf-*.data; do
			[ -s "$f" ] || continue
			echo
			echo "top functions, $(basename "$f" .data) (perf report --no-children):"
			perf report -q -i "$f" --no-children --sort dso,symbol \
				--percent-limit 2 -g none 2>/dev/null | head -20
			# kept for `perf report -g caller` after the run
			cp "$f" "$OUT/$(basename "$f" .data)-$STAMP.data"
		done
	fi
} | tee "$TABLE"
echo "table: $TABLE" >&2
