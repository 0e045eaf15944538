#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libnfs clients (nfs-ls, nfs-cp): a 100 MiB file copied in and out keeps
# its checksum; listings show what the server holds.
. "$(dirname "$0")/lib.sh"

dsnfsd_start || exit 1
head -c $((100 * 1024 * 1024)) /dev/urandom >"$TEST_TMP/big.in"
mkdir -p "$TEST_TMP/ds1/sub"
echo hello >"$TEST_TMP/ds1/sub/hello.txt"

check "nfs-cp 100 MiB into ds1" nfs-cp "$TEST_TMP/big.in" "$(nfs_url ds1 big.bin)"
check "server file has the same checksum" cmp "$TEST_TMP/big.in" "$TEST_TMP/ds1/big.bin"
check "nfs-cp 100 MiB out of ds1" nfs-cp "$(nfs_url ds1 big.bin)" "$TEST_TMP/big.out"
check "copy out has the same checksum" cmp "$TEST_TMP/big.in" "$TEST_TMP/big.out"
listing=$(nfs-ls "$(nfs_url ds1 '')" 2>&1)
echo "$listing"
check "nfs-ls shows big.bin" grep -q 'big.bin' <<<"$listing"
check "nfs-ls shows sub" grep -q 'sub' <<<"$listing"
check "nfs-cat reads a small file" bash -c "[ \"\$(nfs-cat '$(nfs_url ds1 sub/hello.txt)')\" = hello ]"
check "nfs-ls of an unknown export fails" bash -c "! nfs-ls '$(nfs_url nope '')' 2>/dev/null"
check "server exits cleanly" dsnfsd_stop
test_done
