#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Live service-level changes under load (t6002-pool-live-change.sh).

Four clients read ds1 for 9 s on four connections.  At 3 s the config
is rewritten (pool lab: Standard -> Premium) and the server gets SIGHUP;
at 6 s ds1 moves to the manual pool man at 24 MiB/s.  Each phase is
measured from 1 s after its change to its end, and no connection may
break.  Upper bounds are strict (limit + 5%); lower ones loose.

With --bad: a config that breaks a pool rule (quotas over the pool's
size) is refused on SIGHUP; ds1 keeps its 24 MiB/s.

    t6002-pool-live-change.py NFS_PORT MOUNT_PORT PID CONF [--bad]
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import Checks  # noqa: E402
from poolload import Load, root_of, sleep_until, sparse_file  # noqa: E402

KIB = 1024
PREMIUM = """[pool lab]
level = premium
size_tib = 2

[datastore ds1]
pool = lab
quota = 1TiB
"""
MOVED = """[pool lab]
level = premium
size_tib = 2

[pool man]
level = standard
size_tib = 4
qos = manual

[datastore ds1]
pool = man
quota = 1TiB
throughput_mibps = 24
"""
# 3 TiB of quotas in a 2 TiB pool: refused as a whole.
BAD = MOVED.replace("pool = man\nquota = 1TiB\nthroughput_mibps = 24",
                    "pool = lab\nquota = 3TiB")


def reconfigure(pid, conf, text):
    with open(conf + ".new", "w") as f:
        f.write(text)
    os.rename(conf + ".new", conf)
    os.kill(pid, signal.SIGHUP)
    return time.monotonic()


def phase(ck, res, name, t0, t1, limit, low):
    got = res.mibps("ds1", t0, t1)
    print("  %s: %.2f MiB/s (limit %.0f)" % (name, got, limit))
    ck.check("%s: at most %.0f MiB/s + 5%%" % (name, limit),
             got <= limit * 1.05, "%.2f" % got)
    ck.check("%s: at least %.0f MiB/s" % (name, low), got >= low, "%.2f" % got)


def readers(nfs_port, fh, seconds):
    load = Load(nfs_port)
    for _ in range(4):
        load.add(fh, "read", 256 * KIB, "ds1")
    return load, load.start(seconds)


def main():
    nfs_port, mount_port = int(sys.argv[1]), int(sys.argv[2])
    pid, conf = int(sys.argv[3]), sys.argv[4]
    ck = Checks()
    root = root_of(mount_port, "ds1")
    fh = sparse_file(nfs_port, root, "disk.img")

    if "--bad" in sys.argv:
        load, t0 = readers(nfs_port, fh, 4)
        sleep_until(t0 + 1)
        reconfigure(pid, conf, BAD)
        res = load.wait()
        ck.check("no connection broke", not res.errors, "; ".join(res.errors))
        phase(ck, res, "after a refused config", t0 + 2, t0 + 4, 24, 24 * 0.8)
        ck.exit()

    load, t0 = readers(nfs_port, fh, 9)
    sleep_until(t0 + 3)
    t_premium = reconfigure(pid, conf, PREMIUM)
    sleep_until(t0 + 6)
    t_moved = reconfigure(pid, conf, MOVED)
    res = load.wait()
    ck.check("no connection broke", not res.errors, "; ".join(res.errors))
    phase(ck, res, "Standard, 1 TiB", t0 + 1, t0 + 3, 16, 16 * 0.8)
    # Up: the clients may not reach 64 on a loaded machine; that it more
    # than doubled within a second is the point.
    phase(ck, res, "Premium, 1 TiB", t_premium + 1, t0 + 6, 64, 32)
    phase(ck, res, "moved to manual 24", t_moved + 1, t0 + 9, 24, 24 * 0.8)
    ck.exit()


if __name__ == "__main__":
    main()
