#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Duplicate request cache: retransmissions on a new connection from the
# client's port are answered from the cache, not executed twice; the same
# XID from another port or uid is not someone else's retransmission.
. "$(dirname "$0")/lib.sh"

dsnfsd_start || exit 1
check "retransmitted calls are replayed" python3 "$(dirname "$0")/t8101-drc-replay.py" "$NFS_PORT" "$MOUNT_PORT"
check "server exits cleanly" dsnfsd_stop
test_done
