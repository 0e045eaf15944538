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
logdir=$(mktemp -d /tmp/dsnfs-run.XXXXXX)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Runs one test, prints its line and notes its result in $logdir/results
# (a file, not a variable: fuzz targets run in pairs, one in a subshell).
run_one() {
	local name=$1
	shift
	local start=$SECONDS
	if "$@" >"$logdir/$name.log" 2>&1; then
		printf 'PASS %-44s %3ds\n' "$name" $((SECONDS - start))
		echo "PASS $name" >>"$logdir/results"
	else
		# One write, so a pair's lines do not interleave.
		printf 'FAIL %-44s %3ds\n%s\n' "$name" $((SECONDS - start)) \
			"$(tail -40 "$logdir/$name.log" | sed 's/^/    | /')"
		echo "FAIL $name" >>"$logdir/results"
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
		# Two at a time: each is one busy core for a fixed time and
		# needs no port, so the pair takes the time of one.
		set -- "$fuzz_build"/fuzz/fuzz_*
		while [ $# -gt 0 ]; do
			[ -x "$1" ] || { shift; continue; }
			first=$1
			shift
			if [ $# -gt 0 ] && [ -x "$1" ]; then
				run_one "$(basename "$1")" tests/fuzz/run.sh --one \
					"$1" "${FUZZ_SECONDS_BRIEF:-10}" &
				shift
			fi
			run_one "$(basename "$first")" tests/fuzz/run.sh \
				--one "$first" "${FUZZ_SECONDS_BRIEF:-10}"
			wait
		done
	fi
fi

touch "$logdir/results"
passed=$(grep -c '^PASS' "$logdir/results")
failed=$(grep -c '^FAIL' "$logdir/results")
failed_names=$(sed -n 's/^FAIL / /p' "$logdir/results" | tr -d '\n')
rm -rf "$logdir"
echo
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
