# SPDX-License-Identifier: Apache-2.0
"""What /proc says of a process, for the tests and benchmarks that measure
a server's memory (t8106, perf/scale/idlebuf.py)."""


def rss_kib(pid):
    """The resident set of process pid, in KiB (VmRSS)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for pid %d" % pid)
