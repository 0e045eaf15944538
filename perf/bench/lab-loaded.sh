#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make lab on a busy machine: stress-ng --cpu N (LOADED_CPUS, 8: a load
# of about 10 on two cores, as on a shared box) runs beside the whole
# profile, ceiling included, and is stopped by its PID afterwards.
# Usage: perf/bench/lab-loaded.sh BUILD OUT  (docs/dsload.md, "On a busy
# machine").  Exit status: the profile's.
set -u
build=${1:-build}
out=${2:-var/lab-loaded}
cpus=${LOADED_CPUS:-8}
command -v stress-ng >/dev/null || { echo "lab-loaded: stress-ng missing (make deps)" >&2; exit 2; }
stress-ng --cpu "$cpus" --timeout 900 >/dev/null 2>&1 &
stress=$!
trap 'kill $stress 2>/dev/null; wait $stress 2>/dev/null' EXIT INT TERM
sleep 3
echo "lab-loaded: stress-ng --cpu $cpus (pid $stress); $(cat /proc/loadavg)"
"$build/bin/dsload" profile anf-avs --server-config etc/lab/anf-avs.conf \
	--dsnfsd "$build/bin/dsnfsd" --out "$out"
rc=$?
echo "lab-loaded: done; $(cat /proc/loadavg)"
exit $rc
