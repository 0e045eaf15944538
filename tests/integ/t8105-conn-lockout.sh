#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A server full of idle connections still serves a new client: an idle
# connection of the busiest host makes room.
. "$(dirname "$0")/lib.sh"

cat >"$TEST_TMP/lockout.conf" <<CONF
[server]
workers = 2
max_conns = 64
max_conns_per_host = 32
CONF
dsnfsd_start -c "$TEST_TMP/lockout.conf" || exit 1
check "a new client is served at the limit" \
	python3 "$(dirname "$0")/t8105-conn-lockout.py" "$NFS_PORT" \
	"$TEST_TMP/dsnfsd.log"
check "server exits cleanly" dsnfsd_stop
test_done
