#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Half-close: a client that sends its calls, then shutdown(SHUT_WR), gets
# every reply (deferred FILE_SYNC WRITEs and COMMITs included), then EOF.
. "$(dirname "$0")/lib.sh"

dsnfsd_start || exit 1
check "half-closed client answered" \
	python3 "$(dirname "$0")/t8104-half-close.py" "$NFS_PORT" "$MOUNT_PORT"
check "server still running" kill -0 "$DSNFSD_PID"
check "server exits cleanly" dsnfsd_stop
test_done
