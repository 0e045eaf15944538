# SPDX-License-Identifier: Apache-2.0
"""What one run of perf/bench/ceph.sh cost, per I/O.

    ceph_costs.py OPS TICKS_BEFORE TICKS_AFTER CPU_OUT OSD_BEFORE OSD_AFTER OSD_OUT

TICKS_*: clock ticks of each measured process (cpu_ticks), one number
each: CPU_OUT gets the microseconds of CPU per I/O of each.  OSD_*: the
OSDs' counters (osd_counters: writes, bytes written, reads, bytes read,
deferred writes): OSD_OUT gets writes, KiB a write, reads, KiB a read and
deferred writes per I/O.
"""
import os
import sys

ops = float(sys.argv[1])
hz = os.sysconf("SC_CLK_TCK")
b = [int(x) for x in sys.argv[2].split()]
a = [int(x) for x in sys.argv[3].split()]
us = [(y - x) / hz * 1e6 / ops if ops else 0 for x, y in zip(b, a)]
with open(sys.argv[4], "w") as f:
    f.write(" ".join("%.0f" % u for u in us) + "\n")
ob = [int(x) for x in sys.argv[5].split()]
oa = [int(x) for x in sys.argv[6].split()]
w, wb, r, rb, dfr = (y - x for x, y in zip(ob, oa))


def per(n):
    return n / ops if ops else 0


with open(sys.argv[7], "w") as f:
    f.write("%.2f %.0f %.2f %.0f %.2f\n" % (
        per(w), wb / w / 1024 if w else 0, per(r),
        rb / r / 1024 if r else 0, per(dfr)))
