#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# perf/clones/reads.sh [BIN_DIR] - `make lab-clone-reads`: 8 KiB random
# reads at depth 16 through NFS on three clones of one disk
# (docs/published.md section 3: linked clones lose about 65% on
# disk-heavy work, native array snapshots almost nothing):
#   full    storage-side copy (dsnfsctl vmdk clone --full: copy_file_range)
#   linked  a redo log on the source (--linked: a hosted-sparse delta that
#           the host walks, grain table first, then the delta or the
#           parent's flat file)
#   native  the file system's copy on write (--native: FICLONE on XFS)
# After each clone has had LAB_READS_FILL_PCT (default 25) percent of its
# blocks rewritten (64 KiB pieces at the same seeded random places), the
# reads run LAB_READS_SECONDS (default 10) on each, twice, interleaved; the
# source itself is the reference.  The host side is perf/clones/vmdkbench
# (libvmdk over libnfs, one connection per outstanding read).  The datastore
# is an XFS with reflink=1 on a loop device with direct I/O (its image on
# $LAB_DIR's file system, default /var/tmp), and before every run the
# datastore's files leave the page cache (posix_fadvise DONTNEED), so the
# reads are disk reads, the "disk-heavy work" of the seed, without
# dropping the rest of the machine's cache.  The source is a thin disk of
# LAB_READS_DISK_MIB (default 2048) full of random data.  Prints a table, writes var/lab/clone-reads/
# reads.tsv and reads.png (gnuplot).  Root (mount).
set -eu
BIN=$(realpath "${1:-build/bin}")
MIB=${LAB_READS_DISK_MIB:-2048}
FILL=${LAB_READS_FILL_PCT:-25}
SECS=${LAB_READS_SECONDS:-10}
OUT=$(realpath -m "${LAB_OUT:-var/lab/clone-reads}")
dir=${LAB_DIR:-$(mktemp -d /var/tmp/dsnfs-lab-reads.XXXXXX)}
mkdir -p "$dir/ds1" "$OUT"
. "$(dirname "$0")/../lablib.sh"
loop=""
cleanup() {
	lab_dsnfsd_stop
	umount "$dir/ds1" 2>/dev/null
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
command -v mkfs.xfs >/dev/null || { echo "needs mkfs.xfs (xfsprogs)" >&2; exit 1; }
truncate -s $((MIB * 4 + 1024))M "$dir/xfs.img"
mkfs.xfs -q -m reflink=1 "$dir/xfs.img"
loop=$(losetup -f --show --direct-io=on "$dir/xfs.img")
mount "$loop" "$dir/ds1"
# Out of the page cache: the datastore's files (the loop reads its image
# with O_DIRECT, so nothing below caches them either).
uncache() {
	python3 - "$dir/ds1" <<'PY'
import os, sys
for name in os.listdir(sys.argv[1]):
    fd = os.open(os.path.join(sys.argv[1], name), os.O_RDONLY)
    os.fdatasync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PY
}

lab_dsnfsd_start "$BIN" "$dir" -P off -e ds1="$dir/ds1"
nfs=$LAB_NFS_PORT mnt=$LAB_MOUNT_PORT admin=$LAB_ADMIN_PORT
ctl() { "$BIN/dsnfsctl" -s "127.0.0.1:$admin" "$@" >/dev/null; }
url() { echo "nfs://127.0.0.1/ds1/$1?nfsport=$nfs&mountport=$mnt"; }

"$BIN/dsvmdk" create -t thin -s "${MIB}M" "$dir/ds1/src.vmdk" >/dev/null
dd if=/dev/urandom of="$dir/ds1/src-flat.vmdk" bs=1M count="$MIB" conv=notrunc status=none
sync
ctl vmdk clone ds1 src.vmdk full.vmdk --full
ctl vmdk clone ds1 src.vmdk native.vmdk --native
ctl vmdk clone ds1 src.vmdk linked.vmdk --linked
for c in full linked native; do
	"$BIN/vmdkbench" fill "$(url $c.vmdk)" "$FILL" -S 7 >/dev/null
done
sync

declare -A iops p99
for round in 1 2; do
	for c in src full linked native; do
		uncache
		r=$("$BIN/vmdkbench" read "$(url $c.vmdk)" -d 16 -s 8192 -t "$SECS" -S "$round")
		iops[$c]="${iops[$c]:-} $(echo "$r" | sed 's/.*: \([0-9]*\) IOPS.*/\1/')"
		p99[$c]="${p99[$c]:-} $(echo "$r" | sed 's/.*p99 \([0-9]*\) us.*/\1/')"
	done
done
mean() { awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; printf "%.0f", s / NF }'; }

tsv=$OUT/reads.tsv
printf 'clone\tiops\tp99_us\tratio_to_full\trounds\n' >"$tsv"
echo "8 KiB random reads, depth 16, through NFS, after ${FILL}% of each clone was rewritten (${MIB} MiB disk, ${SECS} s x 2)"
echo "$(uname -r), $(nproc) cores, XFS (reflink=1) on a direct-I/O loop device over $(df -T "$dir" | awk 'NR==2 {print $2}'), files uncached before each run; $(uptime | sed 's/^ *//')"
printf '%-8s %-10s %-9s %-10s %s\n' CLONE IOPS "P99 us" "/ FULL" ROUNDS
full=$(echo ${iops[full]} | mean)
for c in src full linked native; do
	m=$(echo ${iops[$c]} | mean)
	q=$(echo ${p99[$c]} | mean)
	r=$(awk -v a="$m" -v b="$full" 'BEGIN { printf "%.2f", a / b }')
	printf '%-8s %-10s %-9s %-10s %s\n' "$c" "$m" "$q" "$r" "${iops[$c]# }"
	printf '%s\t%s\t%s\t%s\t%s\n' "$c" "$m" "$q" "$r" "${iops[$c]# }" >>"$tsv"
done
echo "published (docs/published.md section 3): linked about 1/3 of full on disk-heavy work; native close to full"
echo "table: $tsv"
if command -v gnuplot >/dev/null; then
	gnuplot <<GP
set terminal pngcairo size 800,500 noenhanced
set output '$OUT/reads.png'
set title '8 KiB random reads at depth 16 through NFS, ${FILL}% of each clone rewritten'
set ylabel 'IOPS'
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.7
set yrange [0:*]
set grid y
set key off
plot '$tsv' every ::1 using 2:xtic(1) lc rgb '#3a7bd5'
GP
	echo "plot: $OUT/reads.png"
fi
