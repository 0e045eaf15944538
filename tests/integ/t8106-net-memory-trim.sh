#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Memory after abuse: eight clients pipeline 1 MiB READs and
# never read the replies; once they are closed, dsnfsd's RSS comes back
# within 20% of its figure before.
#
# RSS means something only without the sanitizers: ASan keeps freed memory
# in its quarantine and never gives back shadow pages.  Under an ASan
# binary this test runs a plain build instead (DSNFS_REL_BIN, build/bin from
# `make all`, or build/rel/bin), and says so; without one it skips, saying
# why.
. "$(dirname "$0")/lib.sh"

is_asan() {
	ldd "$1" 2>/dev/null | grep -q 'libasan'
}
if is_asan "$DSNFS_BIN/dsnfsd"; then
	rel=""
	for d in ${DSNFS_REL_BIN:-} build/bin build/rel/bin; do
		if [ -x "$d/dsnfsd" ] && ! is_asan "$d/dsnfsd"; then
			rel=$d
			break
		fi
	done
	if [ -z "$rel" ]; then
		echo "  skip $DSNFS_BIN/dsnfsd is an ASan build (RSS means nothing there) and there is no plain build (make all, or DSNFS_REL_BIN=DIR)"
		exit 0
	fi
	echo "  note $DSNFS_BIN/dsnfsd is an ASan build: RSS is measured on $rel/dsnfsd"
	DSNFS_BIN=$rel
fi

cat >"$TEST_TMP/trim.conf" <<CONF
[server]
workers = 2
read_zero_copy = false
memory_trim_ms = 300
CONF
mkdir -p "$TEST_TMP/ds1"
head -c $((1024 * 1024)) /dev/urandom >"$TEST_TMP/ds1/big"
dsnfsd_start -c "$TEST_TMP/trim.conf" || exit 1
check "RSS returns after eight never-reading clients" \
	python3 "$(dirname "$0")/t8106-net-memory-trim.py" "$NFS_PORT" \
	"$MOUNT_PORT" "$DSNFSD_PID"
check "server exits cleanly" dsnfsd_stop
test_done
