#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""poolload: load for the pool and QoS tests (t6NNN-pool-*).

Each client is a process of its own with one TCP connection (one flow:
connection x datastore) that READs (or WRITEs) one file back to back, one
call at a time, until its deadline, and reports when each call completed
and how many bytes it moved.  Throughput is measured on the client side:
bytes completed in a window of wall time over that window.  Processes,
not threads: a client must never wait for another's GIL.

    load = Load(nfs_port)
    load.add(fh, "read", 256 * 1024, label="ds1")
    load.start(seconds=6)           # all start together, at once
    ...                             # change things while they run
    res = load.wait()
    res.mibps("ds1", t0, t1)        # MiB/s of ds1's clients in [t0, t1)
"""
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (NFS3_OK, UNSTABLE, ConnectionClosed, MountClient,  # noqa: E402
                      Nfs3Client)

HOST = "127.0.0.1"
MIB = 1024 * 1024
FILE_BYTES = 64 * MIB


def root_of(mount_port, ds):
    return MountClient((HOST, mount_port)).mnt("/" + ds).fhandle


def sparse_file(nfs_port, root, name, size=FILE_BYTES):
    """A file of size bytes that holds nothing (reads return zeros)."""
    c = Nfs3Client((HOST, nfs_port))
    try:
        r = c.create(root, name)
        assert r.status == NFS3_OK, r
        fh = r.object
        r = c.setattr(fh, size=size)
        assert r.status == NFS3_OK, r
        return fh
    finally:
        c.close()


def _client(port, fh, op, size, start_at, end_at, out):
    """One flow: completions as (monotonic time, bytes); an error string
    when the connection broke (it must not)."""
    done = []
    error = None
    data = b"\x5a" * size
    off = 0
    try:
        c = Nfs3Client((HOST, port), timeout=30.0)
        c.null()  # connected before the clock starts
        while time.monotonic() < start_at:
            time.sleep(0.001)
        while time.monotonic() < end_at:
            if op == "read":
                r = c.read(fh, off, size)
                n = len(r.data) if r.status == NFS3_OK else 0
            else:
                r = c.write(fh, off, data, stable=UNSTABLE)
                n = r.count if r.status == NFS3_OK else 0
            if r.status != NFS3_OK:
                error = "status %d" % r.status
                break
            done.append((time.monotonic(), n))
            off = (off + size) % FILE_BYTES
        c.close()
    except (ConnectionClosed, OSError) as e:
        error = "connection broke: %s" % e
    out.put((done, error))


class Result:
    def __init__(self, per_client, labels, errors):
        self.per_client = per_client  # [(label, [(t, bytes)])]
        self.labels = labels
        self.errors = errors

    def mibps(self, label, t0, t1):
        """MiB/s completed by the clients labelled label in [t0, t1)."""
        total = 0
        for lab, done in self.per_client:
            if lab == label:
                total += sum(n for t, n in done if t0 <= t < t1)
        return total / MIB / (t1 - t0)

    def calls(self, label):
        return sum(len(d) for lab, d in self.per_client if lab == label)


class Load:
    def __init__(self, nfs_port):
        self.port = nfs_port
        self.specs = []
        self.procs = []
        self.t0 = None

    def add(self, fh, op, size, label):
        self.specs.append((fh, op, size, label))

    def start(self, seconds, delay=0.5):
        """Starts every client; they begin together at self.t0."""
        ctx = mp.get_context("fork")
        self.t0 = time.monotonic() + delay
        end = self.t0 + seconds
        for fh, op, size, label in self.specs:
            q = ctx.Queue()
            p = ctx.Process(target=_client,
                            args=(self.port, fh, op, size, self.t0, end, q))
            p.start()
            self.procs.append((p, q, label))
        return self.t0

    def wait(self):
        per_client, errors = [], []
        for p, q, label in self.procs:
            done, error = q.get()
            p.join()
            per_client.append((label, done))
            if error:
                errors.append("%s: %s" % (label, error))
        return Result(per_client, [s[3] for s in self.specs], errors)


def sleep_until(t):
    while True:
        left = t - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.05))
