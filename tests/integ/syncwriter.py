# SPDX-License-Identifier: Apache-2.0
"""A FILE_SYNC writer for the fault tests of cephfs datastores (t2108,
t2120, t2121): 64 KiB writes at rising offsets of one file, each sent
again on NFS3ERR_JUKEBOX as the kernel client does, with the time of
every reply, so that a test can say when writes stopped and went on, and
what was acknowledged, to read it back; the same with UNSTABLE writes and
COMMITs (CommitWriter); the probes that tell how soon new calls are
answered while the writer's own call waits in libcephfs; and the calls of
tests/ceph/cluster.sh that make the fault and of the ceph CLI.
"""
import os
import subprocess
import sys
import threading
import time

from nfs3wire import (FILE_SYNC, NFS3_OK, NFS3ERR_JUKEBOX, UNSTABLE,
                      ConnectionClosed, Nfs3Client, RpcError, create_retry,
                      retry_jukebox, status_name, tag_pattern)

BLOCK = 65536
ADDR = "127.0.0.1"
# STORE_CEPHFS_BOUND_MS: past it a call stuck in libcephfs marks the
# datastore down, and new calls answer JUKEBOX.
BOUND_S = 5.0


def fault_test_args():
    """A fault test's arguments: its NFS and MOUNT ports, cluster.sh and
    the cluster's directory."""
    return int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]


class SyncWriter:
    """FILE_SYNC writes of `block` bytes of `name` in `dir_fh` on a
    thread of its own, `pause` seconds apart; `connect()` makes each
    connection (the server at `addr` when None: a test in another network
    namespace makes its sockets there)."""

    def __init__(self, addr, dir_fh, name, connect=None, block=BLOCK,
                 pause=0.0):
        self.block, self.pause = block, pause
        self.connect = connect or (lambda: Nfs3Client(addr, timeout=300))
        c = self.connect()
        self.fh = create_retry(c, dir_fh, name)
        c.close()
        self.stop = False
        self.lock = threading.Lock()
        self.acked = {}  # offset -> tag
        self.ok_at = []  # reply time of each acknowledged write
        self.jukebox_at = []  # (sent, replied) of each JUKEBOX
        self.errors = []
        # A daemon: a check that raises must not leave it writing on.
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start(self):
        self.thread.start()

    def finish(self):
        self.stop = True
        self.thread.join(300)

    def run(self):
        c = self.connect()
        off, tag = 0, 1
        while not self.stop:
            if not self.call(lambda: c.write(self.fh, off, tag_pattern(
                    tag, self.block), stable=FILE_SYNC)):
                break
            with self.lock:
                self.acked[off] = tag
                self.ok_at.append(time.time())
            off += self.block
            tag += 1
            time.sleep(self.pause)
        c.close()

    def call(self, send):
        """send() until it is answered but JUKEBOX (recorded, then sent
        again 0.1 s later) -> its reply, or None after another error
        (recorded: the writer stops)."""
        while not self.stop:
            sent = time.time()
            r = send()
            if r.status != NFS3ERR_JUKEBOX:
                break
            with self.lock:
                self.jukebox_at.append((sent, time.time()))
            time.sleep(0.1)
        else:
            return None
        if r.status != NFS3_OK:
            self.errors.append(status_name(r.status))
            return None
        return r

    def oks_after(self, t):
        with self.lock:
            return sum(1 for x in self.ok_at if x > t)

    def wait_oks_after(self, t, n, limit_s):
        """Seconds from t to the n-th write acknowledged after it, or
        None when that takes longer than limit_s."""
        deadline = t + limit_s
        while time.time() < deadline:
            with self.lock:
                later = [x for x in self.ok_at if x > t]
            if len(later) >= n:
                return later[n - 1] - t
            time.sleep(0.1)
        return None

    def finish_checked(self, ck, what="FILE_SYNC"):
        """Stops it, then checks that it met no error but JUKEBOX and that
        every write it had acknowledged reads back."""
        self.finish()
        ck.check("%s: no error but JUKEBOX" % what, not self.errors,
                 repr(self.errors[:5]))
        lost = self.lost()
        ck.check("every acknowledged %s write reads back" % what,
                 lost == 0, "%d of %d lost" % (lost, len(self.acked)))

    def lost(self):
        """How many acknowledged writes do not read back as written."""
        c = self.connect()
        lost = 0
        for off, tag in self.acked.items():
            r, _ = retry_jukebox(lambda: c.read(self.fh, off, self.block))
            if r.status != NFS3_OK or r.data != tag_pattern(tag,
                                                            self.block):
                lost += 1
        c.close()
        return lost


class CommitWriter(SyncWriter):
    """UNSTABLE writes, a COMMIT after every `every` (then the pause): a
    write counts as acknowledged once a COMMIT answers with the verifier
    it was written under.  On another verifier (the server lost what it
    had not committed) the writes since the last COMMIT are sent again,
    as a client does; `verifiers` counts the verifiers seen."""

    def __init__(self, addr, dir_fh, name, every=16, connect=None,
                 pause=0.0):
        super().__init__(addr, dir_fh, name, connect, pause=pause)
        self.every = every
        self.verifiers = 0

    def run(self):
        c = self.connect()
        off, tag, verf, pending = 0, 1, None, {}
        while not self.stop:
            r = self.call(lambda: c.write(self.fh, off, tag_pattern(
                tag, self.block), stable=UNSTABLE))
            if not r:
                break
            if r.verf != verf:
                verf, self.verifiers = r.verf, self.verifiers + 1
            pending[off] = tag
            off += self.block
            tag += 1
            if len(pending) < self.every:
                continue
            r = self.call(lambda: c.commit(self.fh))
            if not r:
                break
            if r.verf != verf:  # lost: send them again (new tags)
                verf, self.verifiers = r.verf, self.verifiers + 1
                off, pending = min(pending), {}
                continue
            with self.lock:
                self.acked.update(pending)
                self.ok_at += [time.time()] * len(pending)
            pending = {}
            time.sleep(self.pause)
        c.close()


def timed(call):
    """-> (call's result or the error it raised, seconds)."""
    t0 = time.time()
    try:
        r = call()
    except (ConnectionClosed, OSError, RpcError) as e:
        r = e
    return r, time.time() - t0


def probe_while(addr, fh, until, replies, connect=None):
    """Until time `until`, a 4 KiB FILE_SYNC write on a connection of its
    own every 0.5 s, each in its thread (it may wait in libcephfs: a call
    there is never abandoned, only new ones answer JUKEBOX); appends
    (sent, replied, status) to replies.  -> the threads."""
    connect = connect or (lambda: Nfs3Client(addr, timeout=300))

    def one(n):
        sent = time.time()
        try:
            with connect() as c:
                st = c.write(fh, n * 4096, tag_pattern(n, 4096),
                             stable=FILE_SYNC).status
        except (ConnectionClosed, OSError) as e:
            st = "error %r" % e
        replies.append((sent, time.time(), st))

    threads, n = [], 0
    while time.time() < until:
        t = threading.Thread(target=one, args=(n,), daemon=True)
        t.start()
        threads.append(t)
        n += 1
        time.sleep(0.5)
    return threads


def fsstats_while(addr, fh, until):
    """Until time `until`, an FSSTAT of fh on a connection of its own
    every 2 s, each in its thread (one may wait on a hung mon).  -> (the
    list it appends (status, seconds) to, the threads)."""
    out, threads = [], []

    def one():
        t0 = time.time()
        with Nfs3Client(addr, timeout=120) as c:
            st = c.fsstat(fh).status
        out.append((st, time.time() - t0))

    while time.time() < until:
        t = threading.Thread(target=one, daemon=True)
        t.start()
        threads.append(t)
        time.sleep(2.0)
    return out, threads


def hang_mon(ck, w, addr, fh, cluster, mon, hung_s, prompt_s,
             meanwhile=None, laggy_mds=False):
    """The mon `mon` SIGSTOPped for hung_s under w's writes (t2108, t2120):
    the data path does not need it, so the writes go on without a JUKEBOX,
    and FSSTATs of fh, which ask a mon, answer (check_fsstats).
    laggy_mds: hung_s is past the MDS's beacon grace and the MDS may have
    beaconed to this mon, which then holds its clients' calls until it
    hunts to another (Ceph's mon_client_ping_timeout, 30 s): JUKEBOX
    replies are allowed, nothing else.  meanwhile(), if given, is called
    once the time is up, before SIGCONT.  -> (the time of SIGCONT, writes
    acknowledged meanwhile, what meanwhile() returned)."""
    stopped = time.time()
    cluster("signal", mon, "STOP")
    during, threads = fsstats_while(addr, fh, stopped + hung_s)
    seen = meanwhile() if meanwhile else None
    oks = w.oks_after(stopped)
    with w.lock:
        jb = [rep for _, rep in w.jukebox_at if rep > stopped]
    resumed = time.time()
    cluster("signal", mon, "CONT")
    for t in threads:
        t.join(120)
    ck.check("%s hung %.0f s: the writes go on (%d acknowledged, %d "
             "JUKEBOX)" % (mon, hung_s, oks, len(jb)),
             oks >= 20 and (laggy_mds or not jb))
    check_fsstats(ck, during, hung_s, prompt_s, laggy_mds)
    return resumed, oks, seen


def check_fsstats(ck, during, hung_s, prompt_s, jukebox_ok=False):
    """Checks fsstats_while()'s FSSTATs while a mon hung for hung_s: all
    OK (or JUKEBOX, with jukebox_ok: the datastore down meanwhile); one at
    a time asks the mon and waits out its timeout (the client's
    rados_mon_op_timeout, 10 s here); the others answer within prompt_s
    with the last figures."""
    allowed = (NFS3_OK, NFS3ERR_JUKEBOX) if jukebox_ok else (NFS3_OK,)
    asked = [took for st, took in during if took > prompt_s]
    ck.check("FSSTATs meanwhile answer %s: %d at once, %d that asked the "
             "mon within its timeout"
             % (" or ".join(status_name(a) for a in allowed),
                len(during) - len(asked), len(asked)),
             all(st in allowed for st, _ in during) and
             len(asked) <= hung_s / 10 + 1 and
             all(took <= 10 + prompt_s for took in asked), repr(during))


def check_probes(ck, what, probes, since, bound_s):
    """Checks what probe_while() got: OK or JUKEBOX only, the first
    JUKEBOX within bound_s of `since` (2 s more on a loaded machine).
    -> seconds from `since` to it, or None."""
    jb = [rep - since for _, rep, st in probes if st == NFS3ERR_JUKEBOX]
    odd = [st for _, _, st in probes if st not in (NFS3_OK, NFS3ERR_JUKEBOX)]
    first = min(jb) if jb else None
    ck.check("%s: new calls answer NFS3ERR_JUKEBOX within the bound "
             "(%.0f s)" % (what, bound_s),
             first is not None and first <= bound_s + 2.0,
             "first after %s s; %d probes" % (first, len(probes)))
    ck.check("%s: the probes get OK or JUKEBOX, nothing else" % what,
             not odd, repr(odd[:5]))
    return first


def ceph_cli(ceph_dir, *args):
    """The ceph CLI on the cluster of ceph_dir -> its standard output."""
    return subprocess.run(["ceph", "-c", os.path.join(ceph_dir, "ceph.conf")]
                          + list(args), capture_output=True, text=True,
                          timeout=60).stdout


def cluster(cluster_sh, ceph_dir, *args):
    """cluster.sh CMD CEPH_DIR ARGS...: signal, wait-clean, kill, revive."""
    subprocess.run([cluster_sh, args[0], ceph_dir] + list(args[1:]),
                   check=True, stdout=sys.stdout, stderr=sys.stderr,
                   timeout=180)
