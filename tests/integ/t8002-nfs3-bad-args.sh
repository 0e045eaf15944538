#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bad NFSv3 arguments: every procedure's arguments truncated at every
# 4-byte boundary -> GARBAGE_ARGS; handles of 65 bytes -> GARBAGE_ARGS, of
# 57..64 bytes or forged -> NFS3ERR_BADHANDLE; WRITE data over 1 MiB and
# names over 1024 bytes -> GARBAGE_ARGS (or a closed connection); names
# with a NUL byte, bad enum values.  A fresh connection is answered after
# each group, and the server survives it all.
. "$(dirname "$0")/lib.sh"

dsnfsd_start || exit 1
echo "a file" >"$TEST_TMP/ds1/file.txt"
echo "a victim" >"$TEST_TMP/ds1/victim.txt"
ln -s file.txt "$TEST_TMP/ds1/link"

check "bad arguments get GARBAGE_ARGS or their nfsstat3" \
	python3 "$(dirname "$0")/t8002-nfs3-bad-args.py" "$NFS_PORT" "$MOUNT_PORT"
check "no name cut at a NUL was made, removed or renamed" \
	test ! -e "$TEST_TMP/ds1/new" -a ! -e "$TEST_TMP/ds1/newd" \
	-a ! -e "$TEST_TMP/ds1/hl" -a ! -e "$TEST_TMP/ds1/moved" \
	-a -f "$TEST_TMP/ds1/victim.txt"
check "server still running" kill -0 "$DSNFSD_PID"
check "server exits cleanly" dsnfsd_stop
test_done
