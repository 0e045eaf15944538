#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Native clones (FICLONE) through a running dsnfsd on a datastore that can
# share blocks: ds1 is a loop-mounted XFS made with reflink=1 (xfsprogs).
# The clone is made at once and shares every block with its source
# (Extended Statistics: shared_bytes), reads the same over nfs://
# (qemu-img compare through the portmapper on 111, in a network namespace
# of its own), and a write to it over NFS leaves the source as it was.
# Needs root (mount); skipped with a message otherwise.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v mkfs.xfs >/dev/null; then
	echo "  skip: needs root and mkfs.xfs (xfsprogs) for a loop-mounted XFS"
	exit 0
fi
mkdir -p "$TEST_TMP/ds1"
truncate -s 1G "$TEST_TMP/xfs.img"
if ! mkfs.xfs -q -m reflink=1 "$TEST_TMP/xfs.img" ||
	! mount -o loop "$TEST_TMP/xfs.img" "$TEST_TMP/ds1" 2>/dev/null; then
	echo "  skip: cannot make or loop-mount an XFS here"
	exit 0
fi
trap 'umount "$TEST_TMP/ds1" 2>/dev/null; test_cleanup' EXIT
dsnfsd_start -P 111 || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
ds1=$TEST_TMP/ds1
"$DSNFS_BIN/dsvmdk" create -t thin -s 512M "$ds1/src.vmdk" >/dev/null
dd if=/dev/urandom of="$ds1/src-flat.vmdk" bs=1M count=64 seek=8 conv=notrunc status=none
sync
sum=$(md5sum <"$ds1/src-flat.vmdk")
shared() { acurl -s "$A/volumes/ds1/stats?path=$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["shared_bytes"])'; }

check "dsnfsctl vmdk clone --native" ctl vmdk clone ds1 src.vmdk nat.vmdk --native
check "the clone shares its 64 MiB with the source" [ "$(shared nat.vmdk)" = $((64 << 20)) ]
check "the source shares them too" [ "$(shared src.vmdk)" = $((64 << 20)) ]
check "the clone keeps thin provisioning" grep -q 'thinProvisioned' "$ds1/nat.vmdk"
check "qemu-img compare over nfs://" qemu-img compare -q -f raw -F raw \
	nfs://127.0.0.1/ds1/src-flat.vmdk nfs://127.0.0.1/ds1/nat-flat.vmdk
check "qemu-img compare of the disks (vmdk driver)" qemu-img compare -q "$ds1/src.vmdk" "$ds1/nat.vmdk"
check "a write to the clone over nfs://" bash -c \
	"qemu-io -f raw -c 'write -P 0x5a 16M 1M' nfs://127.0.0.1/ds1/nat-flat.vmdk | grep -q 'wrote 1048576'"
check "  the clone reads it back over nfs://" bash -c \
	"qemu-io -f raw -c 'read -P 0x5a 16M 1M' nfs://127.0.0.1/ds1/nat-flat.vmdk | grep -q 'read 1048576'"
check "  the source is unchanged" [ "$(md5sum <"$ds1/src-flat.vmdk")" = "$sum" ]
check "  1 MiB less is shared now" [ "$(shared nat.vmdk)" = $((63 << 20)) ]
check "dsnfsctl vmdk stats shows the shared bytes" bash -c "ctl() { '$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT \"\$@\"; }; ctl vmdk stats ds1 nat.vmdk | grep -q 'shared 63 MiB'"
check "a full clone on XFS (copy_file_range)" ctl vmdk clone ds1 src.vmdk full.vmdk --full
check "  reads the same over nfs://" qemu-img compare -q -f raw -F raw \
	nfs://127.0.0.1/ds1/src-flat.vmdk nfs://127.0.0.1/ds1/full-flat.vmdk
echo "    full clone on XFS: $(shared full.vmdk) bytes shared (the kernel's copy_file_range may reflink)"
code=$(acurl -s -o "$TEST_TMP/body" -w '%{http_code}' -H 'Content-Type: application/json' \
	-d '{"source":"src.vmdk","target":"nat.vmdk","mode":"native"}' "$A/volumes/ds1/clones")
check "native onto an existing target: 409" [ "$code" = 409 ]
check "server exits cleanly" dsnfsd_stop
test_done
