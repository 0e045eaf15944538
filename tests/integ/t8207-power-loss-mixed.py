#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Power loss under the log's per-write choice: its default size rule and
the stream rule on (16 KiB), so both in-place paths meet power cuts.

    t8207-power-loss-mixed.py DSNFSD SCRATCH CRASH_POINTS OPS [DEPTH]

As t8205 (its disk, powerfs.py, crash images and checks, imported from
t8205-power-loss.py), with the intent log on and no in-place key set: the
defaults decide.  One client sends OPS FILE_SYNC writes of one file, one
after the other, in a 4 MiB region: a sequential stream of 64 KiB writes
(in place by size) and 16 KiB writes (in place as the stream's next when
near its last write, else logged), wrapping at the region's end, mixed
with random 8 KiB writes (logged) anywhere in it, so the stream goes over
logged blocks not yet checkpointed and logged blocks over the stream's.
At each crash point every acknowledged write must read back (its data or
a later write's over the same block): replay must not put an older logged
record back over newer bytes synced in place.  With DEPTH (1) WRITEs in
flight (more than 1: the stream alone, 64 and 16 KiB, so no log flush
covers a direct write that skipped its own), never two that overlap, the
stream's direct writes reach the log's io_uring together and may go down
merged (store/dring.c): each must be answered only once its own bytes
are on the disk.  (The disk here sees
4 KiB writes, so a merge does not show in its log; t8204 counts them.)
"""
import importlib.util
import os
import random
import re
import shutil
import struct
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from nfs3wire import (FILE_SYNC, NFS3_OK, NFS_PROGRAM, NFS_V3, Checks,  # noqa: E402
                      MountClient, Nfs3Client, call_header, decode_write,
                      encode_args, parse_reply)

_spec = importlib.util.spec_from_file_location(
    "t8205", os.path.join(HERE, "t8205-power-loss.py"))
t8205 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(t8205)
BLOCK = t8205.BLOCK

REGION_BLOCKS = 1024  # 4 MiB
SEQ_BIG, SEQ_SMALL, RAND = 16, 4, 2  # blocks: 64, 16, 8 KiB


def plan(ops, mixed=True):
    """[(offset block, blocks)] of the writes, seeded: the same run twice.
    mixed=False: the stream alone (no logged random writes, whose log
    flushes would cover a direct write that skipped its own)."""
    rng = random.Random(8207)
    seq, out = 0, []
    for n in range(ops):
        kind = n % 4 if mixed else n % 2 * 2
        if kind in (1, 3):
            out.append((rng.randrange(0, REGION_BLOCKS - RAND), RAND))
            continue
        count = SEQ_BIG if kind == 0 else SEQ_SMALL
        if seq + count > REGION_BLOCKS:
            seq = 0
        out.append((seq, count))
        seq += count
    return out


def direct_fd_open(pid, name):
    """Whether process @pid holds file @name open O_DIRECT: the in-place
    writes over written blocks took local_direct.c's path."""
    fds = "/proc/%d/fd" % pid
    for fd in os.listdir(fds):
        try:
            target = os.readlink(os.path.join(fds, fd))
            info = open("/proc/%d/fdinfo/%s" % (pid, fd)).read()
        except OSError:
            continue
        flags = int(re.search(r"flags:\s+([0-7]+)", info).group(1), 8)
        if target.endswith("/" + name) and flags & os.O_DIRECT:
            return True
    return False


class Pipeline:
    """One connection keeping up to @depth FILE_SYNC WRITEs in flight:
    WRITE n goes once WRITE n - depth is answered (t8205.must_survive's
    rule) and no WRITE in flight overlaps it (two that overlap may land
    in either order)."""

    def __init__(self, c, fh, depth):
        self.c, self.fh, self.depth = c, fh, depth
        self.out = {}  # xid -> (n, first block, blocks)
        self.done = set()
        self.verf = None

    def reply(self):
        data = self.c.recv_message()
        xid = struct.unpack(">I", data[:4])[0]
        n, _, _ = self.out.pop(xid)
        u = parse_reply(data, xid)
        status = u.u32()
        r = decode_write(u, status)
        if status != NFS3_OK or r["committed"] != FILE_SYNC:
            raise RuntimeError("FILE_SYNC WRITE %d: %d" % (n, status))
        self.verf = r["verf"]
        self.done.add(n)

    def busy(self, n, at, count):
        return n - self.depth >= 0 and n - self.depth not in self.done or \
            any(a < at + count and at < a + k for _, a, k in self.out.values())

    def run(self, ops):
        c = self.c
        for n, (at, count) in enumerate(ops):
            while self.busy(n, at, count):
                self.reply()
            data = b"".join(t8205.block(0, n, k) for k in range(count))
            c.xid = (c.xid + 1) & 0xFFFFFFFF
            c.send_message(call_header(c.xid, NFS_PROGRAM, NFS_V3, 7, c.cred)
                           + encode_args(7, self.fh, at * BLOCK, data,
                                         FILE_SYNC))
            self.out[c.xid] = (n, at, count)
        while self.out:
            self.reply()
        return self.verf


def live_run(binary, scratch, conf, ops, depth):
    """The run before the cut: (handles, acked, verifier, whether the
    writes went O_DIRECT too) as t8205's, @depth WRITEs in flight."""
    pfs, disk, fuse = t8205.power_on(scratch)
    t8205.run("sync", "-f", disk.mnt)
    proc, nfs_port, mount_port = t8205.start_dsnfsd(
        binary, disk.mnt, conf(disk.mnt), os.path.join(scratch, "dsnfsd.log"))
    m = MountClient((t8205.HOST, mount_port))
    root = m.mnt("/ds1").fhandle
    m.close()
    c = Nfs3Client((t8205.HOST, nfs_port))
    fh = [c.create(root, "a").object]
    ops = plan(ops, mixed=depth == 1)
    verf = Pipeline(c, fh[0], depth).run(ops)
    acked = [(0, at * BLOCK, count) for at, count in ops]
    c.close()
    direct = direct_fd_open(proc.pid, "a")
    t8205.power_cut(proc, pfs, disk, fuse)
    return fh, acked, verf, direct


def main():
    binary, scratch = sys.argv[1], sys.argv[2]
    points, ops = int(sys.argv[3]), int(sys.argv[4])
    depth = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    ck = Checks()
    os.makedirs(scratch)
    base = os.path.join(scratch, "base.img")
    with open(base, "wb") as f:
        f.truncate(t8205.DISK_MIB << 20)
    t8205.run("mkfs.ext4", "-q", "-F", "-E",
              "lazy_itable_init=0,lazy_journal_init=0", base)
    shutil.copyfile(base, os.path.join(scratch, "disk.img"))

    def conf(root):
        # No in-place key: the defaults choose.
        path = os.path.join(scratch, "dsnfsd.conf")
        with open(path, "w") as out:
            out.write("[server]\nintent_log = %s/intent.log\n"
                      "intent_log_mib = 8\n"
                      "intent_log_inplace_sequential_min_bytes = 16384\n"
                      % root)
        return path

    t0 = time.monotonic()
    fh, acked, verf, direct = live_run(binary, scratch, conf, ops, depth)
    live_s = time.monotonic() - t0
    ck.check("the stream's writes over written blocks went O_DIRECT "
             "(intent_log_inplace_direct, on by default)", direct)
    recs, first = t8205.read_log(os.path.join(scratch, "power.log"))
    start = min(first.values()) if first else len(recs)
    flushes = [i for i, r in enumerate(recs) if r[0] == b"F" and i > start]
    ck.check("the run acknowledged %d FILE_SYNC writes (64, 16 and 8 KiB), "
             "the disk saw %d writes and %d flushes"
             % (len(acked), len(recs) - len(flushes), len(flushes)),
             len(acked) == ops and len(flushes) >= points)
    t1 = time.monotonic()
    picks, checked, needed, lost = t8205.crash_points(
        binary, scratch, conf, base, (recs, first, flushes),
        (fh, acked, verf), points, depth)
    ck.check("%d crash points, %d acknowledged writes checked in all, none "
             "lost, the handle valid, a new verifier" % (checked, needed),
             checked == len(picks) and checked >= min(points, 100) and
             not lost, str(lost[:3]))
    log = open(os.path.join(scratch, "replay.log")).read()
    kept = [int(k) for k in re.findall(
        r"ranges synced in place, (\d+) records kept off them", log)]
    if depth == 1:
        ck.check("writes in place over logged blocks: replay kept older "
                 "records off them at %d crash points (at most %d records)"
                 % (sum(1 for k in kept if k), max(kept, default=0)),
                 any(kept))
    ck.check("the last crash point needs every write but the last %d"
             % depth,
             len(t8205.must_survive(acked, first, flushes[-1], depth)) >=
             len(acked) - depth)
    print("live run %.1f s (%d writes), replay %.1f s"
          % (live_s, len(acked), time.monotonic() - t1))
    ck.exit()


if __name__ == "__main__":
    main()
