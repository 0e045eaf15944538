#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A loaded gateway frozen and taken over by another (t2115-cephfs-rados-log-takeover.sh).

    t2115-cephfs-rados-log-takeover.py DSNFSD TEST_TMP GW_CONF CEPH_CONF \
        DS GATEWAY SEED

Gateway A (intent_log = rados, intent_log_gateway GATEWAY) serves
rlogload.py's mixed load, up to 9 ops in flight over three files; it is
SIGSTOPped with ops in flight: hung, not dead, as a gateway whose host
froze.  Gateway B, another process with a state directory of its own
(A's handle key copied, as an operator gives it) and other ports, is
started with A's intent_log_gateway: it fences A (blocklists the clients
A's log names), replays A's log and serves.  The client moves to B:
every file reads back as rlogmodel.py allows for what A answered.  B
then takes writes of its own, over the ranges A still had in flight
among them, each file COMMITted.  A is resumed (SIGCONT) and runs on:
an answer it sends late must be for a write B's first read already
showed (its record was in the log before the fence), new calls to A are
refused, A logs that it is fenced and shows it in /metrics, and after
5 s the files read through B, and their RADOS objects as the OSDs hold
them, are byte for byte what they were before SIGCONT.
"""
import copy
import os
import random
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (NFS3ERR_JUKEBOX, FILE_SYNC,  # noqa: E402
                      Checks, create_retry, status_name)
from rlogload import (Gateway, Writer, ops_pending, rados_objects,  # noqa
                      read_back, stats_line)
from rlogmodel import Model, self_test  # noqa: E402

DSNFSD, TMP, CONF, CEPH_CONF, DS, GW = sys.argv[1:7]
SEED = int(sys.argv[7])
FILES = 3
FILE_MAX = 5 << 20
A_BYTES = 6 << 20  # A's load before the freeze: past a checkpoint
B_BYTES = 2 << 20
POOL = "cephfs_data"
LIVE = []


def load(w, nbytes):
    while w.sent_bytes < nbytes:
        w.step()


def main():
    ck = Checks()
    model = Model(random.Random(SEED), random.Random(SEED).getrandbits(64),
                  FILES, FILE_MAX)
    print("seed %d (TAKEOVER_SEED=%d reproduces the ops)" % (SEED, SEED))
    wrong = self_test()
    ck.check("the model refuses what it must and lets through what it may "
             "(its self-test)", not wrong, "judged wrongly: %s" % wrong)
    try:
        run(ck, model)
    finally:
        for g in LIVE:
            g.kill()
    ck.exit()


def run(ck, model):
    a = Gateway(DSNFSD, TMP, CONF, DS, "a", admin=True)
    LIVE.append(a)
    t = a.text()
    ck.check("A logs its stable writes in RADOS as gateway %s" % GW,
             "gateway %s" % GW in t, t[-600:])
    root = a.root()
    c = a.client()
    fhs = [create_retry(c, root, "f%d.bin" % f) for f in range(FILES)]
    c.close()

    # A under load, then frozen with ops in flight.
    wa = Writer(a, fhs, model, ck)
    load(wa, A_BYTES)
    a.signal(signal.SIGSTOP)
    frozen = time.monotonic()
    maybe = wa.drain(1)  # what A sent before it stopped
    ck.check("A answered every op before the freeze as asked",
             wa.errors == 0, "%d did not" % wa.errors)
    print("    A: %s; frozen with %d ops in flight (%s)" % (
        stats_line(model), len(maybe), ops_pending(maybe)))

    # B takes A's log over: another process, state and ports.
    Gateway.share_key(TMP, "a", "b")
    b = Gateway(DSNFSD, TMP, CONF, DS, "b")
    LIVE.append(b)
    serving = time.monotonic() - frozen
    t = b.text()
    m = re.search(r"replayed (\d+) records", t)
    ck.check("B fenced A's clients and replayed A's log (%s records)" %
             (m.group(1) if m else "no"),
             "fenced its clients" in t and m, t[-800:])
    # B's model from here; A's late answers go to @model.
    after = copy.deepcopy(model)
    bad, named, nread, first = read_back(b, fhs, after)
    ck.check("B serves %.1f s after the freeze (its start "
             "%.1f s): every file reads back as A answered (%d bytes "
             "not; %d KiB read)" % (serving, b.start_s, bad, nread >> 10),
             bad == 0, "seed %d: %s" % (SEED, "; ".join(named)))

    # B's own writes, over what A still had in flight among them.
    wb = Writer(b, fhs, after, ck)
    over = 0
    for op in maybe:
        if op.kind == "W":
            w = after._new("W", op.f, off=op.off, n=op.n, stable=FILE_SYNC)
            after.end[op.f] = max(after.end[op.f], w.end)
            wb.send(w)
            over += 1
    load(wb, wb.sent_bytes + B_BYTES)
    wb.drain(30)
    for f in range(FILES):
        wb.send(after._new("C", f))
    left = wb.drain(30)
    wb.close()
    ck.check("B answers its %d ops (%d over A's writes in flight) as asked"
             % (len([o for h in after.hist for o in h]), over),
             wb.errors == 0 and not left, "%d errors, %d unanswered" %
             (wb.errors, len(left)))
    bad, named, _, before = read_back(b, fhs, after)
    ck.check("what B answered reads back (%d bytes not)" % bad, bad == 0,
             "; ".join(named))
    cb = b.client()
    ids = [cb.getattr(fh).attributes.fileid for fh in fhs]
    cb.close()
    objs = rados_objects(CEPH_CONF, POOL, ids, 2)

    # A resumes.
    a.signal(signal.SIGCONT)
    wa.ck = None  # a fenced A's refusals are no failure
    left = wa.drain(3)
    late = [op for op in maybe if op not in left]
    # Answered now, by A: acknowledged (when OK), so B's first read must
    # already have shown them; the model of A's ops, not yet checked,
    # takes the answers and checks that read again.
    res = [model.check(f, got, size) for f, (size, got) in
           enumerate(first)]
    bad = sum(r[0] for r in res)
    ck.check("A's late answers (%d, %d OK) are for writes B's first read "
             "showed (%d bytes not)" % (len(late), sum(o.ok for o in late),
                                        bad), bad == 0,
             "answered OK: %s; %s" % (
                 ops_pending([o for o in late if o.ok]),
                 "; ".join(r[1] for r in res if r[1])))
    fenced = a.wait_log(r"cephfs: %s: fenced: another gateway" % DS, 60)
    ck.check("A logs that it is fenced once it runs again", fenced,
             a.text()[-1200:])
    ca = a.client()
    r = ca.write(fhs[0], 0, b"late" * 1024, stable=FILE_SYNC)
    ck.check("a WRITE sent to A after SIGCONT is refused (%s)" %
             status_name(r.status), r.status == NFS3ERR_JUKEBOX)
    r = ca.getattr(fhs[1])
    ck.check("so is a GETATTR (%s)" % status_name(r.status),
             r.status == NFS3ERR_JUKEBOX)
    ca.close()
    mt = a.metrics()
    ck.check("A's /metrics: dsnfs_volume_fenced 1",
             re.search(r'^dsnfs_volume_fenced\{volume="%s"\} 1$' % DS, mt,
                       re.M), "\n".join(l for l in mt.splitlines()
                                        if "volume_fenced" in l))
    time.sleep(5)  # A runs on: anything of its that could land has
    _, _, _, now = read_back(b, fhs, after)
    ck.check("5 s after SIGCONT every file reads through B as before it "
             "(sizes %s)" % [s for s, _ in now], now == before,
             "changed: %s" % [f for f in range(FILES)
                              if now[f] != before[f]])
    ck.check("and the OSDs hold the same %d objects" % len(objs),
             rados_objects(CEPH_CONF, POOL, ids, 2) == objs)
    ck.check("A stops on SIGTERM within 30 s", a.stop(30) is not None)
    LIVE.remove(a)
    ck.check("B stops cleanly", b.stop(60) == 0, b.text()[-400:])
    LIVE.remove(b)
    subprocess.run(["rados", "-c", CEPH_CONF, "-p", POOL, "rm",
                    "dsnfs.ilog.%s.%s" % (DS, GW)],
                   check=False, capture_output=True)


main()
