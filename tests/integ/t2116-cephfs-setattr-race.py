#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""SETATTRs of the size among WRITEs in flight to the same file, on a
cephfs datastore (t2116-cephfs-setattr-race.sh).

    t2116-cephfs-setattr-race.py DSNFSD TEST_TMP PLAIN_CONF RLOG_CONF \
        CEPH_CONF DS GATEWAY KILLS SEED

rlogload.py's mixed load (FILE_SYNC, DATA_SYNC and UNSTABLE WRITEs,
COMMITs, writes over writes in flight) on one file, with one op in eight
a SETATTR that truncates (sometimes to 0) or extends it, sent while
writes of the file are in flight and followed by writes before it is
answered (up to 9 ops in flight).  NFS orders nothing sent together, so
rlogmodel.py checks each byte and the size against every order the
answers allow:

1. No fault, without and then with `intent_log = rados`: every op is
   answered, then the file must read back as some order of the answered
   ops makes it (each byte: zeros or the data of a write that no
   truncate or write sent after its answer covers; the size: one that
   some order gives, exactly).
2. The gateway SIGKILLed under that load (most kills right after a
   truncate is answered): without the log 4 times, its client evicted
   by the MDS before a new gateway starts (the stable writes' fsyncs
   and the SETATTRs' syncs are what must hold); with the RADOS log KILLS
   times, a new one fences and replays the log.  The file must hold
   every acknowledged byte and size change, and no byte that a replayed
   record would put back past a truncate answered after it (a log
   record is replayed only if it lies after the last checkpoint, which
   a size change waits for).
"""
import json
import os
import random
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import Checks, create_retry  # noqa: E402
from rlogload import (Gateway, Writer, kill_at, ops_pending,  # noqa: E402
                      read_back, stats_line)
from rlogmodel import Model, self_test  # noqa: E402

DSNFSD, TMP, PLAIN, RLOG, CEPH_CONF, DS, GW = sys.argv[1:8]
KILLS, SEED = int(sys.argv[8]), int(sys.argv[9])
FILES = 1  # every op on the same file
FILE_MAX = 2 << 20
SETATTR_P = 0.12
ROUND_OPS = 200
NOFAULT_ROUNDS = 2
PLAIN_KILLS = 4  # without the log: each needs an eviction
LIVE = []  # the gateways running, killed if the test ends early


def start(conf, name):
    gw = Gateway(DSNFSD, TMP, conf, DS, name)
    LIVE.append(gw)
    return gw


def verfs(model):
    return {o.verf for h in model.hist for o in h if o.verf is not None}


def nofault(ck, gw, fhs, model, label):
    """NOFAULT_ROUNDS rounds of ROUND_OPS ops, all answered, then the
    file checked against every order of them."""
    for rnd in range(NOFAULT_ROUNDS):
        raced = model.stats["raced"]
        w = Writer(gw, fhs, model, ck, concurrent=True)
        n = 0
        while n < ROUND_OPS:
            n += w.step() is not None
        left = w.drain(60)
        w.close()
        ops = [o for h in model.hist for o in h]
        ck.check("%s, round %d: all %d ops answered as asked" % (
            label, rnd, len(ops)), w.errors == 0 and not left,
            "%d errors; in flight: %s" % (w.errors, ops_pending(left)))
        one = verfs(model)
        bad, named, nread, _ = read_back(gw, fhs, model, nofault=True)
        ck.check("%s, round %d: %d SETATTRs (%d raced a write) and %d "
                 "WRITEs; the file (%d KiB) is what one order of them "
                 "makes (%d bytes not)" % (
                     label, rnd, sum(o.kind == "S" for o in ops),
                     model.stats["raced"] - raced,
                     sum(o.kind == "W" for o in ops), nread >> 10, bad),
                 bad == 0, "seed %d: %s" % (SEED, "; ".join(named)))
        ck.check("%s, round %d: one write verifier" % (label, rnd),
                 len(one) <= 1, repr(one))


def trigger(rng, rnd):
    """Kill point @rnd -> (kind, bytes, ops after) for kill_at: most
    right after a truncate is answered (at once, or with a few writes
    logged after it), one after so many bytes."""
    fixed = [("T", 256 << 10, 0), ("T", 512 << 10, 2),
             ("bytes", 1 << 20, 0), ("T", 128 << 10, 1), ("S", 1 << 20, 0)]
    if rnd < len(fixed):
        return fixed[rnd]
    return (rng.choice(("T", "T", "S", "bytes", "C")),
            rng.randint(64 << 10, 2 << 20), rng.randrange(6))


def evict(pid):
    """Evicts the CephFS client of the dead gateway @pid (an MDS "client
    evict": its caps and session dropped, its address blocklisted), as
    an operator or a takeover does; -> whether it was found."""
    r = subprocess.run(["ceph", "-c", CEPH_CONF, "tell", "mds.a", "session",
                        "ls", "-f", "json"], capture_output=True, text=True)
    for sess in json.loads(r.stdout or "[]"):
        if sess.get("client_metadata", {}).get("pid") == str(pid):
            r = subprocess.run(["ceph", "-c", CEPH_CONF, "tell", "mds.a",
                                "client", "evict", "id=%d" % sess["id"]],
                               capture_output=True, text=True)
            return r.returncode == 0
    return False


def kills(ck, gw, fhs, model, rng, conf, count, label):
    """@count kill points of the gateway on @conf: with the log, a new
    one fences and replays; without, the dead one's client is evicted
    first (nothing else frees its caps before the MDS times it out)."""
    replays_after_cut = 0
    name = gw.name
    for rnd in range(count):
        how = trigger(rng, rnd)
        pid = gw.p.pid
        sent, maybe, errors = kill_at(ck, gw, fhs, model, how,
                                      how[1] + (4 << 20), concurrent=True)
        LIVE.remove(gw)
        ops = [o for h in model.hist for o in h]
        cuts = sum(o.kind == "S" and o.ok and not o.grow for o in ops)
        one = verfs(model)
        if conf == PLAIN:
            ck.check("%s, kill %d: the dead gateway's client evicted" % (
                label, rnd), evict(pid))
        gw = start(conf, name)
        t = gw.text()
        m = re.search(r"replayed (\d+) records", t)
        records = int(m.group(1)) if m else -1
        replays_after_cut += cuts > 0 and records > 0
        bad, named, nread, _ = read_back(gw, fhs, model)
        print("  %s, kill %d (%s %d KiB +%d): %d KiB sent, %d SETATTRs "
              "(%d truncates answered); %d ops in flight at the kill%s; "
              "%s; %d KiB read back" % (
                  label, rnd, how[0], how[1] >> 10, how[2], sent >> 10,
                  sum(o.kind == "S" for o in ops), cuts, len(maybe),
                  " (%s)" % ops_pending(maybe) if maybe else "",
                  "replayed %d records" % records if m else "evicted",
                  nread >> 10))
        ck.check("%s, kill %d: every op before it answered as asked" % (
            label, rnd), errors == 0, "%d did not" % errors)
        if conf == RLOG:
            ck.check("%s, kill %d: the new gateway fenced the old one and "
                     "replayed its log" % (label, rnd),
                     "fenced its clients" in t and m, t[-600:])
        ck.check("%s, kill %d: one write verifier" % (label, rnd),
                 len(one) <= 1, repr(one))
        ck.check("%s, kill %d: no acknowledged byte or size lost, none "
                 "put back past a later truncate (%d bytes outside the "
                 "model)" % (label, rnd, bad), bad == 0,
                 "seed %d: %s" % (SEED, "; ".join(named)))
    if conf == RLOG:
        ck.check("a replay of records after a truncate answered in the "
                 "same round (%d of %d kills)" % (replays_after_cut, count),
                 replays_after_cut > 0 or count < 3)
    return gw


def run(ck, rng, salt):
    model = Model(random.Random(SEED + 1), salt, FILES, FILE_MAX,
                  setattr_p=SETATTR_P)
    gw = start(PLAIN, "p")
    c = gw.client()
    fhs = [create_retry(c, gw.root(), "race%d.bin" % f)
           for f in range(FILES)]
    c.close()
    nofault(ck, gw, fhs, model, "no log")
    gw = kills(ck, gw, fhs, model, rng, PLAIN, PLAIN_KILLS, "no log")
    print("  no log: %s; %d SETATTRs or WRITEs sent beside the other" %
          (stats_line(model), model.stats["raced"]))
    ck.check("the gateway without the log stops cleanly", gw.stop() == 0,
             gw.text()[-400:])
    LIVE.remove(gw)

    model = Model(random.Random(SEED + 2), salt, FILES, FILE_MAX,
                  setattr_p=SETATTR_P)
    gw = start(RLOG, "a")
    c = gw.client()
    fhs = [create_retry(c, gw.root(), "race%d.bin" % f)
           for f in range(FILES)]
    c.close()
    nofault(ck, gw, fhs, model, "RADOS log")
    gw = kills(ck, gw, fhs, model, rng, RLOG, KILLS, "RADOS log")
    print("  RADOS log: %s; %d SETATTRs or WRITEs sent beside the other" %
          (stats_line(model), model.stats["raced"]))
    rc = gw.stop()
    LIVE.remove(gw)
    ck.check("the last gateway stops cleanly and closes the log",
             rc == 0 and re.search(r"closed: \d+ records", gw.text()),
             gw.text()[-400:])
    subprocess.run(["rados", "-c", CEPH_CONF, "-p", "cephfs_data", "rm",
                    "dsnfs.ilog.%s.%s" % (DS, GW)],
                   check=False, capture_output=True)


def main():
    ck = Checks()
    salt = random.Random(SEED).getrandbits(64)
    rng = random.Random(SEED)
    print("seed %d (KILL_SEED=%d reproduces the ops and kill points), "
          "%d kill points" % (SEED, SEED, KILLS))
    t0 = time.monotonic()
    wrong = self_test()
    ck.check("the model refuses what it must and lets through what it may "
             "(its self-test)", not wrong, "judged wrongly: %s" % wrong)
    try:
        run(ck, rng, salt)
    finally:
        for g in LIVE:
            g.kill()
    print("done in %.0f s (seed %d)" % (time.monotonic() - t0, SEED))
    ck.exit()


main()
