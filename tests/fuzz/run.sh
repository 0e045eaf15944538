#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs libFuzzer targets.  tests/fuzz/run.sh FUZZ_BUILD_DIR SECONDS runs
# every target for SECONDS each; --one TARGET SECONDS runs one.  Seeds come
# from tests/fuzz/corpus/<name>/ (name = target without "fuzz_"); new
# inputs go to a scratch copy, so the committed corpus stays small.
set -u
run_target() {
	local target=$1 seconds=$2
	local name
	name=$(basename "$target")
	name=${name#fuzz_}
	local work max_len=65536
	# A replication WRITE holds up to 1 MiB (nfsd/repl/wire.h).
	[ "$name" = repl_msg ] && max_len=$((1100 * 1024))
	work=$(mktemp -d /tmp/dsnfs-fuzz.XXXXXX)
	if [ -d "tests/fuzz/corpus/$name" ]; then
		cp -r "tests/fuzz/corpus/$name/." "$work/"
	fi
	"$target" -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 \
		-artifact_prefix="$work/" -print_final_stats=1 "$work"
	local rc=$?
	if [ $rc -ne 0 ]; then
		echo "fuzz: $name: crash; inputs kept in $work"
		return $rc
	fi
	rm -rf "$work"
	return 0
}

if [ "${1:-}" = "--one" ]; then
	run_target "$2" "$3"
	exit $?
fi
dir=${1:-build/fuzz}
seconds=${2:-60}
rc=0
for f in "$dir"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	run_target "$f" "$seconds" || rc=1
done
exit $rc
