#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the whole suite: unit tests, integration tests, then each fuzz target
# briefly.  Usage: tests/run.sh [--unit-only] BUILD_DIR [FUZZ_BUILD_DIR]
# Ends with one line "N passed, N failed" and exits non-zero on a failure.
set -u
unit_only=0
if [ "${1:-}" = "--unit-only" ]; then
	unit_only=1
	shift
fi
build=${1:-build/san}
fuzz_build=${2:-}
passed=0
failed=0
failed_names=""
logdir=$(mktemp -d /tmp/dsnfs-run.XXXXXX)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {
	local name=$1
	shift
	local start=$SECONDS
	if "$@" >"$logdir/$name.log" 2>&1; then
		passed=$((passed + 1))
		printf 'PASS %-44s %3ds\n' "$name" $((SECONDS - start))
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		printf 'FAIL %-44s %3ds\n' "$name" $((SECONDS - start))
		tail -40 "$logdir/$name.log" | sed 's/^/    | /'
	fi
}

# One Ceph cluster for the cephfs tests of the whole run (test_store_cephfs
# and the integration tests; those in a network namespace of their own
# start theirs): started before the unit tests, stopped after the
# integration tests, its PIDs only.  --unit-only: none (test_store_cephfs
# skips).
ceph_dir=""
ceph_start() {
	command -v ceph-mon >/dev/null || return 0
	ceph_dir=$(mktemp -d /tmp/dsnfs-ceph.XXXXXX)
	local start=$SECONDS
	if tests/ceph/cluster.sh start "$ceph_dir" >"$logdir/ceph.log" 2>&1; then
		export DSNFS_CEPH_CONF=$ceph_dir/ceph.conf
		printf 'ceph cluster up in %ds (%s)\n' $((SECONDS - start)) "$ceph_dir"
	else
		echo "ceph cluster did not start; the cephfs tests start their own:"
		tail -20 "$logdir/ceph.log" | sed 's/^/    | /'
	fi
}
ceph_stop() {
	[ -n "$ceph_dir" ] || return 0
	tests/ceph/cluster.sh stop "$ceph_dir"
	rm -rf "$ceph_dir"
	ceph_dir=""
}
trap ceph_stop EXIT

[ $unit_only = 0 ] && ceph_start
echo "== unit tests ($build/tests)"
for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done


if [ $unit_only = 0 ]; then
	echo "== integration tests (tests/integ)"
	for t in tests/integ/t[0-9]*.sh; do
		[ -f "$t" ] || continue
		run_one "$(basename "$t" .sh)" env DSNFS_BIN="$build/bin" \
			bash "$t"
	done
	ceph_stop
	if [ -n "$fuzz_build" ]; then
		echo "== fuzz targets, briefly ($fuzz_build/fuzz)"
		for f in "$fuzz_build"/fuzz/fuzz_*; do
			[ -x "$f" ] || continue
			run_one "$(basename "$f")" tests/fuzz/run.sh --one "$f" \
				"${FUZZ_SECONDS_BRIEF:-10}"
		done
	fi
fi

rm -rf "$logdir"
echo
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
