#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# perf/clones/lab.sh [BIN_DIR] - `make lab-clones`: a full clone made by
# the storage (POST /volumes/ds1/clones, mode full: copy_file_range in
# dsnfsd) against the same clone made by a client over NFS (qemu-img
# convert nfs:// to nfs://, and nfs-cp), for 1, 4 and 16 GiB of used data in
# a 20 GiB thin disk (LAB_SIZES_GIB, LAB_DISK_GIB).  Prints a table, the
# ratio client/storage, and writes var/lab/clones/clones.tsv and
# clones.png (gnuplot).  Runs in a network namespace of its own (qemu-img
# asks the portmapper on port 111), on the file system of $LAB_DIR
# (default a new directory in /var/tmp), page cache warm: the source is
# read once before each run, and nothing drops the machine's caches
# (other users' runs would pay for it).  Every time includes making the
# copy durable: the storage-side clone fsyncs its files, and each client
# copy is followed by syncfs(2) of the datastore's file system (sync -f).
# Needs LAB_DISK_GIB x 2 + 2 GiB
# free.  Root for the namespace.
set -eu
if [ -z "${DSNFS_NETNS:-}" ] && unshare -n true 2>/dev/null; then
	DSNFS_NETNS=1 exec unshare -n bash "$0" "$@"
fi
[ -n "${DSNFS_NETNS:-}" ] && ip link set lo up
BIN=$(realpath "${1:-build/bin}")
SIZES=${LAB_SIZES_GIB:-1 4 16}
DISK_GIB=${LAB_DISK_GIB:-20}
OUT=$(realpath -m "${LAB_OUT:-var/lab/clones}")
dir=${LAB_DIR:-$(mktemp -d /var/tmp/dsnfs-lab-clones.XXXXXX)}
mkdir -p "$dir/ds1" "$OUT"
. "$(dirname "$0")/../lablib.sh"
cleanup() {
	lab_dsnfsd_stop
	chmod -R u+w "$dir" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

lab_dsnfsd_start "$BIN" "$dir" -P 111 -e ds1="$dir/ds1"
ctl() { "$BIN/dsnfsctl" -s "127.0.0.1:$LAB_ADMIN_PORT" "$@"; }
url() { echo "nfs://127.0.0.1/ds1/$1"; }

# A thin disk of DISK_GIB with USED GiB written as 64 MiB pieces spread
# evenly (random bytes: nothing along the way can skip them as zeros).
make_source() {
	local used=$1 n i
	rm -f "$dir/ds1/"*.vmdk
	"$BIN/dsvmdk" create -t thin -s "${DISK_GIB}G" "$dir/ds1/src.vmdk" >/dev/null
	head -c 64M /dev/urandom >"$dir/piece"
	n=$((used * 16))
	for i in $(seq 0 $((n - 1))); do
		dd if="$dir/piece" of="$dir/ds1/src-flat.vmdk" bs=1M \
			seek=$((i * DISK_GIB * 1024 / n)) conv=notrunc status=none
	done
	sync
}
warm() { cat "$dir/ds1/src-flat.vmdk" >/dev/null; }
drop() { rm -f "$dir/ds1/$1.vmdk" "$dir/ds1/$1-flat.vmdk"; sync; }

tsv=$OUT/clones.tsv
printf 'used_gib\tstorage_s\tqemu_img_s\tnfs_cp_s\tqemu_ratio\tnfs_cp_ratio\tstorage_alloc_mib\tqemu_alloc_mib\tnfs_cp_alloc_mib\n' >"$tsv"
echo "full clone of a ${DISK_GIB} GiB thin disk: storage-side vs a client over NFS"
echo "$(uname -r), $(nproc) cores, $(df -T "$dir" | awk 'NR==2 {print $2}') at $dir; $(uptime | sed 's/^ *//')"
printf '%-9s %-12s %-22s %-14s %-10s %-10s\n' USED STORAGE "QEMU-IMG CONVERT" NFS-CP "QEMU/ST" "NFS-CP/ST"
for used in $SIZES; do
	make_source "$used"
	warm
	t0=$(lab_now)
	ctl vmdk clone ds1 src.vmdk st.vmdk --full >/dev/null
	st=$(lab_since "$t0")
	sa=$(du -k "$dir/ds1/st-flat.vmdk" | cut -f1)
	cmp -s "$dir/ds1/src-flat.vmdk" "$dir/ds1/st-flat.vmdk" ||
		{ echo "storage clone differs" >&2; exit 1; }
	drop st
	warm
	t0=$(lab_now)
	qemu-img convert -f raw -O raw "$(url src-flat.vmdk)" "$(url q-flat.vmdk)"
	sync -f "$dir/ds1"
	qi=$(lab_since "$t0")
	qa=$(du -k "$dir/ds1/q-flat.vmdk" | cut -f1)
	qemu-img compare -q -f raw -F raw "$(url src-flat.vmdk)" "$(url q-flat.vmdk)" ||
		{ echo "qemu-img copy differs" >&2; exit 1; }
	drop q
	warm
	t0=$(lab_now)
	nfs-cp "$(url src-flat.vmdk)" "$(url n-flat.vmdk)" >/dev/null
	sync -f "$dir/ds1"
	nc=$(lab_since "$t0")
	na=$(du -k "$dir/ds1/n-flat.vmdk" | cut -f1)
	drop n
	qr=$(awk -v a="$qi" -v b="$st" 'BEGIN { printf "%.1f", a / b }')
	nr=$(awk -v a="$nc" -v b="$st" 'BEGIN { printf "%.1f", a / b }')
	printf '%-9s %-12s %-22s %-14s %-10s %-10s\n' "$used GiB" "$st s" "$qi s" "$nc s" "${qr}x" "${nr}x"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$used" "$st" "$qi" "$nc" "$qr" "$nr" \
		$((sa / 1024)) $((qa / 1024)) $((na / 1024)) >>"$tsv"
done
echo "allocated by each copy (MiB): $(awk -F'\t' 'NR>1 {printf "%s GiB used: storage %s, qemu-img %s, nfs-cp %s; ", $1, $7, $8, $9}' "$tsv")"
echo "table: $tsv"
if command -v gnuplot >/dev/null; then
	gnuplot <<GP
set terminal pngcairo size 900,540 noenhanced
set output '$OUT/clones.png'
set title 'Full clone of a ${DISK_GIB} GiB thin disk: storage-side vs client over NFS'
set xlabel 'used data (GiB)'
set ylabel 'time (s)'
set key outside below
set grid
set style data linespoints
plot '$tsv' using 1:2 title 'storage-side (copy_file_range in dsnfsd)' lw 2 pt 7, \
     '' using 1:3 title 'qemu-img convert nfs:// -> nfs://' lw 2 pt 5, \
     '' using 1:4 title 'nfs-cp nfs:// -> nfs://' lw 2 pt 9
GP
	echo "plot: $OUT/clones.png"
fi
