#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Crash consistency: dsnfsd is killed with SIGKILL again and again under a
verified write workload; every write it acknowledged as stable (FILE_SYNC,
DATA_SYNC, or UNSTABLE covered by a COMMIT with the same verifier) must
read back intact after each restart, through the handles held from before.

    t8201-crash-kill9.py DSNFSD_BINARY SCRATCH_DIR ROUNDS

What this shows and what it cannot: SIGKILL ends the server, not the
kernel, so the page cache survives it; the test proves that the server
acknowledges nothing it has not handed to the file system with the
requested stability, that handles and the verifier behave across
restarts, and that no acknowledged block is lost or torn.  Power loss is
outside what one machine can stage here.
"""
import hashlib
import os
import random
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (lab_access, DATA_SYNC, FILE_SYNC, NFS3_OK, UNSTABLE,  # noqa: E402
                      Checks, ConnectionClosed, MountClient, Nfs3Client)

HOST = "127.0.0.1"
BLOCK = 4096
BLOCKS = 256  # a 1 MiB file per writer


def block_bytes(file_no, index, gen):
    """The content of one block: its identity, then a keyed pattern."""
    head = ("f%d b%d g%d|" % (file_no, index, gen)).encode()
    seed = hashlib.blake2b(head, digest_size=32).digest()
    body = (seed * (BLOCK // len(seed) + 1))[:BLOCK - len(head)]
    return head + body


def start_server(binary, scratch):
    # CRASH_DSNFSD_ARGS: more arguments (t8204 adds a config with an
    # intent log).
    extra = os.environ.get("CRASH_DSNFSD_ARGS", "").split()
    proc = subprocess.Popen(
        [binary, "-f", "-l", HOST, "-p", "0", "-m", "0", "-P", "off",
         "-A", "off", "-s", os.path.join(scratch, "state"),
         "-e", "ds1=" + os.path.join(scratch, "ds1")] + lab_access() + extra,
        stdout=subprocess.PIPE, stderr=open(os.path.join(scratch, "log"), "a"))
    line = proc.stdout.readline().decode()
    m = re.search(r"nfs=(\d+) mount=(\d+)", line)
    if not m:
        raise SystemExit("dsnfsd did not start: %r" % line)
    return proc, int(m.group(1)), int(m.group(2))


class Writer:
    """One file, written block by block; remembers what was acknowledged
    as stable (acked) and what waits for a COMMIT (pending)."""

    def __init__(self, file_no, fh):
        self.file_no = file_no
        self.fh = fh
        self.gen = {}      # index -> generation the server has stable
        self.pending = {}  # index -> generation written UNSTABLE
        self.next_gen = 1

    def step(self, c, rng, verf_seen):
        index = rng.randrange(BLOCKS)
        gen = self.next_gen
        self.next_gen += 1
        how = rng.choice((FILE_SYNC, DATA_SYNC, UNSTABLE, UNSTABLE))
        r = c.write(self.fh, index * BLOCK, block_bytes(self.file_no, index, gen),
                    stable=how)
        if r.status != NFS3_OK:
            raise RuntimeError("WRITE status %d" % r.status)
        verf_seen.add(r.verf)
        if r.committed in (FILE_SYNC, DATA_SYNC):
            self.gen[index] = gen
            self.pending.pop(index, None)
        else:
            self.pending[index] = (gen, r.verf)
        if len(self.pending) >= 8:
            cr = c.commit(self.fh, 0, 0)
            if cr.status != NFS3_OK:
                raise RuntimeError("COMMIT status %d" % cr.status)
            # Only writes made under the verifier COMMIT returns are safe.
            for i, (g, v) in list(self.pending.items()):
                if v == cr.verf:
                    self.gen[i] = g
            self.pending.clear()

    def verify(self, c):
        """Every acknowledged block reads back as written (or as a later
        unacknowledged generation of the same block: that write may have
        reached the disk too)."""
        bad = []
        for index, gen in self.gen.items():
            r = c.read(self.fh, index * BLOCK, BLOCK)
            if r.status != NFS3_OK or len(r.data) != BLOCK:
                bad.append((index, "status %d len %d" % (r.status, len(r.data))))
                continue
            m = re.match(rb"f(\d+) b(\d+) g(\d+)\|", r.data)
            if not m or int(m.group(1)) != self.file_no or int(m.group(2)) != index:
                bad.append((index, "foreign or torn block"))
                continue
            got = int(m.group(3))
            if got < gen or r.data != block_bytes(self.file_no, index, got):
                bad.append((index, "generation %d, acknowledged %d" % (got, gen)))
        return bad


def main():
    binary, scratch, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(os.path.join(scratch, "ds1"), exist_ok=True)
    ck = Checks()
    rng = random.Random(1813)
    proc, nfs_port, mount_port = start_server(binary, scratch)
    root = MountClient((HOST, mount_port)).mnt("/ds1").fhandle
    c = Nfs3Client((HOST, nfs_port))
    writers = []
    for n in range(2):
        r = c.create(root, "disk%d-flat.vmdk" % n)
        writers.append(Writer(n, r.object))
    c.close()

    verifiers = []
    acked_total = 0
    for rnd in range(rounds):
        c = Nfs3Client((HOST, nfs_port))
        verf_seen = set()
        deadline = time.monotonic() + rng.uniform(0.2, 0.8)
        # Kill at a random moment, from outside, while writes fly.
        killer = rng.uniform(0.1, 0.7)
        t0 = time.monotonic()
        killed = False
        try:
            while time.monotonic() < deadline:
                for w in writers:
                    w.step(c, rng, verf_seen)
                if not killed and time.monotonic() - t0 > killer:
                    os.kill(proc.pid, signal.SIGKILL)
                    killed = True
        except (ConnectionClosed, OSError, RuntimeError):
            pass
        if not killed:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        c.close()
        verifiers.append(verf_seen)
        proc, nfs_port, _ = start_server(binary, scratch)
        c = Nfs3Client((HOST, nfs_port))
        for w in writers:
            bad = w.verify(c)
            acked_total += len(w.gen)
            ck.check("round %d: file %d: %d acknowledged blocks intact"
                     % (rnd, w.file_no, len(w.gen)), not bad, str(bad[:3]))
            # Unstable writes never committed are the client's to resend.
            w.pending.clear()
        r = c.write(writers[0].fh, 0, block_bytes(0, 0, writers[0].next_gen),
                    stable=FILE_SYNC)
        writers[0].gen[0] = writers[0].next_gen
        writers[0].next_gen += 1
        ck.check("round %d: the old handle still writes" % rnd, r.status == NFS3_OK)
        ck.check("round %d: the write verifier changed across the crash" % rnd,
                 r.verf not in verf_seen)
        c.close()
    proc.send_signal(signal.SIGTERM)
    ck.check("dsnfsd exits cleanly at the end", proc.wait() == 0)
    print("acknowledged blocks checked over %d rounds: %d" % (rounds, acked_total))
    ck.exit()


if __name__ == "__main__":
    main()
