#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# QEMU's NFS block driver (libnfs through the portmapper on port 111): a
# 4 GiB raw image, patterns written at 0, 1 GiB - 4 KiB and 3 GiB, read back.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"

dsnfsd_start -P 111 || exit 1
url="nfs://127.0.0.1/ds1/disk.raw"
check "qemu-img create -f raw 4G" qemu-img create -q -f raw "$url" 4G
check "image is 4 GiB on the server" bash -c "[ \$(stat -c %s '$TEST_TMP/ds1/disk.raw') = 4294967296 ]"
qio() { qemu-io -f raw -c "$1" "$url" | grep -q "$2"; }
check "write 0xa1 at 0" qio "write -P 0xa1 0 64k" "wrote 65536"
check "write 0xb2 at 1 GiB - 4 KiB" qio "write -P 0xb2 1073737728 4k" "wrote 4096"
check "write 0xc3 at 3 GiB" qio "write -P 0xc3 3221225472 128k" "wrote 131072"
check "read back 0xa1 at 0" qio "read -P 0xa1 0 64k" "read 65536"
check "read back 0xb2 at 1 GiB - 4 KiB" qio "read -P 0xb2 1073737728 4k" "read 4096"
check "read back 0xc3 at 3 GiB" qio "read -P 0xc3 3221225472 128k" "read 131072"
check "unwritten area reads as zeros" qio "read -P 0 2147483648 64k" "read 65536"
check "a wrong pattern is detected" bash -c "qemu-io -f raw -c 'read -P 0xa1 3221225472 4k' '$url' | grep -q 'Pattern verification failed'"
check "server exits cleanly" dsnfsd_stop
test_done
