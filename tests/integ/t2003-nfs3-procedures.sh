#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every NFSv3 procedure over the wire with its success and error cases,
# exact nfsstat3 values (RFC 1813 3.3), by t2003-nfs3-procedures.py and
# nfs3wire.py.  Also: names over 255 bytes, ".." at the export root, and
# symlinks that point out of the export are never followed.
. "$(dirname "$0")/lib.sh"

dsnfsd_start || exit 1
if [ "${DSNFS_DS1_BACKEND:-local}" = cephfs ]; then
	DS1_MAX_FILE_BYTES=$(ceph -c "$CEPH_CONF" fs get cephfs -f json |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["mdsmap"]["max_file_size"])') ||
		exit 1
	export DS1_MAX_FILE_BYTES
fi
umask 022
d=$TEST_TMP/ds1
head -c 1000 /dev/urandom >"$d/data.bin"
head -c $((3 * 1024 * 1024)) /dev/urandom >"$d/big.bin"
printf 'hello world' >"$d/attr.txt"
printf 'secret\n' >"$d/secret.txt"
chmod 0600 "$d/secret.txt"
printf 'moving\n' >"$d/mv-src.txt"
printf 'other\n' >"$d/mv-other.txt"
printf 'victim\n' >"$d/mv-victim.txt"
echo doomed >"$d/doomed.txt"
: >"$d/w.bin"
mkdir "$d/sub" "$d/emptydir" "$d/bigdir"
echo inner >"$d/sub/inner.txt"
mkdir -m 0700 "$d/private"
echo inner >"$d/private/inner.txt"
ln -s data.bin "$d/link-to-data"
echo outside >"$TEST_TMP/outside.txt"
chmod 0600 "$TEST_TMP/outside.txt"
ln -s "$TEST_TMP/outside.txt" "$d/outside-link"
# 2000 names of 7 to 43 bytes, so that pages end at varied places.
python3 -c '
import os, sys
for i in range(2000):
    open(os.path.join(sys.argv[1], "f%05d-%s" % (i, "x" * (i % 37))), "w").close()
' "$d/bigdir"

check "all procedures answer as RFC 1813 says" \
	python3 "$(dirname "$0")/t2003-nfs3-procedures.py" \
	"$NFS_PORT" "$MOUNT_PORT" "$TEST_TMP"
check "server still running" kill -0 "$DSNFSD_PID"
check "server exits cleanly" dsnfsd_stop
test_done
