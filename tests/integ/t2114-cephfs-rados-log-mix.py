#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The RADOS intent log killed under a mixed load (t2114-cephfs-rados-log-mix.sh).

    t2114-cephfs-rados-log-mix.py DSNFSD TEST_TMP GW_CONF CEPH_CONF DS \
        GATEWAY KILL_POINTS SEED

t2113's method with every kind of op that changes a file: WRITEs
FILE_SYNC, DATA_SYNC and UNSTABLE, COMMITs, SETATTRs that truncate or
extend, writes that extend the files (past holes, across the 4 MiB
objects) and writes over writes still in flight (rlogload.py, up to 9
in flight over three files).  The gateway is SIGKILLed at a seeded
point: after so many bytes sent, or right after a SETATTR or a COMMIT is
answered (a few ops later or at once: the records after it are what the
replay puts back), a new gateway with the same intent_log_gateway fences
and replays, and each file is read back and checked by rlogmodel.py's
rules (what may be read: the acknowledged-last rule, COMMIT's verifier,
the size).  0 bytes outside them is the only pass.
"""
import os
import random
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import Checks, create_retry  # noqa: E402
from rlogload import (Gateway, kill_at, ops_pending, read_back,  # noqa: E402
                      stats_line)
from rlogmodel import Model, self_test  # noqa: E402

DSNFSD, TMP, CONF, CEPH_CONF, DS, GW = sys.argv[1:7]
POINTS, SEED = int(sys.argv[7]), int(sys.argv[8])
RING = 8 << 20  # intent_log_mib in the .sh
FILES = 3
FILE_MAX = 5 << 20
LIVE = []  # the gateway running, killed if the test ends early


def trigger(rng, rnd):
    """Round @rnd's kill point -> (kind, bytes, ops after): after @bytes
    sent, at once ("bytes") or once a SETATTR ("S") or COMMIT ("C") is
    answered, then @ops after more ops.  Rounds 0-4 are fixed: a
    truncate or extend, a COMMIT, the ring wrapped twice, early, a
    SETATTR late in a full ring."""
    fixed = [("S", 512 << 10, 6), ("C", 256 << 10, 0),
             ("bytes", int(RING * 2.2), 0), ("bytes", 256 << 10, 0),
             ("S", 3 * RING // 2, 0)]
    if rnd < len(fixed):
        return fixed[rnd]
    kind = rng.choice(("bytes", "bytes", "S", "C"))
    return (kind, int(RING * rng.uniform(0.02, 1.5)), rng.randrange(12))


def kill_round(ck, gw, fhs, model, rng, rnd):
    """Runs the load until the round's kill point, SIGKILLs the gateway
    -> (bytes sent, the ops left in flight, the round's ops)."""
    kind, point, after = how = trigger(rng, rnd)
    # Without its event within three rings more, it is killed anyway.
    sent, maybe, errors = kill_at(ck, gw, fhs, model, how, point + 3 * RING)
    LIVE.remove(gw)
    ck.check("round %d: every op before the kill answered as asked" % rnd,
             errors == 0, "%d did not" % errors)
    return sent, maybe, "%s %d KiB +%d" % (kind, point >> 10, after)


def main():
    ck = Checks()
    salt = random.Random(SEED).getrandbits(64)
    rng = random.Random(SEED)
    model = Model(random.Random(SEED + 1), salt, FILES, FILE_MAX)
    print("seed %d (KILL_SEED=%d reproduces the kill points and the ops), "
          "%d kill points" % (SEED, SEED, POINTS))
    t0 = time.monotonic()
    wrong = self_test()
    ck.check("the model refuses what it must and lets through what it may "
             "(its self-test)", not wrong, "judged wrongly: %s" % wrong)
    try:
        run(ck, model, rng)
    finally:
        for g in LIVE:
            g.kill()
    print("%s over %d kill points in %.0f s (seed %d)" % (
        stats_line(model), POINTS, time.monotonic() - t0, SEED))
    ck.exit()


def start():
    gw = Gateway(DSNFSD, TMP, CONF, DS, "a")
    LIVE.append(gw)
    return gw


def run(ck, model, rng):
    gw = start()
    root = gw.root()
    c = gw.client()
    fhs = [create_retry(c, root, "f%d.bin" % f) for f in range(FILES)]
    c.close()
    lost_total = 0
    after_size = wrapped = 0
    for rnd in range(POINTS):
        sent, maybe, how = kill_round(ck, gw, fhs, model, rng, rnd)
        ops = [o for h in model.hist for o in h]
        verfs = {o.verf for o in ops if o.verf is not None}
        sized = any(o.kind == "S" and o.ok for o in ops)
        gw = start()
        t = gw.text()
        m = re.search(r"replayed (\d+) records .*LSN (\d+) to (\d+)", t)
        records, head, end = map(int, m.groups()) if m else (-1, 0, 0)
        wrapped += end > RING
        after_size += sized and records > 0
        bad, named, nread, _ = read_back(gw, fhs, model)
        lost_total += bad
        print("  round %d (%s): %d KiB sent, %d SETATTR%s answered; %d "
              "ops in flight at the kill%s; replayed %d records, LSN %d "
              "to %d; %d KiB read back" % (
                  rnd, how, sent >> 10,
                  sum(o.kind == "S" and o.ok for o in ops),
                  "" if sized else "s", len(maybe),
                  " (%s)" % ops_pending(maybe) if maybe else "", records,
                  head, end, nread >> 10))
        ck.check("round %d: the new gateway fenced the old one and "
                 "replayed its log" % rnd,
                 "fenced its clients" in t and m, t[-600:])
        ck.check("round %d: one write verifier for all replies" % rnd,
                 len(verfs) <= 1, repr(verfs))
        ck.check("round %d: every file reads back as the model allows (%d "
                 "bytes not)" % (rnd, bad), bad == 0,
                 "seed %d: %s" % (SEED, "; ".join(named)))
    ck.check("a kill after the ring wrapped (%d of %d)" % (wrapped, POINTS),
             wrapped > 0 or POINTS < 3)
    ck.check("a replay after a SETATTR of the size in the same round (%d "
             "of %d)" % (after_size, POINTS), after_size > 0 or POINTS < 5)
    ck.check("0 bytes outside the model over %d kill points (%s)" %
             (POINTS, stats_line(model)), lost_total == 0, "seed %d" % SEED)
    rc = gw.stop()
    LIVE.remove(gw)
    ck.check("the last gateway stops cleanly and closes the log",
             rc == 0 and re.search(r"closed: \d+ records", gw.text()),
             gw.text()[-400:])
    subprocess.run(["rados", "-c", CEPH_CONF, "-p", "cephfs_data", "rm",
                    "dsnfs.ilog.%s.%s" % (DS, GW)],
                   check=False, capture_output=True)


main()
