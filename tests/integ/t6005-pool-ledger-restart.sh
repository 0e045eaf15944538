#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The capacity ledger (STATE_DIR/capacity.ledger) survives restarts: the
# config's pools are recorded once, a restart with the same config adds
# nothing, a changed config adds exactly its difference, a torn last
# record (a crash mid-append) is dropped with a warning, and a second
# server on the same state directory is refused.
. "$(dirname "$0")/lib.sh"

ledger=$TEST_TMP/state/capacity.ledger
events() {
	"$DSNFS_BIN/dsnfsctl" ledger --ledger "$ledger" 2>/dev/null
}
write_conf() { # SIZE_OF_P1 [P2]
	{
		printf '[pool p1]\nlevel = premium\nsize_tib = %s\n\n' "$1"
		[ -n "${2:-}" ] && printf '[pool p2]\nlevel = ultra\nsize_tib = 2\n\n'
		printf '[datastore ds1]\npool = p1\nquota = 2TiB\n'
	} >"$TEST_TMP/pools.conf"
}

write_conf 4 with-p2
dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "a second server on the same state directory is refused" \
	bash -c "! '$DSNFS_BIN/dsnfsd' -f -l 127.0.0.1 -p 0 -m 0 -P off \
		-s '$TEST_TMP/state' -e ds1='$TEST_TMP/ds1' \
		-c '$TEST_TMP/pools.conf' 2>'$TEST_TMP/second.log' &&
		grep -q 'capacity.ledger: locked by another process' \
		'$TEST_TMP/second.log'"
check "server exits cleanly" dsnfsd_stop
events >"$TEST_TMP/e1"
cat "$TEST_TMP/e1"
check "both pools were recorded as created" \
	test "$(grep -c ' created ' "$TEST_TMP/e1")" -eq 2

dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "server exits cleanly" dsnfsd_stop
events >"$TEST_TMP/e2"
check "a restart with the same config adds nothing" \
	cmp -s "$TEST_TMP/e1" "$TEST_TMP/e2"

write_conf 8
dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "server exits cleanly" dsnfsd_stop
events >"$TEST_TMP/e3"
sed -n '3,$p' "$TEST_TMP/e3"
check "a changed config adds its difference: p1 resized, p2 deleted" \
	test "$(wc -l <"$TEST_TMP/e3")" -eq 4 -a \
	"$(grep -c 'resized *p1 Premium 8 TiB' "$TEST_TMP/e3")" -eq 1 -a \
	"$(grep -c 'deleted *p2' "$TEST_TMP/e3")" -eq 1

printf '\x20\x00\x00\x00torn' >>"$ledger" # a record cut short
dsnfsd_start -c "$TEST_TMP/pools.conf" || exit 1
check "a torn last record is reported at start" \
	grep -q 'torn last record' "$TEST_TMP/dsnfsd.log"
check "server exits cleanly" dsnfsd_stop
events >"$TEST_TMP/e4"
check "and dropped: the events are those before it" \
	cmp -s "$TEST_TMP/e3" "$TEST_TMP/e4"
test_done
