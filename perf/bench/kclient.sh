#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/kclient.sh [BUILD_DIR]: the Linux kernel client (the kclient
# guest, tests/kclient) running fio against dsnfsd with its intent log,
# dsnfsd without it, and nfs-ganesha, side by side in one run.  `make
# bench-kclient` runs it.  Needs root.  docs/bench.md ("The kernel client")
# says what it measures and what it cannot.
#
# One run of a mode: a fresh server (ganesha: one for the whole run) in a
# network namespace of its own, the guest booted in the same namespace (its
# guestfwd relays reach the server on the namespace's 127.0.0.1), fio
# randrw 8 KiB with O_DIRECT in the guest; then the server's CPU time, the
# client's COMMITs per WRITE (its mountstats: near 0 when its writes go
# FILE_SYNC, as O_DIRECT ones mostly do) and, with the intent log, its
# flushes per logged write (/metrics).  Modes alternate: ilog, off,
# ganesha, ilog, off, ganesha ...
#
# Environment (defaults in brackets):
#   BENCH_KC_MODES     [ilog off ganesha]
#   BENCH_KC_REPS      [2]     runs per mode, alternated
#   BENCH_KC_SECONDS   [20]    fio's measured time (after a 3 s ramp)
#   BENCH_KC_SIZE      [64m]   fio's file
#   BENCH_KC_DEPTH     [16]    fio's iodepth (libaio)
#   BENCH_KC_RWMIX     [50]    percent reads
#   BENCH_OUT          [BUILD_DIR/bench] where kclient-*.tsv goes
#   BENCH_KEEP_TMP     [0]     1 keeps the scratch directory
set -u
cd "$(dirname "$0")/../.." || exit 1
. perf/bench/lib.sh

BUILD=${1:-build}
DSNFSD=$BUILD/bin/dsnfsd
MODES=${BENCH_KC_MODES:-ilog off ganesha}
REPS=${BENCH_KC_REPS:-2}
RUNTIME=${BENCH_KC_SECONDS:-20}
SIZE=${BENCH_KC_SIZE:-64m}
DEPTH=${BENCH_KC_DEPTH:-16}
RWMIX=${BENCH_KC_RWMIX:-50}
OUT=${BENCH_OUT:-$BUILD/bench}
case " $MODES " in
*" ganesha "*) WITH_GANESHA=1 ;;
*) WITH_GANESHA=0 ;;
esac

if [ "${BENCH_IN_MOUNT_NS:-0}" != 1 ]; then
	[ "$(id -u)" = 0 ] || bench_die "needs root (namespaces)"
	[ -x "$DSNFSD" ] || bench_die "no $DSNFSD: make BUILD=$BUILD"
	tests/kclient/build.sh >/dev/null || bench_die "cannot build the guest"
	[ $WITH_GANESHA = 0 ] ||
		bench_install_packages nfs-ganesha nfs-ganesha-vfs rpcbind
	bench_enter_mount_ns "$0" "$@"
fi
bench_private_run
BENCH_TMP=$(mktemp -d "${BENCH_DIR:-/tmp}/dsnfs-kclient.XXXXXX") ||
	bench_die "cannot make a scratch directory"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$OUT"
TSV=$OUT/kclient-$(date +%Y%m%dT%H%M%S).tsv
printf 'mode\trep\tread_iops\twrite_iops\twrite_p99_ms\tserver_cpu_us_per_op\tcommits_per_write\tflushes_per_log_write\n' >"$TSV"

bench_ns_new NS_D
if [ $WITH_GANESHA = 1 ]; then
	bench_ns_new NS_G
	mkdir -p "$BENCH_TMP/g-export"
	bench_start_ganesha "$NS_G" "$BENCH_TMP/g-export"
fi

# What the guest runs in the mounted export: fio's JSON between two
# markers, so that the console's other lines do not matter.
cat >"$BENCH_TMP/fio.sh" <<EOF
/tools/bin/fio --name=kc --filename=kc.dat --size=$SIZE --bs=8k \\
	--rw=randrw --rwmixread=$RWMIX --direct=1 --ioengine=libaio \\
	--iodepth=$DEPTH --ramp_time=3 --runtime=$RUNTIME --time_based \\
	--output-format=json >/tmp/fio.json 2>/tmp/fio.err || {
	cat /tmp/fio.err; exit 1; }
echo KC_FIO_BEGIN
cat /tmp/fio.json
echo KC_FIO_END
echo KC_STATS_BEGIN
cat /proc/self/mountstats
echo KC_STATS_END
EOF

# Flushes per logged write of dsnfsd's intent log over the run, from its
# /metrics on a port of the namespace; "-" without the log.
log_flushes_per_write() {
	bench_in_ns "$1" python3 - "$BENCH_TMP/dsnfsd-state/admin.token" <<'PY'
import re, sys, urllib.request
try:
    token = open(sys.argv[1]).read().strip()
    req = urllib.request.Request("http://127.0.0.1:28080/metrics",
                                 headers={"Authorization": "Bearer " + token})
    text = urllib.request.urlopen(req, timeout=5).read().decode()
except OSError:
    text = ""
def total(name):
    return sum(int(v) for v in re.findall(
        r"^%s(?:\{[^}]*\})? (\d+)$" % name, text, re.M))
records = total("dsnfs_intent_log_records_total")
flushes = total("dsnfs_intent_log_flushes_total")
print("%.3f" % (flushes / records) if records else "-")
PY
}

# kc_run MODE REP: one server run, one guest; a row of the TSV.
kc_run() {
	local mode=$1 rep=$2 ns=$NS_D spid t0 t1 conf=$BENCH_TMP/dsnfsd.conf
	local flushes=-
	if [ "$mode" = ganesha ]; then
		ns=$NS_G
		spid=$GANESHA_PID
		rm -f "$BENCH_TMP/g-export/kc.dat"
	else
		rm -rf "$BENCH_TMP/ds" "$BENCH_TMP/dsnfsd-state" \
			"$BENCH_TMP/intent.log"
		mkdir -p "$BENCH_TMP/ds"
		printf '[server]\nadmin_port = 28080\n' >"$conf"
		[ "$mode" = ilog ] &&
			echo "intent_log = $BENCH_TMP/intent.log" >>"$conf"
		bench_start_dsnfsd_as dsnfsd "$NS_D" "$BENCH_TMP/ds" "$conf" \
			"$DSNFSD"
		spid=$BENCH_BG_PID
	fi
	t0=$(bench_cpu_ticks "$spid")
	bench_in_ns "$ns" env KCLIENT_TIMEOUT=$((RUNTIME + 240)) \
		tests/kclient/run-guest.sh 2049 20048 /bench \
		"@$BENCH_TMP/fio.sh" >"$BENCH_TMP/guest.out" 2>&1 ||
		bench_die "$mode: the guest failed: $(tail -5 "$BENCH_TMP/guest.out")"
	t1=$(bench_cpu_ticks "$spid")
	if [ "$mode" != ganesha ]; then
		flushes=$(log_flushes_per_write "$ns")
		bench_stop_pid "$spid"
	fi
	python3 - "$BENCH_TMP/guest.out" "$mode" "$rep" "$((t1 - t0))" \
		"$(getconf CLK_TCK)" "$flushes" "$TSV" <<'PY'
import json, re, sys
out, mode, rep, ticks, hz, flushes, tsv = sys.argv[1:]
text = open(out, errors="replace").read()
body = text.split("KC_FIO_BEGIN", 1)[1].split("KC_FIO_END", 1)[0]
job = json.loads(body[body.index("{"):])["jobs"][0]
stats = text.split("KC_STATS_BEGIN", 1)[1].split("KC_STATS_END", 1)[0]
def ops(name):
    m = re.search(r"^\s*%s:\s+(\d+)" % name, stats, re.M)
    return int(m.group(1)) if m else 0
commits = "%.3f" % (ops("COMMIT") / ops("WRITE")) if ops("WRITE") else "-"
r, w = job["read"], job["write"]
ops = (r["total_ios"] + w["total_ios"]) or 1
p99 = w["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1e6
# Server CPU over the whole guest run (layout and ramp included) per
# measured op: an upper bound, the same for every mode.
cpu_us = int(ticks) / int(hz) * 1e6 / ops
row = [mode, rep, "%.0f" % r["iops"], "%.0f" % w["iops"], "%.2f" % p99,
       "%.0f" % cpu_us, commits, flushes]
open(tsv, "a").write("\t".join(row) + "\n")
print("  %-8s rep %s: read %6.0f  write %6.0f IOPS  write p99 %6.2f ms"
      "  server CPU %4.0f us/op  COMMIT/WRITE %s  log flushes/write %s" % (
          mode, rep, r["iops"], w["iops"], p99, cpu_us, commits, flushes))
PY
}

echo "== the kernel client (kclient guest, TCG), fio randrw 8 KiB" \
	"O_DIRECT, ${RWMIX}% reads, depth $DEPTH, ${RUNTIME} s; modes: $MODES"
for rep in $(seq 1 "$REPS"); do
	for mode in $MODES; do
		kc_run "$mode" "$rep"
	done
done

python3 - "$TSV" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
by = {}
for m, _, rd, wr, p99, cpu, _, _ in rows:
    by.setdefault(m, []).append((float(rd), float(wr), float(p99),
                                 float(cpu)))
def mean(m, k):
    v = [x[k] for x in by.get(m, [])]
    return sum(v) / len(v) if v else None
print("\nmeans          read IOPS  write IOPS  write p99 ms  server CPU us/op")
for m in by:
    print("  %-10s %10.0f %11.0f %13.2f %17.0f" % (
        m, mean(m, 0), mean(m, 1), mean(m, 2), mean(m, 3)))
for a, b in (("ilog", "ganesha"), ("off", "ganesha"), ("ilog", "off")):
    if a in by and b in by:
        print("  %s/%s: read %.2fx, write %.2fx" % (
            a, b, mean(a, 0) / mean(b, 0), mean(a, 1) / mean(b, 1)))
print("\n(%s)" % sys.argv[1])
PY
