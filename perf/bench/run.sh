#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/run.sh [BUILD_DIR]: dsnfsd against nfs-ganesha, side by side,
# on loopback, with the same clients and the same data; the loopback
# ceiling measured in the same run.  `make bench` runs it.  Needs root.
# docs/bench.md says what it does and what each column means.
#
# Environment (defaults in brackets):
#   BENCH_SECONDS  [3]    length of one measured run
#   BENCH_REPS     [2]    measured runs per server and cell, alternated
#                         dsnfsd, ganesha, dsnfsd, ganesha ...
#   BENCH_FLOWS    [1 4 16]
#   BENCH_FILE_MIB [1024] size of the test file (a power of two)
#   BENCH_DIR      [/tmp] where the scratch directory is made
#   BENCH_OUT      [BUILD_DIR/bench] where results-*.tsv and table-*.txt go
#   BENCH_DSLOAD   [auto] 0 skips dsload even when BUILD_DIR/bin/dsload exists
#   BENCH_KEEP_TMP [0]    1 keeps the scratch directory (server logs)
#   BENCH_NICE     []     e.g. -10: run everything (servers and clients)
#                         at that nice level, on a machine others load
#   BENCH_CORNERS  [seq-read seq-write rand-read rand-write] the corners
#                         of qemu-img and dsload to run
#   BENCH_NULL     [1]    0 skips the RPC NULL rows
#   BENCH_DSNFSD_VARIANTS ["KEY=VALUE ..."] compare dsnfsd with dsnfsd
#                         instead of Ganesha: the second server ("variant",
#                         the g columns) is the same dsnfsd with these
#                         [server] keys, e.g. "read_zero_copy=false"
#   BENCH_PEER     []     a BUILD_DIR whose dsnfsd runs in Ganesha's place
#                         (the g columns): two dsnfsd builds side by side,
#                         d/g = this build / the peer build (run it both
#                         ways round: the first slot is favoured)
set -u
cd "$(dirname "$0")/../.." || exit 1
. perf/bench/lib.sh

BUILD=${1:-build}
SECONDS_RUN=${BENCH_SECONDS:-3}
REPS=${BENCH_REPS:-2}
FLOWS=${BENCH_FLOWS:-1 4 16}
FILE_MIB=${BENCH_FILE_MIB:-1024}
OUT=${BENCH_OUT:-$BUILD/bench}
DSNFSD=$BUILD/bin/dsnfsd
DSLOAD=$BUILD/bin/dsload
PEER=${BENCH_PEER:-}
RPCPING=$BUILD/bench/rpcping
URL=nfs://127.0.0.1/bench/disk.raw
CORNERS_WANTED=${BENCH_CORNERS:-seq-read seq-write rand-read rand-write}
VARIANT=${BENCH_DSNFSD_VARIANTS:-}
[ -n "$VARIANT" ] && [ -n "$PEER" ] &&
	bench_die "BENCH_DSNFSD_VARIANTS and BENCH_PEER: one at a time"
if [ -n "$VARIANT" ]; then
	SRV_B=variant
	export BENCH_B_LABEL="dsnfsd with $VARIANT"
elif [ -n "$PEER" ]; then
	SRV_B=variant
	export BENCH_B_LABEL="the peer dsnfsd build of BENCH_PEER"
else
	SRV_B=ganesha
fi
SERVERS="dsnfsd $SRV_B"

# corner_wanted CORNER: whether BENCH_CORNERS names it.
corner_wanted() {
	case " $CORNERS_WANTED " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

if [ "${BENCH_IN_MOUNT_NS:-0}" != 1 ]; then
	[ "$(id -u)" = 0 ] || bench_die "needs root (namespaces, apt-get)"
	[ -x "$DSNFSD" ] || bench_die "no $DSNFSD: make BUILD=$BUILD $DSNFSD"
	[ -z "$PEER" ] || [ -x "$PEER/bin/dsnfsd" ] ||
		bench_die "no $PEER/bin/dsnfsd (BENCH_PEER)"
	[ $((FILE_MIB & (FILE_MIB - 1))) = 0 ] ||
		bench_die "BENCH_FILE_MIB must be a power of two"
	bench_install_packages nfs-ganesha nfs-ganesha-vfs rpcbind iperf3 \
		qemu-utils qemu-block-extra python3
	bench_build_rpcping "$BUILD"
	mkdir -p "$OUT"
	bench_enter_mount_ns "$0" "$@"
fi

bench_private_run
BENCH_TMP=$(mktemp -d "${BENCH_DIR:-/tmp}/dsnfs-bench.XXXXXX") ||
	bench_die "cannot make a scratch directory"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

STAMP=$(date -u +%Y%m%d-%H%M%S)
TSV=$OUT/results-$STAMP.tsv
TABLE=$OUT/table-$STAMP.txt
T_START=$(date +%s)
printf 'kind\tcorner\tflows\tserver\trep\tops\tbytes\tseconds\tcpu_ticks\tp99_us\n' >"$TSV"

# ---- data: one file, two identical copies ---------------------------------
# Both copies are made the same way (cp of a scratch file) and on disk
# before the first run: a file written by dd while urandom trickles in and
# a cp of it lie differently on disk, and dirty pages would be written back
# during whichever server runs first (measured: 8 KiB random writes at 16
# flows ran at 0.38x in the first slot, whichever build was in it).
mkdir -p "$BENCH_TMP/dsnfsd-export" "$BENCH_TMP/ganesha-export"
dd if=/dev/urandom of="$BENCH_TMP/disk.src" bs=1M count="$FILE_MIB" \
	status=none || bench_die "cannot write the test file"
for d in dsnfsd-export ganesha-export; do
	cp --sparse=never "$BENCH_TMP/disk.src" "$BENCH_TMP/$d/disk.raw" ||
		bench_die "cannot copy it"
done
rm -f "$BENCH_TMP/disk.src"
sync -f "$BENCH_TMP/dsnfsd-export/disk.raw"

# ---- three loopback-only network namespaces --------------------------------
# qemu-img finds a server only through the portmapper on port 111, and one
# portmapper maps NFS v3 over TCP to one port; so each server gets its own
# namespace (and portmapper), and the clients run in one or the other.
bench_ns_new NS_DSNFSD
bench_ns_new NS_GANESHA
bench_ns_new NS_CEIL
bench_start_dsnfsd "$NS_DSNFSD" "$BENCH_TMP/dsnfsd-export" "$DSNFSD"
if [ -n "$VARIANT" ]; then
	# The variant: the same binary, its own copy of the file, in the
	# namespace Ganesha would have, with the [server] keys given.
	echo "[server]" >"$BENCH_TMP/variant.conf"
	for kv in $VARIANT; do
		echo "${kv%%=*} = ${kv#*=}" >>"$BENCH_TMP/variant.conf"
	done
	bench_start_dsnfsd_as variant "$NS_GANESHA" \
		"$BENCH_TMP/ganesha-export" "$BENCH_TMP/variant.conf" "$DSNFSD"
	VARIANT_PID=$BENCH_BG_PID
elif [ -n "$PEER" ]; then
	# The peer build answers in the g columns, as Ganesha would.
	bench_start_dsnfsd_as peer "$NS_GANESHA" \
		"$BENCH_TMP/ganesha-export" "" "$PEER/bin/dsnfsd"
	VARIANT_PID=$BENCH_BG_PID
else
	bench_start_ganesha "$NS_GANESHA" "$BENCH_TMP/ganesha-export"
fi

ns_of() {
	case $1 in
	dsnfsd) echo "$NS_DSNFSD" ;;
	ganesha | variant) echo "$NS_GANESHA" ;;
	esac
}

pid_of() {
	case $1 in
	dsnfsd) echo "$DSNFSD_PID" ;;
	ganesha) echo "$GANESHA_PID" ;;
	variant) echo "$VARIANT_PID" ;;
	esac
}

record() {
	local IFS=$'\t'
	echo "$*" >>"$TSV"
}

# CPU pressure (PSI): the share of the last 60 s in which a runnable task
# waited for a CPU; well above what the benchmark makes itself means other
# work competed for the machine.
psi_cpu() {
	awk '/^some/ { sub("avg60=", "", $3); print "CPU pressure " $3 "% (avg60)" }' \
		/proc/pressure/cpu 2>/dev/null
}

HOST_CPU=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
{
echo "dsnfs bench $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPU ($HOST_CPU)," \
	"$(free -g | awk '/^Mem:/ { print $2 }') GiB, Linux $(uname -r)"
REV=$(git rev-parse --short HEAD 2>/dev/null)
git status --porcelain nfsd 2>/dev/null | grep -q . && REV="$REV+uncommitted"
if [ -n "$VARIANT" ]; then
	SERVER_B="against itself with [server] $VARIANT (the g columns)"
elif [ -n "$PEER" ]; then
	SERVER_B="g = the peer dsnfsd $PEER/bin/dsnfsd (built $(date -u \
		-r "$PEER/bin/dsnfsd" '+%H:%M UTC')), not Ganesha"
else
	SERVER_B="nfs-ganesha $(dpkg-query -W -f '${Version}' nfs-ganesha) FSAL VFS"
fi
echo "dsnfsd $REV ($DSNFSD built $(date -u -r "$DSNFSD" '+%H:%M UTC'))," \
	"$SERVER_B," \
	"$(qemu-img --version | head -1)," \
	"libnfs $(dpkg-query -W -f '${Version}' libnfs13 2>/dev/null || echo '?')"
echo "file ${FILE_MIB} MiB on $(df --output=fstype "$BENCH_TMP" | tail -1)" \
	"($BENCH_TMP), runs of ${SECONDS_RUN} s, ${REPS} per server, flows: $FLOWS," \
	"nice $(nice)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(psi_cpu)" \
	"(other work on the machine shares its CPUs with the benchmark)"
echo
} | tee "$TABLE"

# ---- the ceiling -----------------------------------------------------------
echo "ceiling: TCP stream (iperf3) and RPC NULL round trips (rpcping)" >&2
bench_bg iperf3 "$NS_CEIL" iperf3 -s -B 127.0.0.1 -p 5201 --forceflush
bench_wait_line "$BENCH_TMP/iperf3.out" 'Server listening' "$BENCH_BG_PID" ||
	bench_die "iperf3 -s did not start"
bench_bg rpcping "$NS_CEIL" "$RPCPING" serve 127.0.0.1 7000
bench_wait_line "$BENCH_TMP/rpcping.out" 'listening' "$BENCH_BG_PID" ||
	bench_die "rpcping serve did not start"
# rpcping_record KIND CORNER FLOWS SERVER REP NS PORT CONNS DEPTH SECONDS
# [PID]: one rpcping call run, recorded (with the server's CPU with PID).
rpcping_record() {
	local kind=$1 corner=$2 flows=$3 srv=$4 rep=$5 ns=$6 port=$7
	local conns=$8 depth=$9 secs=${10} pid=${11:-} t0=0 t1=0 line calls p99
	[ -n "$pid" ] && t0=$(bench_cpu_ticks "$pid")
	line=$(bench_in_ns "$ns" "$RPCPING" call 127.0.0.1 "$port" 100003 3 \
		"$conns" "$depth" "$secs")
	[ -n "$pid" ] && t1=$(bench_cpu_ticks "$pid")
	calls=$(echo "$line" | sed -n 's/.*calls=\([0-9]*\).*/\1/p')
	secs=$(echo "$line" | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p')
	p99=$(echo "$line" | sed -n 's/.*p99_us=\([0-9.]*\).*/\1/p')
	record "$kind" "$corner" "$flows" "$srv" "$rep" "${calls:-0}" 0 \
		"${secs:-0}" $((t1 - t0)) "${p99:--}"
}

# ceiling_measure REP: the TCP stream and RPC NULL ceilings at each flow
# count.  Measured at the start and again at the end of the run; the table
# takes the higher (other work on the machine only ever lowers them).
ceiling_measure() {
	local rep=$1 f bytes secs
	for f in $FLOWS; do
		read -r bytes secs < <(bench_in_ns "$NS_CEIL" iperf3 \
			-c 127.0.0.1 -p 5201 -l 64K -P "$f" -t 2 -J |
			python3 -c 'import json,sys
s = json.load(sys.stdin)["end"]["sum_received"]
print(s["bytes"], s["seconds"])')
		record ceiling tcp-stream "$f" loopback "$rep" 0 \
			"${bytes:-0}" "${secs:-0}" 0 -
		# One connection with F calls in flight, as qemu-img's -d F.
		rpcping_record ceiling rpc-null-depth "$f" loopback "$rep" \
			"$NS_CEIL" 7000 1 "$f" 2
		# F connections with one call in flight each: F dsload flows.
		rpcping_record ceiling rpc-null-conns "$f" loopback "$rep" \
			"$NS_CEIL" 7000 "$f" 1 2
	done
}
ceiling_measure 1

# ---- RPC NULL against each server ------------------------------------------
echo "RPC NULL against each server" >&2
[ "${BENCH_NULL:-1}" = 0 ] || for f in $FLOWS; do
	for rep in $(seq 1 "$REPS"); do
		for srv in $SERVERS; do
			rpcping_record rpc NULL "$f" $srv "$rep" \
				"$(ns_of $srv)" 2049 1 "$f" 2 "$(pid_of $srv)"
		done
	done
done

# ---- qemu-img bench over nfs:// --------------------------------------------
# Random corners: qemu-img bench only steps (offset += step, modulo the
# file size), so a step of an odd number of 8 KiB blocks near 0.618 of the
# file (the file has a power-of-two number of blocks) visits every block
# once per pass, consecutive requests ~0.62 of the file apart, in the same
# order on both servers.
BLOCKS8K=$((FILE_MIB * 128))
SCATTER=$((BLOCKS8K * 618 / 1000 | 1))

# qemu_run SERVER COUNT DEPTH SIZE WRITE STEP -> "seconds ticks" or "fail"
qemu_run() {
	local srv=$1 count=$2 depth=$3 size=$4 write=$5 step=$6
	local pid t0 t1 out secs
	local args=(-f raw -c "$count" -d "$depth" -s "$size" -S "$step")
	[ "$write" = 1 ] && args+=(-w --pattern=165)
	pid=$(pid_of "$srv")
	t0=$(bench_cpu_ticks "$pid")
	out=$(bench_in_ns "$(ns_of "$srv")" qemu-img bench "${args[@]}" \
		"$URL" 2>&1)
	t1=$(bench_cpu_ticks "$pid")
	secs=$(echo "$out" | sed -n 's/^Run completed in \([0-9.]*\) seconds.*/\1/p')
	if [ -z "$secs" ]; then
		echo "bench: $srv: qemu-img bench ${args[*]}: $out" >&2
		echo fail
		return
	fi
	echo "$secs $((t1 - t0))"
}

CORNERS="seq-read:65536:0:65536 seq-write:65536:1:65536 \
rand-read:8192:0:$((SCATTER * 8192)) rand-write:8192:1:$((SCATTER * 8192))"

for c in $CORNERS; do
	IFS=: read -r corner size write step <<<"$c"
	corner_wanted "$corner" || continue
	for f in $FLOWS; do
		echo "qemu-img bench $corner depth $f" >&2
		# Warm-up, one per server; it also sizes the measured runs so
		# that each lasts about BENCH_SECONDS (same count on both).
		rates=()
		for srv in $SERVERS; do
			r=$(qemu_run $srv 2000 "$f" "$size" "$write" "$step")
			if [ "$r" = fail ]; then
				rates+=(0)
			else
				rates+=("$(echo "$r" | awk '{ print ($1 > 0) ? 2000 / $1 : 0 }')")
			fi
		done
		count=$(python3 -c "import math,sys
a, b, s = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
r = math.sqrt(a * b) if a > 0 and b > 0 else max(a, b)
print(int(min(max(r * s, 1000), 5000000)))" "${rates[0]}" "${rates[1]}" \
			"$SECONDS_RUN")
		for rep in $(seq 1 "$REPS"); do
			for srv in $SERVERS; do
				r=$(qemu_run $srv "$count" "$f" "$size" \
					"$write" "$step")
				if [ "$r" = fail ]; then
					record qemu "$corner" "$f" $srv "$rep" \
						0 0 0 0 -
					continue
				fi
				read -r secs ticks <<<"$r"
				record qemu "$corner" "$f" $srv "$rep" "$count" \
					$((count * size)) "$secs" "$ticks" -
			done
		done
	done
done

# ---- dsload, caps off ------------------------------------------------------
if [ "${BENCH_DSLOAD:-auto}" != 0 ] && [ -x "$DSLOAD" ]; then
	. perf/bench/dsload.sh
	bench_dsload_all
fi

echo "ceiling again" >&2
ceiling_measure 2
T_END=$(date +%s)
python3 perf/bench/table.py "$TSV" | tee -a "$TABLE"
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); $(psi_cpu);" \
	"total $((T_END - T_START)) s" | tee -a "$TABLE"
echo "raw results $TSV, table $TABLE"
