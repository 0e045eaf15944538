#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Power loss: what dsnfsd acknowledged survives a cut at any flush.

    t8205-power-loss.py DSNFSD SCRATCH on|off CRASH_POINTS OPS

SIGKILL (t8201) leaves the page cache; a power cut loses everything the
disk had not flushed.  Here the datastore, its state directory and (with
`on`) the intent log live on ext4 on a loop device over powerfs.py, a FUSE
file that logs every write and every flush.  A client runs OPS durable
operations on one connection, one after the other: FILE_SYNC writes of
file a (every fourth of them 64 KiB, over the last 32 KiB written before
it and 32 KiB new: with the log on, a large write is synced in place and
replay must not put the older logged blocks back over it), two UNSTABLE
writes of file b followed by their COMMIT, FILE_SYNC writes of file p
(thick: written and synced before dsnfsd starts, as a thick VMDK), 64 KiB
overwrites each over half the one before and a 4 KiB one inside the last,
which the next covers, and now and then a CREATE; each 4 KiB block
carries a tag naming its operation.  Then the log is replayed
onto the starting image up to CRASH_POINTS of its flushes (spread over
the run, and the last); each image is what the disk held had the power
gone right after that flush.  On each, dsnfsd starts (replaying its intent
log), and every operation that must have survived is read back, through
the handles the client held before the cut: each of its blocks holds its
own data or that of a later operation over the same block.  dsnfsd then
stops with status 0 (at the last point with ASan's leak check; the others
skip it, which took most of a point's time).

Which must survive: operation n was acknowledged before the client sent
operation n + 1; if any byte of n + 1 reached the disk (its tag is in the
log) before the flush, the flush came after n's acknowledgement, and n's
data (made durable before it was acknowledged) is below it.  So: every n
whose successor's first tag precedes the crash point.  Each image is
also the disk just before the *next* flush ended, with every write since
this one lost in its volatile cache: so the successor's tag may precede
that next flush, not only this one.  A write acknowledged after it
reached the disk but before a flush covered it is caught that way.  Checked also: the
files' handles still resolve (no STALE), and the write verifier differs
from the one before the cut (the client resends what was not committed).
"""
import bisect
import hashlib
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (lab_access, FILE_SYNC, NFS3_OK, UNSTABLE, Checks,  # noqa: E402
                      MountClient, Nfs3Client)

HOST = "127.0.0.1"
BLOCK = 4096
MAGIC = b"PWRL"
TAG = struct.Struct("<4sIQ")  # magic, file (0 = a, 1 = b, 3 = p), operation
RECORD = struct.Struct("<cQI")
DISK_MIB = 128
BIG_BLOCKS = 16  # a large FILE_SYNC write: 64 KiB, in place with the log
THICK_BLOCKS = 512  # file p, written before dsnfsd starts
HERE = os.path.dirname(os.path.abspath(__file__))


def block(file_no, op, k):
    """Block k of operation op in file file_no: its tag, then a pattern."""
    head = TAG.pack(MAGIC, file_no, op)
    seed = hashlib.blake2b(head + bytes([k]), digest_size=32).digest()
    return head + (seed * (BLOCK // 32))[:BLOCK - len(head)]


def run(*cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT).stdout.decode().strip()


def start_dsnfsd(binary, root, conf, log, leaks=True):
    """dsnfsd on free loopback ports: (its process, NFS port, MOUNT port).
    leaks=False: no leak check at its exit (ASan's takes about 0.4 s, most
    of a crash point's time; the last point of a run keeps it)."""
    env = None
    if not leaks:
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") +
                               ":detect_leaks=0").lstrip(":")
    proc = subprocess.Popen(
        [binary, "-f", "-l", HOST, "-p", "0", "-m", "0", "-P", "off",
         "-A", "off", "-s", os.path.join(root, "state"),
         "-e", "ds1=" + os.path.join(root, "ds1"), "-c", conf] + lab_access(),
        stdout=subprocess.PIPE, stderr=open(log, "a"), env=env)
    line = proc.stdout.readline().decode()
    m = re.search(r"nfs=(\d+) mount=(\d+)", line)
    if not m:
        proc.kill()
        proc.wait()
        raise RuntimeError("dsnfsd did not start: %r (see %s)" % (line, log))
    return proc, int(m.group(1)), int(m.group(2))


def stop(proc, sig=signal.SIGTERM):
    proc.send_signal(sig)
    return proc.wait()


class Mounted:
    """An ext4 image on a loop device, mounted at mnt."""

    def __init__(self, image, mnt):
        self.loop = run("losetup", "-f", "--show", image)
        self.mnt = mnt
        os.makedirs(mnt, exist_ok=True)
        run("mount", "-t", "ext4", self.loop, mnt)

    def close(self):
        run("umount", self.mnt)
        run("losetup", "-d", self.loop)


def power_on(scratch):
    """scratch/disk.img through powerfs (its writes and flushes logged to
    scratch/power.log), mounted, with ds1 and state made: (powerfs, the
    Mounted disk, the FUSE mount point)."""
    fuse = os.path.join(scratch, "fuse")
    os.makedirs(fuse)
    pfs = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "powerfs.py"),
                            fuse, os.path.join(scratch, "disk.img"),
                            os.path.join(scratch, "power.log")],
                           stderr=open(os.path.join(scratch, "powerfs.err"), "w"))
    for _ in range(100):
        if os.path.exists(os.path.join(fuse, "disk")):
            break
        time.sleep(0.05)
    disk = Mounted(os.path.join(fuse, "disk"), os.path.join(scratch, "mnt"))
    for d in ("ds1", "state"):
        os.makedirs(os.path.join(disk.mnt, d))
    return pfs, disk, fuse


def power_cut(proc, pfs, disk, fuse):
    """The cut: dsnfsd killed (nothing more written, nothing flushed by a
    clean stop), the disk and powerfs gone (also after a run that failed
    before dsnfsd started: proc None)."""
    if proc is not None:
        stop(proc, signal.SIGKILL)
    try:
        disk.close()
    finally:
        pfs.send_signal(signal.SIGTERM)
        pfs.wait()
        subprocess.run(["umount", fuse], stderr=subprocess.DEVNULL)


def live_run(binary, scratch, conf, ops):
    """The run before the cut (conf(root): the config file for a disk
    mounted at root): returns (handles, acked, verifier), acked[n] =
    (file, offset, count) of durable operation n, in order; for a CREATE,
    (2, its handle, 0)."""
    pfs, disk, fuse = power_on(scratch)
    proc = None
    try:
        with open(os.path.join(disk.mnt, "ds1", "p"), "wb") as thick:
            thick.write(bytes(THICK_BLOCKS * BLOCK))
            thick.flush()
            os.fsync(thick.fileno())
        run("sync", "-f", disk.mnt)
        proc, nfs_port, mount_port = start_dsnfsd(
            binary, disk.mnt, conf(disk.mnt),
            os.path.join(scratch, "dsnfsd.log"))
        m = MountClient((HOST, mount_port))
        root = m.mnt("/ds1").fhandle
        m.close()
        c = Nfs3Client((HOST, nfs_port))
        fh = [c.create(root, name).object for name in ("a", "b")]
        fh += [None, c.lookup(root, "p").object]
        acked, verf = [], None
        off = [0, 0]
        at_p = 0
        for n in range(ops):
            if n % 25 == 24:
                r = c.create(root, "c%d" % n)
                if r.status != NFS3_OK:
                    raise RuntimeError("CREATE: %d" % r.status)
                acked.append((2, r.object, 0))
            elif n % 8 == 0 and off[0] >= BIG_BLOCKS // 2 * BLOCK:
                at = off[0] - BIG_BLOCKS // 2 * BLOCK
                data = b"".join(block(0, n, k) for k in range(BIG_BLOCKS))
                r = c.write(fh[0], at, data, stable=FILE_SYNC)
                if r.status != NFS3_OK or r.committed != FILE_SYNC:
                    raise RuntimeError("large FILE_SYNC WRITE: %d" % r.status)
                verf = r.verf
                acked.append((0, at, BIG_BLOCKS))
                off[0] = at + BIG_BLOCKS * BLOCK
            elif n % 8 in (4, 6):
                # p: a 64 KiB overwrite over half the last, or 4 KiB inside
                # it (logged) that the next one covers.
                if n % 8 == 4:
                    at_p = (at_p + BIG_BLOCKS // 2) % (THICK_BLOCKS - BIG_BLOCKS)
                    at, count = at_p * BLOCK, BIG_BLOCKS
                else:
                    at, count = (at_p + BIG_BLOCKS - 4) * BLOCK, 1
                data = b"".join(block(3, n, k) for k in range(count))
                r = c.write(fh[3], at, data, stable=FILE_SYNC)
                if r.status != NFS3_OK or r.committed != FILE_SYNC:
                    raise RuntimeError("FILE_SYNC WRITE of p: %d" % r.status)
                verf = r.verf
                acked.append((3, at, count))
            elif n % 2 == 0:
                r = c.write(fh[0], off[0], block(0, n, 0), stable=FILE_SYNC)
                if r.status != NFS3_OK or r.committed != FILE_SYNC:
                    raise RuntimeError("FILE_SYNC WRITE: %d" % r.status)
                verf = r.verf
                acked.append((0, off[0], 1))
                off[0] += BLOCK
            else:
                for k in range(2):
                    r = c.write(fh[1], off[1] + k * BLOCK, block(1, n, k),
                                stable=UNSTABLE)
                    if r.status != NFS3_OK:
                        raise RuntimeError("UNSTABLE WRITE: %d" % r.status)
                cr = c.commit(fh[1], off[1], 2 * BLOCK)
                if cr.status != NFS3_OK or cr.verf != r.verf:
                    raise RuntimeError("COMMIT: %d" % cr.status)
                acked.append((1, off[1], 2))
                off[1] += 2 * BLOCK
        c.close()
    except BaseException:
        # A failed run leaves no mount, loop device or powerfs behind.
        power_cut(proc, pfs, disk, fuse)
        raise
    power_cut(proc, pfs, disk, fuse)
    return fh, acked, verf


def read_log(path):
    """[(kind, offset, data)], and the first record index where each
    operation's tag appears."""
    recs, first = [], {}
    data = open(path, "rb").read()
    p = 0
    while p + RECORD.size <= len(data):
        kind, off, n = RECORD.unpack_from(data, p)
        p += RECORD.size
        payload = data[p:p + n]
        p += n
        i = len(recs)
        recs.append((kind, off, payload))
        at = payload.find(MAGIC)
        while at >= 0 and at + TAG.size <= len(payload):
            _, _, op = TAG.unpack_from(payload, at)
            first.setdefault(op, i)
            at = payload.find(MAGIC, at + 1)
    return recs, first


def must_survive(acked, first, crash, depth=1):
    """The operations acknowledged before the record index crash (a
    flush): those with a later operation sent only after their reply
    (the @depth-th after, for a client that keeps @depth in flight and
    sends operation n + depth once n is answered) whose data reached
    the log before it."""
    # The earliest the tag of any operation @depth or more later shows.
    later = [None] * len(acked)
    best = None
    for n in range(len(acked) - 1, -1, -1):
        m = n + depth
        f = first.get(m) if m < len(acked) else None
        if f is not None and (best is None or f < best):
            best = f
        later[n] = best
    return [n for n in range(len(acked))
            if later[n] is not None and later[n] < crash]


def block_writers(acked):
    """{(file, offset): [(operation, k)]}: who wrote each block, in order."""
    writers = {}
    for n, (f, off, count) in enumerate(acked):
        if f == 2:
            continue
        for k in range(count):
            writers.setdefault((f, off + k * BLOCK), []).append((n, k))
    return writers


def block_ok(writers, f, at, n, got):
    """Whether @got is operation n's block at @at or a later one's."""
    return any(got == block(f, m, k) for m, k in writers[(f, at)] if m >= n)


def check_point(binary, scratch, conf, image, fh, acked, need, verf,
                leaks=True):
    """Mounts one crash image, starts dsnfsd (leaks: with the leak check
    at its exit), reads the needed blocks, stops it: it must exit 0."""
    writers = block_writers(acked)
    disk = Mounted(image, os.path.join(scratch, "cmnt"))
    problems = []
    try:
        proc, nfs_port, mount_port = start_dsnfsd(
            binary, disk.mnt, conf(disk.mnt),
            os.path.join(scratch, "replay.log"), leaks)
        rc = None
        try:
            c = Nfs3Client((HOST, nfs_port))
            files = {}
            for f in (0, 1, 3):
                if not any(acked[n][0] == f for n in need):
                    continue
                a = c.getattr(fh[f])
                if a.status != NFS3_OK:
                    problems.append("file %d: GETATTR %d" % (f, a.status))
                    continue
                data = b""
                while len(data) < a.attributes.size:
                    r = c.read(fh[f], len(data), 1 << 20)
                    if r.status != NFS3_OK or not r.data:
                        break
                    data += r.data
                files[f] = data
            for n in need:
                f, off, count = acked[n]
                if f == 2:
                    a = c.getattr(off)
                    if a.status != NFS3_OK:
                        problems.append("operation %d: the file it created "
                                        "answers %d" % (n, a.status))
                    continue
                if f not in files:
                    continue
                for k in range(count):
                    at = off + k * BLOCK
                    if not block_ok(writers, f, at, n,
                                    files[f][at:at + BLOCK]):
                        problems.append("operation %d (file %d, offset %d) "
                                        "lost" % (n, f, at))
                        break
            w = c.write(fh[0], 1 << 30, b"v" * 16, stable=UNSTABLE)
            if w.status != NFS3_OK or w.verf == verf:
                problems.append("write verifier unchanged (%d)" % w.status)
            c.close()
        finally:
            rc = stop(proc)
        if rc != 0:
            problems.append("dsnfsd exited with %d (see replay.log)" % rc)
    finally:
        disk.close()
    return problems


def sync_image(src, dst):
    """Makes the file dst (as big as src) hold src's bytes, writing only
    the chunks that differ: the crash image differs from the replayed one
    only where the records since the last point and the last check's
    mount wrote, a few MiB of the disk; a full copy wrote all 128 MiB
    each time."""
    big, small = 1 << 20, 1 << 16
    s, d = os.open(src, os.O_RDONLY), os.open(dst, os.O_RDWR)
    try:
        at = 0
        while True:
            a = os.pread(s, big, at)
            if not a:
                break
            b = os.pread(d, big, at)
            if a != b:
                for k in range(0, len(a), small):
                    if a[k:k + small] != b[k:k + small]:
                        os.pwrite(d, a[k:k + small], at + k)
            at += len(a)
    finally:
        os.close(d)
        os.close(s)


def crash_points(binary, scratch, conf, base, log, done, points, depth=1):
    """Replays the disk's log (recs, first, flushes) onto @base up to
    @points of its flushes and checks each image (check_point) for the
    run's (handles, acked, verifier), its client @depth writes in flight
    (must_survive): (the points, how many were checked, the operations
    checked in all, [(point, its first problems)])."""
    recs, first, flushes = log
    fh, acked, verf = done
    picks = sorted({flushes[(len(flushes) - 1) * k // max(points - 1, 1)]
                    for k in range(points)})
    work = os.path.join(scratch, "work.img")
    shutil.copyfile(base, work)
    fd = os.open(work, os.O_RDWR)
    applied = 0
    crash = os.path.join(scratch, "crash.img")
    shutil.copyfile(base, crash)
    checked, lost_points, needed_total = 0, [], 0
    for pick, point in enumerate(picks):
        for kind, off, data in recs[applied:point]:
            if kind == b"W":
                os.pwrite(fd, data, off)
        applied = point
        sync_image(work, crash)
        # The image is also the disk just before the next flush ended,
        # with everything written since this one lost (a volatile cache):
        # what was acknowledged before that flush began must be there.
        k = bisect.bisect_right(flushes, point)
        need = must_survive(acked, first,
                            flushes[k] if k < len(flushes) else len(recs),
                            depth)
        needed_total += len(need)
        problems = check_point(binary, scratch, conf, crash, fh, acked,
                               need, verf, leaks=point == picks[-1])
        checked += 1
        if problems:
            # This point's own lines of dsnfsd's log, to read the cause
            # (a CI log is all that is left of a run).
            with open(os.path.join(scratch, "replay.log")) as log_f:
                tail = [line.strip() for line in log_f.readlines()[-6:]]
            lost_points.append(("point %d (%d of %d), %d problems" %
                                (point, pick + 1, len(picks), len(problems)),
                                problems[:3], tail))
    os.close(fd)
    return picks, checked, needed_total, lost_points


def main():
    binary, scratch, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    points, ops = int(sys.argv[4]), int(sys.argv[5])
    ck = Checks()
    os.makedirs(scratch)
    base = os.path.join(scratch, "base.img")
    with open(base, "wb") as f:
        f.truncate(DISK_MIB << 20)
    run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
        base)
    shutil.copyfile(base, os.path.join(scratch, "disk.img"))
    # The intent log lives on the datastore's disk, wherever it is mounted.
    log_keys = ("[server]\nintent_log = %s/intent.log\nintent_log_mib = 8\n"
                "intent_log_immediate_max_bytes = 32768\n"
                if mode == "on" else "")

    def conf(root):
        path = os.path.join(scratch, "dsnfsd.conf")
        with open(path, "w") as out:
            out.write(log_keys % root if log_keys else "")
        return path

    t0 = time.monotonic()
    fh, acked, verf = live_run(binary, scratch, conf, ops)
    live_s = time.monotonic() - t0
    recs, first = read_log(os.path.join(scratch, "power.log"))
    # Crash points from the first data on: before it, the datastore's
    # directories may not be on the disk yet (they are made before dsnfsd
    # starts, and only a crash after that start is of interest).
    start = min(first.values()) if first else len(recs)
    flushes = [i for i, r in enumerate(recs) if r[0] == b"F" and i > start]
    ck.check("the run acknowledged %d operations, the disk saw %d writes "
             "and %d flushes" % (len(acked), len(recs) - len(flushes),
                                 len(flushes)),
             len(acked) == ops and len(flushes) >= points)
    t1 = time.monotonic()
    picks, checked, needed_total, lost_points = crash_points(
        binary, scratch, conf, base, (recs, first, flushes),
        (fh, acked, verf), points)
    ck.check("intent log %s: %d crash points, %d acknowledged operations "
             "checked in all, none lost, every handle valid, a new verifier"
             % (mode, checked, needed_total),
             checked == len(picks) and not lost_points, str(lost_points[:3]))
    if mode == "on":
        # The large writes went in place, and some replay kept older
        # records off their bytes.
        kept = [int(k) for k in re.findall(
            r"ranges synced in place, (\d+) records kept off them",
            open(os.path.join(scratch, "replay.log")).read())]
        ck.check("large writes synced in place: replay kept older records "
                 "off their bytes at %d crash points (at most %d records)"
                 % (sum(1 for k in kept if k), max(kept, default=0)),
                 any(kept))
    # The last two may have no later tag to witness them (a CREATE has
    # none of its own).
    ck.check("the last crash point needs every operation but the last two",
             len(must_survive(acked, first, flushes[-1])) >= len(acked) - 2)
    print("live run %.1f s (%d ops), replay %.1f s" %
          (live_s, len(acked), time.monotonic() - t1))
    ck.exit()


if __name__ == "__main__":
    main()
