#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""perf/bench/table.py RESULTS.tsv: the tables of perf/bench/run.sh.

Reads the raw results (one line per run, written by run.sh) and prints two
tables: the loopback ceiling, then one row per client, corner and flow count
with both servers side by side.  docs/bench.md explains every column.
"""
import collections
import os
import sys

MIB = 1 << 20
GIB = 1 << 30
TICKS = os.sysconf("SC_CLK_TCK")
# The second server: Ganesha, or dsnfsd itself with other [server] keys
# (BENCH_DSNFSD_VARIANTS; run.sh names it in BENCH_B_LABEL).
B_LABEL = os.environ.get("BENCH_B_LABEL", "nfs-ganesha")
SERVERS = ("dsnfsd", "variant" if "BENCH_B_LABEL" in os.environ
           else "ganesha")
CORNER_ORDER = ("NULL", "seq-read", "seq-write", "rand-read", "rand-write")
KIND_ORDER = ("rpc", "qemu", "dsload")


def load(path):
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(head, line.rstrip("\n").split("\t")))
            for k in ("flows", "rep", "ops", "bytes", "cpu_ticks"):
                row[k] = int(float(row[k]))
            row["seconds"] = float(row["seconds"])
            row["p99_us"] = None if row["p99_us"] in ("-", "") \
                else float(row["p99_us"])
            yield row


class Cell:
    """The runs of one server in one (kind, corner, flows) cell."""

    def __init__(self):
        self.runs = []

    def add(self, row):
        self.runs.append(row)

    def ok(self):
        return [r for r in self.runs if r["seconds"] > 0 and r["ops"] > 0]

    def seconds(self):
        return sum(r["seconds"] for r in self.ok())

    def iops(self):
        s = self.seconds()
        return sum(r["ops"] for r in self.ok()) / s if s else None

    def mibps(self):
        s = self.seconds()
        return sum(r["bytes"] for r in self.ok()) / s / MIB if s else None

    def p99_ms(self):
        v = [r["p99_us"] for r in self.ok() if r["p99_us"] is not None]
        return sum(v) / len(v) / 1000.0 if v else None

    def cpu(self, per_op):
        """CPU seconds per GiB moved, or microseconds per op (NULL)."""
        runs = self.ok()
        ticks = sum(r["cpu_ticks"] for r in runs)
        if per_op:
            ops = sum(r["ops"] for r in runs)
            return ticks / TICKS / ops * 1e6 if ops else None
        moved = sum(r["bytes"] for r in runs)
        return ticks / TICKS / (moved / GIB) if moved else None

    def spread(self):
        """Largest distance of one run's rate from the mean, relative."""
        rates = [r["ops"] / r["seconds"] for r in self.ok()]
        if len(rates) < 2:
            return None
        mean = sum(rates) / len(rates)
        return max(abs(x - mean) for x in rates) / mean

    def failed(self):
        return len(self.ok()) < len(self.runs)


def fmt(v, spec, none="-"):
    return none if v is None else format(v, spec)


def render(rows, header):
    widths = [max(len(str(r[i])) for r in [header] + rows)
              for i in range(len(header))]
    out = []
    for n, r in enumerate([header] + rows):
        cells = [str(c).rjust(w) if i > 2 else str(c).ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths))]
        out.append("| " + " | ".join(cells) + " |")
        if n == 0:
            out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


def ceiling_of(ceil, kind, corner, flows):
    """The ceiling a figure is a fraction of, and whether it is MiB/s.

    64 KiB corners: the best TCP stream figure of the run, whatever its
    stream count (iperf3 3.12 drives all its streams from one thread, so
    more streams can carry less); 8 KiB and NULL: the RPC NULL rate at the
    same depth (one connection) or connection count (dsload).
    """
    if corner.startswith("seq-"):
        streams = [v for (c, _), v in ceil.items() if c == "tcp-stream"]
        return (max(streams) if streams else None), True
    if kind == "dsload":
        return ceil.get(("rpc-null-conns", flows)), False
    return ceil.get(("rpc-null-depth", flows)), False


def main():
    cells = collections.defaultdict(lambda: {s: Cell() for s in SERVERS})
    samples = collections.defaultdict(list)
    for row in load(sys.argv[1]):
        if row["kind"] == "ceiling":
            if row["corner"] == "tcp-stream":
                v = row["bytes"] / row["seconds"] / MIB if row["seconds"] \
                    else 0.0
            else:
                v = row["ops"] / row["seconds"] if row["seconds"] else 0.0
            samples[(row["corner"], row["flows"])].append(
                (v, row["p99_us"]))
            continue
        key = (row["kind"], row["corner"], row["flows"])
        cells[key][row["server"]].add(row)

    # The ceiling is the better of its samples (start and end of the run).
    ceil = {}
    ceil_rows = []
    kinds = ("tcp-stream", "rpc-null-depth", "rpc-null-conns")
    for (corner, flows) in sorted(samples, key=lambda k: (
            k[1], kinds.index(k[0]) if k[0] in kinds else 9)):
        vals = samples[(corner, flows)]
        best = max(vals, key=lambda x: x[0])
        ceil[(corner, flows)] = best[0]
        ceil_rows.append([
            corner, str(flows),
            "MiB/s" if corner == "tcp-stream" else "calls/s",
            " / ".join(fmt(v, ".0f") for v, _ in vals),
            fmt(best[0], ".0f"),
            fmt(best[1] / 1000 if best[1] is not None else None, ".3f")])

    print("Ceiling (loopback, no NFS server):")
    print(render(ceil_rows, ["ceiling", "flows", "unit", "start / end",
                             "used", "p99 ms"]))
    streams = [v for (c, _), v in ceil.items() if c == "tcp-stream"]
    if streams:
        print("64 KiB rows are compared with the best TCP stream figure, "
              "%.0f MiB/s." % max(streams))
    print()

    def order(k):
        return (KIND_ORDER.index(k[0]) if k[0] in KIND_ORDER else 9,
                CORNER_ORDER.index(k[1]) if k[1] in CORNER_ORDER else 9,
                k[2])

    rows = []
    for key in sorted(cells, key=order):
        kind, corner, flows = key
        d, g = cells[key][SERVERS[0]], cells[key][SERVERS[1]]
        per_op = corner == "NULL"
        c, is_mib = ceiling_of(ceil, kind, corner, flows)
        di, gi = d.iops(), g.iops()
        ratio = di / gi if di and gi else None

        def frac(cell):
            v = cell.mibps() if is_mib else cell.iops()
            return v / c if v is not None and c else None

        sp = [x for x in (d.spread(), g.spread()) if x is not None]
        flag = " FAILED RUNS" if d.failed() or g.failed() else ""
        rows.append([
            "rpcping" if kind == "rpc" else kind, corner, str(flows),
            fmt(di, ".0f"), fmt(None if per_op else d.mibps(), ".1f"),
            fmt(d.p99_ms(), ".3f"),
            fmt(gi, ".0f"), fmt(None if per_op else g.mibps(), ".1f"),
            fmt(g.p99_ms(), ".3f"),
            fmt(ratio, ".2f") + flag,
            fmt(frac(d), ".2f"), fmt(frac(g), ".2f"),
            fmt(d.cpu(per_op), ".2f") + ("us/op" if per_op else ""),
            fmt(g.cpu(per_op), ".2f") + ("us/op" if per_op else ""),
            fmt(max(sp) * 100 if sp else None, ".0f") + "%",
        ])
    print("dsnfsd (d) against %s (g); IOPS and MiB/s are means " % B_LABEL +
          "over the runs; ratio = d/g IOPS;")
    print("ceil = fraction of the ceiling (64 KiB: the best TCP stream "
          "MiB/s; 8 KiB and NULL: RPC NULL calls/s at the same flows); "
          "CPU = server CPU s per GiB moved.")
    print(render(rows, [
        "client", "corner", "flows",
        "d IOPS", "d MiB/s", "d p99 ms",
        "g IOPS", "g MiB/s", "g p99 ms",
        "d/g", "d ceil", "g ceil", "d CPU s/GiB", "g CPU s/GiB",
        "spread"]))


if __name__ == "__main__":
    main()
