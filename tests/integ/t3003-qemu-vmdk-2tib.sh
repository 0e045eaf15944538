#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A 2 TiB thin VMDK (dsvmdk, ESXi layout: descriptor + sparse flat extent)
# served over NFS like a small one: qemu-io (libnfs, through the
# portmapper on 111) writes 64 KiB just below the 2 TiB end of the flat
# extent and reads it back, holes read as zeros, a read past the end is
# refused, qemu-img and dsvmdk find the VMDK consistent, and the server's
# disk holds only what was written.  Functional, not timed
# (perf/scale/scale.sh times it).
#
# The flat extent is opened as raw over nfs://, as ESXi reads it: QEMU
# 7.2's NFS driver names the directory of nfs://h/ds1/big.vmdk as
# nfs://h/ds1/big.vmdk/ (block/nfs.c nfs_dirname), so its VMDK driver
# cannot find a separate extent over nfs://; the descriptor is checked
# with qemu-img on the server's copy instead.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"

dsnfsd_start -P 111 || exit 1
desc=$TEST_TMP/ds1/big.vmdk
flat=$TEST_TMP/ds1/big-flat.vmdk
check "dsvmdk create -s 2TiB -t thin" \
	"$DSNFS_BIN/dsvmdk" create -s 2TiB -t thin "$desc"
url="nfs://127.0.0.1/ds1/big-flat.vmdk"
end=$((2 * 1024 * 1024 * 1024 * 1024))
near_end=$((end - 65536))
qio() { qemu-io -f raw -c "$1" "$url" 2>&1 | grep -q "$2"; }
check "qemu-img info over nfs://: virtual size 2 TiB" bash -c \
	"qemu-img info -f raw '$url' | grep -q 'virtual size: 2 TiB'"
check "write 0x5c at 2 TiB - 64 KiB" qio "write -P 0x5c $near_end 64k" \
	"wrote 65536"
check "write 0x3a at 0" qio "write -P 0x3a 0 8k" "wrote 8192"
check "read back 0x5c at 2 TiB - 64 KiB" qio "read -P 0x5c $near_end 64k" \
	"read 65536"
check "read back 0x3a at 0" qio "read -P 0x3a 0 8k" "read 8192"
check "hole at 1 TiB reads as zeros" qio "read -P 0 $((end / 2)) 1M" \
	"read 1048576"
check "hole just before the write reads as zeros" \
	qio "read -P 0 $((near_end - 65536)) 64k" "read 65536"
check "a read past the end is refused" bash -c \
	"! qemu-io -f raw -c 'read $end 4k' '$url' 2>&1 | grep -q '^read 4096'"
check "qemu-img info -f vmdk: 2 TiB" bash -c \
	"qemu-img info -f vmdk '$desc' | grep -q 'virtual size: 2 TiB'"
check "qemu-img check -f vmdk is clean" qemu-img check -f vmdk "$desc"
check "dsvmdk check is clean" "$DSNFS_BIN/dsvmdk" check "$desc"
# Every byte of the 64 KiB is 0x5c, as dsvmdk reads the VMDK on the server.
only_5c() {
	[ "$("$DSNFS_BIN/dsvmdk" cat -o "$near_end" -l 65536 "$desc" |
		od -An -v -tx1 | tr -s ' \n' '\n' | grep . | sort -u)" = 5c ]
}
check "dsvmdk cat reads 0x5c at 2 TiB - 64 KiB" only_5c
check "flat extent is 2 TiB long" bash -c "[ \$(stat -c %s '$flat') = $end ]"
check "flat extent holds under 1 MiB" bash -c \
	"[ \$(du -k '$flat' | cut -f1) -lt 1024 ]"
check "server exits cleanly" dsnfsd_stop
test_done
