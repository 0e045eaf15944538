#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Power loss: the datastore, the state and the intent log on
# ext4 on a loop device over a FUSE file that logs every write and flush
# (tests/integ/powerfs.py, the dm-log-writes method); the log replayed to
# POWER_POINTS (default 100) of its flushes, intent log off and on, and at
# each every acknowledged operation read back through the old handles
# (see the .py).  Needs root (loop, mount) and FUSE; skipped otherwise.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || ! /usr/bin/python3 -c 'import fusepy' 2>/dev/null ||
	! command -v mkfs.ext4 >/dev/null; then
	echo "  skip: needs root, /dev/fuse, python3-fusepy (Debian's /usr/bin/python3) and mkfs.ext4"
	exit 0
fi
for mode in off on; do
	check "power cuts, intent log $mode" python3 "$(dirname "$0")/t8205-power-loss.py" \
		"$DSNFS_BIN/dsnfsd" "$TEST_TMP/$mode" "$mode" "${POWER_POINTS:-100}" "${POWER_OPS:-400}"
done
test_done
