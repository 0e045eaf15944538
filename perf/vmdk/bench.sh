#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# perf/vmdk/bench.sh [DSVMDK] - provisioning benchmark of dsvmdk (not a
# timed test).  Prints, on the machine's own file system:
#   1. full-clone time of a 10 GiB thin disk with 1 GiB written versus one
#      with 5 GiB written (time follows used space, not size);
#   2. linked-clone time for a 1 GiB and a 100 GiB flat parent;
#   3. 100 linked clones of one parent, in total;
#   4. sequential-write throughput of a thin (and a zeroedthick) disk in
#      its zeroing phase (first write of each block) versus after it.
# Needs about 14 GiB free in $BENCH_DIR (default: a new directory in
# /var/tmp).  Data is written as 64 MiB pieces spread over the disk.
set -eu
D=${1:-build/bin/dsvmdk}
D=$(realpath "$D")
SEQ_MIB=${SEQ_MIB:-2048}
dir=${BENCH_DIR:-$(mktemp -d /var/tmp/dsvmdk-bench.XXXXXX)}
mkdir -p "$dir"
cleanup() { chmod -R u+w "$dir" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
cd "$dir"

now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.6f", a - b }'; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
fmt() { printf '%.3f' "$1"; }

# fill DISK GIB: GIB x 16 pieces of 64 MiB, evenly over a 10 GiB disk.
fill() {
	local n=$(($2 * 16)) i
	for i in $(seq 0 $((n - 1))); do
		dd if=/dev/zero bs=1M count=64 status=none |
			"$D" write -o $((i * 10240 / n))M "$1" >/dev/null
	done
	sync
}

echo "dsvmdk provisioning benchmark: $(uname -r), $(df -T . | awk 'NR==2 {print $2}') at $dir"
echo "binary: $D"
echo

echo "1. full clone of a 10 GiB thin disk (sparse-aware; copy_file_range)"
for g in 1 5; do
	"$D" create -s 10G -t thin src$g.vmdk >/dev/null
	fill src$g.vmdk $g
	t0=$(now)
	out=$("$D" clone --full src$g.vmdk dst$g.vmdk)
	t=$(since "$t0")
	printf '   %d GiB written: %7s s  (%s)\n' $g "$(fmt "$t")" \
		"$(echo "$out" | sed 's/^full clone: [0-9.]* s, //')"
	eval "full$g=$t"
	rm -f src$g*.vmdk dst$g*.vmdk
done
printf '   ratio 5 GiB / 1 GiB: %.2f (used space ratio 5.00)\n\n' \
	"$(calc "$full5 / $full1")"

echo "2. linked clone of a flat parent (constant time)"
for s in 1 100; do
	"$D" create -s ${s}G -t thin p$s.vmdk >/dev/null
	t0=$(now)
	"$D" clone --linked p$s.vmdk c$s.vmdk >/dev/null
	printf '   %3d GiB parent: %7s s, delta %s bytes allocated\n' $s \
		"$(fmt "$(since "$t0")")" "$(($(stat -c %b c$s.vmdk) * 512))"
done
echo

echo "3. 100 linked clones of one 100 GiB parent"
t0=$(now)
for i in $(seq 1 100); do
	"$D" clone --linked p100.vmdk lc$i.vmdk >/dev/null
done
t=$(since "$t0")
printf '   total %s s, %.1f ms per clone\n\n' "$(fmt "$t")" \
	"$(calc "$t * 10")"
chmod u+w p*.vmdk p*-flat.vmdk
rm -f p*.vmdk c*.vmdk lc*.vmdk

echo "4. sequential write, ${SEQ_MIB} MiB in 1 MiB writes (+ fsync)"
for t in thin zeroedthick; do
	"$D" create -s ${SEQ_MIB}M -t $t seq-$t.vmdk >/dev/null
	for phase in "zeroing phase" "post-zeroing "; do
		sync
		t0=$(now)
		dd if=/dev/zero bs=1M count="$SEQ_MIB" status=none |
			"$D" write seq-$t.vmdk >/dev/null
		s=$(since "$t0")
		printf '   %-12s %s: %7.1f MB/s  (nb/tbz after: %s)\n' $t \
			"$phase" "$(calc "$SEQ_MIB * 1.048576 / $s")" \
			"$("$D" info seq-$t.vmdk | sed -n 's/^  nb /nb /p' | head -1)"
	done
	rm -f seq-$t*.vmdk
done
