#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summarises one dsload run of perf/scale/scale.sh (the light-load phase
of its --json) with the admin API's /flows and /hosts taken during it.

    flows.py DSLOAD_JSON PHASE_INDEX FLOWS_JSON HOSTS_JSON

Prints key=value: flows, total IOPS, per-flow (VMDK = flow here) IOPS
min / median / max and max/min, errors, mismatches, the server/client
IOPS ratio dsload measured over the same interval, and what the server
lists: flows in /flows, hosts in /hosts, flows per host.
"""
import json
import statistics
import sys


def main(argv):
    run = json.load(open(argv[1]))
    phase = run["phases"][int(argv[2])]
    flows = json.load(open(argv[3]))["flows"]
    hosts = json.load(open(argv[4]))
    hosts = hosts["hosts"] if isinstance(hosts, dict) else hosts
    rows = phase["rows"]
    total = next(r for r in rows if r["level"] == "total")
    jobs = [r["iops"] for r in rows if r["level"] == "job"]
    srv = phase.get("server") or {}
    ratio = "n/a"
    if "total" in srv and srv.get("client_same_interval"):
        ratio = "%.3f" % (srv["total"]["iops"] /
                          srv["client_same_interval"]["iops"])
    io_flows = [f for f in flows
                if f["counters"]["read"]["ops"] + f["counters"]["write"]["ops"]]
    per_host = sorted({h["flows"] for h in hosts})
    print("client_flows=%d iops=%.0f flow_iops_min=%.1f flow_iops_median=%.1f "
          "flow_iops_max=%.1f max_over_min=%.2f errors=%d mismatches=%d "
          "server_over_client_iops=%s server_flows=%d server_flows_with_io=%d "
          "server_hosts=%d flows_per_host=%s"
          % (len(jobs), total["iops"], min(jobs), statistics.median(jobs),
             max(jobs), max(jobs) / min(jobs) if min(jobs) else float("inf"),
             total["errors"], total["mismatches"], ratio, len(flows),
             len(io_flows), len(hosts), ",".join(map(str, per_host))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
