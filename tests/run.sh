#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the whole suite: unit tests, integration tests, and each fuzz target
# briefly.  Usage: tests/run.sh [--unit-only] BUILD_DIR [FUZZ_BUILD_DIR]
# Ends with one line "N passed, N failed" and exits non-zero on a failure.
#
# Two lanes at once (docs/testing.md, "Two lanes"): lane 2 takes the long
# tests that mostly wait (a QEMU guest, a Ceph cluster: in_lane2 below)
# and the suite's Ceph cluster with the tests that use it, so those run
# one at a time; lane 1 the other unit and integration tests, in order,
# then the fuzz targets beside the rest of lane 2.  Each lane prints
# whole lines, under a lock.  TEST_LANES=1: one lane, the old order.
#
# TEST_FUZZ_BUILD=CMD: the command that builds FUZZ_BUILD_DIR (make test
# passes its fuzz build); it runs at nice 19 beside the tests, and the
# fuzz targets wait for it.
set -u
unit_only=0
if [ "${1:-}" = "--unit-only" ]; then
	unit_only=1
	shift
fi
build=${1:-build/san}
fuzz_build=${2:-}
lanes=${TEST_LANES:-2}
logdir=$(mktemp -d /tmp/dsnfs-run.XXXXXX)
run_t0=$SECONDS

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Lane 2: the unit tests of the cephfs backend that use the suite's
# cluster, every CephFS test (t21xx: the suite's
# cluster, one test at a time), QEMU on CephFS (t3101), the kernel client
# in a guest (t4xxx: t4001, the replication drill t4002), the admin
# endpoint's walls (t6105), ESXi's APD
# timers (t7007).  Their ports are the kernel's picks (lib.sh, -p 0) or
# in a network namespace of their own (netns.sh: port 111, QEMU's
# portmapper), as are lane 1's; their files are under mktemp -d.
in_lane2() {
	case "$1" in
	test_store_cephfs_health | test_store_cephfs_asok) return 1 ;; # no cluster: fakes
	test_store_cephfs | test_store_cephfs_*) return 0 ;;
	t21[0-9][0-9]-* | t3101-* | t4[0-9][0-9][0-9]-* | t6105-* | t7007-*) return 0 ;;
	esac
	return 1
}

# Prints its arguments (printf's) as one block under a lock: the lanes'
# lines do not interleave, a FAIL's log tail stays under its line.
say() {
	{
		flock 8
		# shellcheck disable=SC2059
		printf "$@"
	} 8>>"$logdir/out.lock"
}

# Runs one test, prints its line and notes its result in $logdir/results
# (a file, not a variable: the lanes and the fuzz pairs are subshells).
run_one() {
	local name=$1
	shift
	local start=$SECONDS
	if "$@" >"$logdir/$name.log" 2>&1; then
		say 'PASS %-44s %3ds\n' "$name" $((SECONDS - start))
		echo "PASS $name" >>"$logdir/results"
	else
		# The failed checks with the lines before each (what the
		# command said), then the log's end: a failure early in a
		# long test is not lost below the tail.
		say 'FAIL %-44s %3ds\n%s\n    | ...\n%s\n' "$name" \
			$((SECONDS - start)) \
			"$(grep -B4 -E '^ *(FAIL|not ok)' "$logdir/$name.log" |
				head -60 | sed 's/^/    | /')" \
			"$(tail -40 "$logdir/$name.log" | sed 's/^/    | /')"
		echo "FAIL $name" >>"$logdir/results"
	fi
}

# One Ceph cluster for the cephfs tests of the whole run (test_store_cephfs
# and the integration tests; those in a network namespace of their own
# start theirs): started before the first of them, stopped after the
# integration tests, its PIDs only.  Its directory is made here, so the
# exit trap stops it whichever lane started it.  --unit-only: none
# (test_store_cephfs skips).
ceph_dir=""
if [ $unit_only = 0 ] && command -v ceph-mon >/dev/null; then
	ceph_dir=$(mktemp -d /tmp/dsnfs-ceph.XXXXXX)
fi
ceph_start() {
	[ -n "$ceph_dir" ] || return 0
	local start=$SECONDS
	if tests/ceph/cluster.sh start "$ceph_dir" >"$logdir/ceph.log" 2>&1; then
		export DSNFS_CEPH_CONF=$ceph_dir/ceph.conf
		say 'ceph cluster up in %ds (%s)\n' $((SECONDS - start)) "$ceph_dir"
	else
		say 'ceph cluster did not start; the cephfs tests start their own:\n%s\n' \
			"$(tail -20 "$logdir/ceph.log" | sed 's/^/    | /')"
	fi
}
ceph_stop() {
	[ -n "$ceph_dir" ] || return 0
	tests/ceph/cluster.sh stop "$ceph_dir"
	rm -rf "$ceph_dir"
	ceph_dir=""
}

# The fuzz build, at nice 19 beside the tests: it takes what CPU they
# leave (most of a lane's time is waiting).
fuzz_build_pid=""
if [ $unit_only = 0 ] && [ -n "$fuzz_build" ] && [ -n "${TEST_FUZZ_BUILD:-}" ]; then
	nice -n 19 bash -c "$TEST_FUZZ_BUILD" >"$logdir/fuzz-build.log" 2>&1 &
	fuzz_build_pid=$!
fi

lane_pids=""
on_exit() {
	local pid
	for pid in $lane_pids $fuzz_build_pid; do
		kill "$pid" 2>/dev/null
	done
	ceph_stop
}
trap on_exit EXIT

# The unit tests (those of lane 2 only where @1 is 2; all of them where
# @1 is "all"), then the integration tests of the same lane, in order.
lane() {
	local which=$1 t name start=$SECONDS label="lane $1: "
	[ "$which" != all ] || label=""
	case "$which" in all | 2) ceph_start ;; esac
	say '== %sunit tests (%s/tests)\n' "$label" "$build"
	for t in "$build"/tests/test_*; do
		[ -x "$t" ] || continue
		name=$(basename "$t")
		case "$which" in
		1) in_lane2 "$name" && continue ;;
		2) in_lane2 "$name" || continue ;;
		esac
		run_one "$name" "$t"
	done
	if [ $unit_only = 0 ]; then
		say '== %sintegration tests (tests/integ)\n' "$label"
		for t in tests/integ/t[0-9]*.sh; do
			[ -f "$t" ] || continue
			name=$(basename "$t" .sh)
			case "$which" in
			1) in_lane2 "$name" && continue ;;
			2) in_lane2 "$name" || continue ;;
			esac
			run_one "$name" env DSNFS_BIN="$build/bin" bash "$t"
		done
	fi
	say '== %sdone in %ds\n' "$label" $((SECONDS - start))
}

# The fuzz targets, briefly, once their build is done: two at a time
# (each is one busy core for a fixed time and needs no port, so the pair
# takes the time of one), at nice 19, so that beside lane 2 its tests,
# which mostly wait on a cluster or a guest, come first.
fuzz_briefly() {
	local start first pair
	[ $unit_only = 0 ] || return 0
	if [ -n "$fuzz_build_pid" ]; then
		start=$SECONDS
		if wait "$fuzz_build_pid"; then
			say 'fuzz build done (%ds more after lane 1)\n' $((SECONDS - start))
		else
			say 'FAIL %-44s\n%s\n' fuzz-build \
				"$(tail -40 "$logdir/fuzz-build.log" | sed 's/^/    | /')"
			echo "FAIL fuzz-build" >>"$logdir/results"
			fuzz_build=""
		fi
		fuzz_build_pid=""
	fi
	[ -n "$fuzz_build" ] || return 0
	say '== fuzz targets, briefly (%s/fuzz)\n' "$fuzz_build"
	set -- "$fuzz_build"/fuzz/fuzz_*
	while [ $# -gt 0 ]; do
		[ -x "$1" ] || { shift; continue; }
		first=$1
		shift
		pair=""
		if [ $# -gt 0 ] && [ -x "$1" ]; then
			run_one "$(basename "$1")" nice -n 19 tests/fuzz/run.sh \
				--one "$1" "${FUZZ_SECONDS_BRIEF:-10}" &
			pair=$!
			shift
		fi
		run_one "$(basename "$first")" nice -n 19 tests/fuzz/run.sh \
			--one "$first" "${FUZZ_SECONDS_BRIEF:-10}"
		# Not a bare wait: lane 2 is a job of this shell too.
		[ -z "$pair" ] || wait "$pair"
	done
}

if [ $unit_only = 1 ] || [ "$lanes" = 1 ]; then
	lane all
	fuzz_briefly
else
	lane 2 </dev/null &
	lane_pids=$!
	lane 1
	fuzz_briefly
	wait "$lane_pids"
	lane_pids=""
fi
ceph_stop

touch "$logdir/results"
passed=$(grep -c '^PASS' "$logdir/results")
failed=$(grep -c '^FAIL' "$logdir/results")
failed_names=$(sed -n 's/^FAIL / /p' "$logdir/results" | tr -d '\n')
rm -rf "$logdir"
echo
echo "the suite took $((SECONDS - run_t0)) s"
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
