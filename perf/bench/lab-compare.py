#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares profile.csv files of `make lab` runs (quiet, then loaded):
each row's role, target, ratio and residual per run, and the largest
relative spread of its ratio between the runs.

usage: perf/bench/lab-compare.py NAME=DIR/profile.csv ...
"""
import csv
import sys


def main(argv):
    runs = []
    for arg in argv[1:]:
        name, _, path = arg.partition("=")
        with open(path, newline="") as f:
            runs.append((name, {r["id"]: r for r in csv.DictReader(f)}))
    if not runs:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    first = runs[0][1]
    head = "%-3s %-9s %-9s" % ("id", "role", "target")
    for name, rows in runs:
        scale = next(iter(rows.values()))["scale"]
        head += " | %-17s" % ("%s (%.4g)" % (name, float(scale)))
    print(head + " | spread")
    worst = 0.0
    for rid, r in first.items():
        lo, hi = float(r["published_ratio_lo"]), float(r["published_ratio_hi"])
        target = "%.2f" % lo if lo == hi else "%.2f-%.2f" % (lo, hi)
        line = "%-3s %-9s %-9s" % (rid, r["role"], target)
        ratios = []
        for _, rows in runs:
            x = rows[rid]
            ratios.append(float(x["ratio"]))
            line += " | %5.2f %+6.1f%% %-3s" % (
                float(x["ratio"]), 100 * float(x["residual"]), x["pass"])
        spread = (max(ratios) / min(ratios) - 1) if min(ratios) > 0 else 0
        worst = max(worst, spread)
        print(line + " | %4.1f%%" % (100 * spread))
    print("largest spread of a ratio between the runs: %.1f%%" % (100 * worst))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
