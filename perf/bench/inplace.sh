#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/inplace.sh [BUILD_DIR]: the intent log's per-write choice
# (docs/durability.md, "Large and sequential stable writes") side by side
# in one run, on a quiet machine:
#   ilog      the log with its defaults: large WRITEs and sequential
#             streams fdatasynced in place, small random ones logged
#   ilog-all  the log as before those defaults: every stable WRITE copied
#             into it (both in-place keys at 0)
#   off       no log: pwrite + fsync, group commit per file
#   ganesha   nfs-ganesha (FSAL VFS), when BENCH_INPLACE_GANESHA=1
# First the timed cells (perf/bench/ilog.sh: IOPS, p99, flushes, syscalls
# and CPU per write, medians and ratios), then the counted cost per MiB of
# a 64 KiB sequential FILE_SYNC stream (perf/bench/stablecost.sh: syncs,
# log writes and bytes per MiB acknowledged; no timing, load-independent).
# Needs root.  Environment: as ilog.sh (BENCH_SECONDS [5], BENCH_REPS [3],
# BENCH_ILOG_IODEPTH, BENCH_ILOG_DIR ...); BENCH_INPLACE_CELLS
# ["seq:64k:4 seq:64k:16 seq:16k:4 rand:8k:16"].
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${1:-build}
modes="ilog ilog-all off"
[ "${BENCH_INPLACE_GANESHA:-0}" = 1 ] && modes="$modes ganesha"
BENCH_REPS=${BENCH_REPS:-3} \
	BENCH_ILOG_MODES=$modes \
	BENCH_ILOG_CELLS=${BENCH_INPLACE_CELLS:-seq:64k:4 seq:64k:16 seq:16k:4 rand:8k:16} \
	perf/bench/ilog.sh "$BUILD" || exit 1
echo
STABLECOST_MIB=${STABLECOST_MIB:-64} perf/bench/stablecost.sh "$BUILD"
