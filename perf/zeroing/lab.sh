#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# perf/zeroing/lab.sh [BIN_DIR] - `make lab-zeroing`: the thin versus thick
# experiment of docs/published.md section 2 through NFS.  A thin, a lazy-zeroed
# (zeroedthick) and an eager-zeroed (eagerzeroedthick) disk of LAB_ZERO_MIB
# (default 1024) are written sequentially by a client over NFS (qemu-io on
# nfs://, LAB_ZERO_REQ_KIB per request, default 1024 as ESXi 7 sends them,
# one at a time, then a flush), twice: the first pass is the zeroing phase
# (every 1 MiB block is written for the first time), the second the
# post-zeroing phase.  Each disk is made and written LAB_ZERO_REPS times
# (default 3); the table shows the medians.
#
# Datastore vmfs has zero_on_first_write: dsnfsd zeroes a block, durably,
# on its first write, as VMFS does for thin and lazy-zeroed disks.  Datastore
# plain has it off, to show what the local file system alone does (a hole
# or an unwritten extent costs almost nothing to fill).  Beside them, the
# disk's own ceiling: the same writes by dd to a local file already written
# (no allocation, no NFS).  Prints a table, writes var/lab/zeroing/
# zeroing.tsv and zeroing.png (gnuplot).  Runs in a network namespace of
# its own (qemu-io asks the portmapper on port 111), on the file system of
# $LAB_DIR (default a new directory in /var/tmp).  Root for the namespace.
set -eu
if [ -z "${DSNFS_NETNS:-}" ] && unshare -n true 2>/dev/null; then
	DSNFS_NETNS=1 exec unshare -n bash "$0" "$@"
fi
[ -n "${DSNFS_NETNS:-}" ] && ip link set lo up
BIN=$(realpath "${1:-build/bin}")
MIB=${LAB_ZERO_MIB:-1024}
REQ_KIB=${LAB_ZERO_REQ_KIB:-1024}
REPS=${LAB_ZERO_REPS:-3}
OUT=$(realpath -m "${LAB_OUT:-var/lab/zeroing}")
dir=${LAB_DIR:-$(mktemp -d /var/tmp/dsnfs-lab-zeroing.XXXXXX)}
mkdir -p "$dir/vmfs" "$dir/plain" "$OUT"
. "$(dirname "$0")/../lablib.sh"
cleanup() {
	lab_dsnfsd_stop
	rm -rf "$dir"
}
trap cleanup EXIT

cat >"$dir/dsnfsd.conf" <<EOF
[datastore vmfs]
path = $dir/vmfs
zero_on_first_write = true

[datastore plain]
path = $dir/plain
EOF
# qemu-io writes as root into dsvmdk's root-owned files: the labs' access
# (dsnfsd's defaults squash root; lab_dsnfsd_start covers -e ones only).
lab_access vmfs plain >>"$dir/dsnfsd.conf"
lab_dsnfsd_start "$BIN" "$dir" -c "$dir/dsnfsd.conf" -P 111
admin=$LAB_ADMIN_PORT

mibps() { awk -v m="$MIB" -v s="$(lab_since "$1")" 'BEGIN { printf "%.0f", m / s }'; }

# The qemu-io commands writing the whole disk in REQ_KIB requests.
n_req=$((MIB * 1024 / REQ_KIB))
cmds=$dir/qemu-io.cmds
for i in $(seq 0 $((n_req - 1))); do
	echo "write -q -P 0x5a $((i * REQ_KIB))k ${REQ_KIB}k"
done >"$cmds"
echo flush >>"$cmds"

# pass DS DISK: one sequential pass over nfs://; prints MiB/s.
pass() {
	local t0
	t0=$(lab_now)
	# A refused open must stop the lab, not time nothing: qemu-io says
	# why on stderr.
	qemu-io -f raw "nfs://127.0.0.1/$1/$2-flat.vmdk" <"$cmds" >/dev/null ||
		{
			echo "lab-zeroing: qemu-io failed on $1/$2-flat.vmdk" >&2
			return 1
		}
	mibps "$t0"
}

# The disk's own ceiling: dd over a local file already written, fdatasync.
head -c "${MIB}M" /dev/zero >"$dir/ceiling"
sync
t0=$(lab_now)
dd if=/dev/zero of="$dir/ceiling" bs="${REQ_KIB}k" count="$n_req" \
	conv=notrunc,fdatasync status=none
ceiling=$(mibps "$t0")
rm -f "$dir/ceiling"

tsv=$OUT/zeroing.tsv
printf 'datastore\ttype\tzeroing_mibps\tpost_zeroing_mibps\tratio\tceiling_mibps\tzeroed_blocks\n' >"$tsv"
echo "sequential write of a ${MIB} MiB disk through NFS, ${REQ_KIB} KiB requests (qemu-io, one at a time), median of $REPS"
echo "$(uname -r), $(nproc) cores, $(df -T "$dir" | awk 'NR==2 {print $2}') at $dir; $(uptime | sed 's/^ *//')"
printf '%-7s %-17s %-14s %-14s %-7s %-13s %s\n' DS TYPE "ZEROING MiB/s" "POST MiB/s" RATIO "DISK CEILING" "AFTER THE 1ST PASS"
zeroed() {
	lab_curl -s "http://127.0.0.1:$admin/metrics" |
		awk -v ds="$1" '$1 ~ /^dsnfs_volume_zeroed_blocks_total/ && $1 ~ "\"" ds "\"" { print $2 }'
}
median() { tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for ds in vmfs plain; do
	for type in thin zeroedthick eagerzeroedthick; do
		zs="" ps="" b0=$(zeroed "$ds")
		for _ in $(seq 1 "$REPS"); do
			"$BIN/dsvmdk" create -t "$type" -s "${MIB}M" "$dir/$ds/$type.vmdk" >/dev/null
			sync
			zs="$zs $(pass "$ds" "$type")"
			nbtbz=$("$BIN/dsvmdk" info "$dir/$ds/$type.vmdk" | sed -n 's/^  nb /nb /p' | head -1)
			ps="$ps $(pass "$ds" "$type")"
			rm -f "$dir/$ds/$type.vmdk" "$dir/$ds/$type-flat.vmdk"
		done
		blocks=$(( ($(zeroed "$ds") - b0) / REPS ))
		z=$(echo $zs | median)
		p=$(echo $ps | median)
		r=$(awk -v a="$p" -v b="$z" 'BEGIN { printf "%.2f", a / b }')
		printf '%-7s %-17s %-14s %-14s %-7s %-13s %s\n' "$ds" "$type" "$z" "$p" "${r}x" "$ceiling" "$nbtbz, $blocks blocks zeroed by dsnfsd"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ds" "$type" "$z" "$p" "$r" "$ceiling" "$blocks" >>"$tsv"
	done
done
echo "published (docs/published.md section 2): about 60 MB/s zeroing, 180 MB/s post-zeroing (3x), thin and thick alike"
echo "table: $tsv"
if command -v gnuplot >/dev/null; then
	gnuplot <<GP
set terminal pngcairo size 900,540 noenhanced
set output '$OUT/zeroing.png'
set title 'Sequential write of a ${MIB} MiB disk through NFS: zeroing vs post-zeroing'
set ylabel 'MiB/s'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key outside below
set grid y
set yrange [0:*]
set xtics rotate by -20
plot '$tsv' every ::1 using 3:xtic(sprintf("%s %s", stringcolumn(1), stringcolumn(2))) title 'zeroing phase (first write)', \
     '' every ::1 using 4 title 'post-zeroing', \
     '' every ::1 using 6 title 'disk ceiling (local dd, fdatasync)' lc rgb '#999999'
GP
	echo "plot: $OUT/zeroing.png"
fi
