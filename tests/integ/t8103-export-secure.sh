#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `secure = true`: privileged client ports only, at MNT and on every call.
. "$(dirname "$0")/lib.sh"

cat >"$TEST_TMP/secure.conf" <<CONF
[datastore ds2]
secure = true
CONF
dsnfsd_start -c "$TEST_TMP/secure.conf" || exit 1
check "secure export enforced" python3 "$(dirname "$0")/t8103-export-secure.py" "$NFS_PORT" "$MOUNT_PORT"
check "server exits cleanly" dsnfsd_stop
test_done
