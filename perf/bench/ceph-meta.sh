#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/ceph-meta.sh [BUILD_DIR]: metadata rates of a cephfs datastore,
# dsnfsd against nfs-ganesha FSAL_CEPH on one one-node cluster, one after
# the other (perf/bench/ceph-lib.sh: the cluster, the servers, the network
# namespace; needs root): SETATTRs of the size (each ends with
# ceph_ll_sync_inode in dsnfsd: stable when answered, docs/ceph-rlog.md)
# and CREATEs, by perf/bench/metaload.py; ops/s, the ratio dsnfsd/ganesha
# and CPU per op (microseconds: server, OSDs, MDS, MON).  docs/bench.md,
# "Metadata on CephFS".
#
# Environment (defaults in brackets):
#   BENCH_SECONDS [10]   measured seconds of one run (after a 1 s ramp)
#   BENCH_CONNS   [4]    connections
#   BENCH_DEPTH   [8]    calls in flight on each
#   BENCH_OPS     [setattr create]
#   BENCH_SERVERS [dsnfsd ganesha] in this order ("base": BENCH_BASE's)
#   BENCH_BASE           another build dir, its dsnfsd as server "base"
#   BENCH_DSNFSD_CONF, BENCH_DSNFSD_DS, BENCH_DSNFSD_CEPH, CEPH_OSDS:
#                        as perf/bench/ceph.sh
#   BENCH_OUT     [BUILD_DIR/bench] where ceph-meta-STAMP.txt goes
set -u
cd "$(dirname "$0")/../.." || exit 1
. perf/bench/ceph-lib.sh
BUILD=${1:-build}
bench_ceph_netns "$@"

SECS=${BENCH_SECONDS:-10}
CONNS=${BENCH_CONNS:-4}
DEPTH=${BENCH_DEPTH:-8}
OPS=${BENCH_OPS:-setattr create}
SERVERS=${BENCH_SERVERS:-dsnfsd ganesha}
OUT=${BENCH_OUT:-$BUILD/bench}
mkdir -p "$OUT"
TABLE=$OUT/ceph-meta-$(date -u +%Y%m%d-%H%M%S).txt
bench_ceph_start || exit 1
: >"$TMP/rates"

# server: each op's "server op ops/s errors client-% us-per-op(server osd
# mds mon)" into $TMP/rates.
measure() {
	local server=$1 op pids before after line
	for op in $OPS; do
		# shellcheck disable=SC2207
		pids=($(cpu_pids))
		before=$(cpu_ticks "${pids[@]}")
		line=$(python3 perf/bench/metaload.py "$op" "$SECS" "$CONNS" \
			"$DEPTH") || line="$op 0 -1 0"
		after=$(cpu_ticks "${pids[@]}")
		echo "$server $line $(python3 -c '
import sys
b, a = sys.argv[1].split(), sys.argv[2].split()
n = float(sys.argv[3]) * (float(sys.argv[4]) + 1)  # the ramp: 1 s
hz = float(sys.argv[5])
print(" ".join("%.0f" % ((int(y) - int(x)) / hz * 1e6 / n if n else 0)
               for x, y in zip(b, a)))' "$before" "$after" \
			"$(echo "$line" | cut -d' ' -f2)" "$SECS" \
			"$(getconf CLK_TCK)")" | tee -a "$TMP/rates" >&2
	done
}

for s in $SERVERS; do
	case $s in
	dsnfsd) bench_dsnfsd_up dsnfsd "$BUILD/bin/dsnfsd" || exit 1 ;;
	base)
		[ -n "${BENCH_BASE:-}" ] || {
			echo "bench-ceph-meta: base needs BENCH_BASE" >&2
			exit 1
		}
		bench_dsnfsd_up base "$BENCH_BASE/bin/dsnfsd" || exit 1
		;;
	ganesha) bench_ganesha_up || exit 1 ;;
	*) continue ;;
	esac
	measure "$s"
	bench_server_down
done

{
	echo "dsnfs bench-ceph-meta $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPU," \
		"ceph $(dpkg-query -W -f '${Version}' ceph-osd)," \
		"nfs-ganesha $(dpkg-query -W -f '${Version}' nfs-ganesha-ceph);" \
		"$CONNS connections x $DEPTH in flight, ${SECS} s a run;" \
		"load average $(cut -d' ' -f1-3 /proc/loadavg)"
	python3 - "$TMP/rates" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows[(f[0], f[1])] = f[2:]
servers = list(dict.fromkeys(s for s, _ in rows))
ops = list(dict.fromkeys(o for _, o in rows))
print("%-8s" % "op" + "".join("%10s" % s for s in servers) +
      ("%12s" % "dsnfsd/g" if "ganesha" in servers else "") +
      "   ops/s (errors; client CPU %; us/op server osd mds mon)")
for op in ops:
    v = {s: float(rows[(s, op)][0]) for s in servers if (s, op) in rows}
    line = "%-8s" % op + "".join("%10.0f" % v.get(s, 0) for s in servers)
    if "ganesha" in servers:
        g, d = v.get("ganesha", 0), v.get("dsnfsd", 0)
        line += "%12s" % ("%.2f" % (d / g) if g else "-")
    print(line)
    for s in servers:
        if (s, op) in rows:
            r = rows[(s, op)]
            print("    %-8s errors %s, client %s%%, us/op %s" % (
                s, r[1], r[2], " ".join(r[3:])))
PY
} | tee "$TABLE"
echo "table: $TABLE" >&2
