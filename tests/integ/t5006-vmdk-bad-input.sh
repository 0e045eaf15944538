#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bad input gets a clear error and never a crash or a write outside the
# file: garbage, truncated and corrupted headers, grain tables pointing past
# the end of file or into the header, absurd descriptor sizes, descriptor
# cycles, oversized descriptors, extents outside the descriptor's directory,
# and 60 random header corruptions.
. "$(dirname "$0")/lib.sh"
D=$(realpath "$DSNFS_BIN")/dsvmdk
cd "$TEST_TMP" || exit 1

# says PATTERN CMD...: CMD fails (exit 1..3, no signal) and prints PATTERN.
says() {
	local pat=$1 out rc
	shift
	out=$("$@" 2>&1 >/dev/null)
	rc=$?
	[ $rc -ge 1 ] && [ $rc -le 3 ] && grep -q -- "$pat" <<<"$out" ||
		{ echo "    rc=$rc out=$out"; return 1; }
}
le32() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $((($1 >> 8) & 255)))\\x$(printf %02x $((($1 >> 16) & 255)))\\x$(printf %02x $((($1 >> 24) & 255)))"; }
poke32() { le32 "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }

# Random, and binary from its first byte (random bytes alone look like
# a line of text before a NUL now and then; that case is a unit test's).
{ printf '\001'; head -c 4095 /dev/urandom; } >garbage.vmdk
check "garbage is not a VMDK" says "garbage.vmdk: not a VMDK" "$D" info garbage.vmdk
: >empty.vmdk
check "an empty file has no descriptor" says "empty.vmdk: no version line" "$D" info empty.vmdk

"$D" create -s 8M -t sparse s.vmdk >/dev/null
head -c 300 s.vmdk >trunc.vmdk
check "a truncated header is named" says "trunc.vmdk: descriptorOffset 1 descriptorSize 20" "$D" info trunc.vmdk
cp s.vmdk g.vmdk
poke32 g.vmdk 20 3
check "grainSize 3 is named" bash -c "'$D' check g.vmdk | grep -q 'ERROR: g.vmdk: grainSize 3'"

# grain tables: grain 0 past the end of file, grain 1 inside the header
cp s.vmdk t.vmdk
printf 'data' | "$D" write -o 200000 t.vmdk >/dev/null
gd=$(od -An -t u8 -j 56 -N 8 t.vmdk | tr -d ' ')
gt=$(od -An -t u4 -j $((gd * 512)) -N 4 t.vmdk | tr -d ' ')
poke32 t.vmdk $((gt * 512)) 2147483647
poke32 t.vmdk $((gt * 512 + 4)) 2
cp t.vmdk t.before
size=$(stat -c %s t.vmdk)
check "check: grain past the end of file" bash -c "'$D' check t.vmdk | grep -q 'grain table 0 entry 0: grain at sector 2147483647 is past the end of file'"
check "check: grain inside the metadata" bash -c "'$D' check t.vmdk | grep -q 'grain table 0 entry 1: grain at sector 2 is inside the metadata'"
check "check exits 3 on a corrupt disk" bash -c "'$D' check t.vmdk >/dev/null; [ \$? = 3 ]"
check "reading that grain fails" says "Invalid argument" "$D" cat -l 64k t.vmdk
check "writing that grain fails" says "Invalid argument" bash -c "printf x | '$D' write -o 70000 t.vmdk"
# (the first write gives the disk a new CID in its embedded descriptor)
check "...and wrote nothing but the new CID" bash -c "cmp <(head -c 512 t.vmdk) <(head -c 512 t.before) && cmp <(tail -c +10753 t.vmdk) <(tail -c +10753 t.before)"
check "...nor past the end" [ "$(stat -c %s t.vmdk)" = "$size" ]
check "the rest of the disk still reads" bash -c "'$D' cat -o 200000 -l 4 t.vmdk | grep -q data"

printf 'version=1\nCID=1\ncreateType="vmfs"\nRW 1099511627776 VMFS "x-flat.vmdk"\n' >absurd.vmdk
check "an absurd extent size names the line" says "absurd.vmdk: line 4: extent size (sectors) is not in 1..2^37" "$D" info absurd.vmdk
printf 'version=1\nCID=1\nparentCID=2\ncreateType="monolithicSparse"\nparentFileNameHint="b.vmdk"\nRW 2048 ZERO\n' >a.vmdk
printf 'version=1\nCID=2\nparentCID=1\ncreateType="monolithicSparse"\nparentFileNameHint="a.vmdk"\nRW 2048 ZERO\n' >b.vmdk
check "a cycle of descriptors is a loop" says "b.vmdk: loop" "$D" info b.vmdk
printf 'version=1\nCID=1\ncreateType="vmfs"\nRW 8 VMFS "/etc/passwd"\n' >escape.vmdk
check "an extent outside the directory is refused" says "escape.vmdk: extent 0 '/etc/passwd': absolute or '..' path" bash -c "printf x | '$D' write escape.vmdk"
{ printf 'version=1\n'; head -c 2M /dev/zero | tr '\0' '#'; } >huge.vmdk
check "a 2 MiB descriptor is refused" says "huge.vmdk: not a VMDK: no KDMV, COWD or seSparse magic, and over 1048576 bytes" "$D" info huge.vmdk
check "check reports an unopenable disk (exit 3)" bash -c "'$D' check absurd.vmdk | grep -q 'ERROR: absurd.vmdk: line 4'"

# 60 random corruptions of the first 4 KiB: every run ends in an error or
# a clean result, never a signal, and never grows the file.
crashes=0
for i in $(seq 1 60); do
	cp s.vmdk r.vmdk
	off=$((RANDOM % 4096))
	printf "\\x$(printf %02x $((RANDOM % 256)))" | dd of=r.vmdk bs=1 seek=$off conv=notrunc status=none
	for cmd in info check "cat -l 1M"; do
		# shellcheck disable=SC2086
		"$D" $cmd r.vmdk >/dev/null 2>&1
		[ $? -ge 128 ] && crashes=$((crashes + 1))
	done
	printf 'x' | "$D" write -o $((RANDOM * 97 % 8388608)) r.vmdk >/dev/null 2>&1
	[ $? -ge 128 ] && crashes=$((crashes + 1))
done
check "60 random header corruptions: no crash" [ $crashes = 0 ]
test_done
