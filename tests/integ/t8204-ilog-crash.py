#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The intent log across SIGKILL: what replay writes back, and
what it must never undo.

    t8204-ilog-crash.py DSNFSD_BINARY SCRATCH_DIR

dsnfsd runs with [server] intent_log, large writes (32 KiB and up)
synced in place, and no timed checkpoint (intent_log_checkpoint_ms = 0), so every stable WRITE below still has its
record in the log when the server is killed.  Before the kill:

  b  FILE_SYNC "old", then UNSTABLE "new" over it, then COMMIT;
  c  FILE_SYNC 4 KiB, FILE_SYNC 64 KiB over it (a large write, synced in
     place: a SYNCED record), then SETATTR size 4096;
  i  FILE_SYNC 8 KiB, then FILE_SYNC 64 KiB over it, in place;
  h  FILE_SYNC 8 KiB, then CREATE UNCHECKED of h with size 0;
  d  FILE_SYNC, then REMOVE; e is created and written after;
  f  FILE_SYNC "moved" to f, FILE_SYNC "dead" to g, RENAME f over g;
  a  FILE_SYNC writes into an empty file, one 1 MiB past its end.

(b, c and h make the log checkpoint their records before the change;
d, f, g, i and a keep theirs until the kill.)

While it is down, file a is cut back to 0 bytes, as if its unsynced pages
had been lost.  After the restart: a is whole again with its size (replay
wrote it), and b, c, d/e, g, h and i are as the later operation left
them (replay undid none of it: i's older record is kept off the bytes
synced in place); the old handles work; the verifier changed.
kill -9 keeps the page cache, so this tests the protocol of the log, not
the durability of the disk.
"""
import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfs3wire import (lab_access, FILE_SYNC, NFS3_OK, NFS3ERR_NOENT,  # noqa: E402
                      UNSTABLE, UNCHECKED, Checks, MountClient, Nfs3Client)

HOST = "127.0.0.1"


def start_server(binary, scratch):
    conf = os.path.join(scratch, "ilog.conf")
    with open(conf, "w") as f:
        f.write("[server]\nintent_log = %s\nintent_log_mib = 16\n"
                "intent_log_checkpoint_ms = 0\n"
                "intent_log_immediate_max_bytes = 32768\n"
                % os.path.join(scratch, "intent.log"))
    proc = subprocess.Popen(
        [binary, "-f", "-c", conf, "-l", HOST, "-p", "0", "-m", "0",
         "-P", "off", "-A", "off", "-s", os.path.join(scratch, "state"),
         "-e", "ds1=" + os.path.join(scratch, "ds1")] + lab_access(),
        stdout=subprocess.PIPE, stderr=open(os.path.join(scratch, "log"), "a"))
    line = proc.stdout.readline().decode()
    m = re.search(r"nfs=(\d+) mount=(\d+)", line)
    if not m:
        raise SystemExit("dsnfsd did not start: %r; log: %s" % (
            line, open(os.path.join(scratch, "log")).read()[-2000:]))
    return proc, int(m.group(1)), int(m.group(2))


def must(r, what):
    if r.status != NFS3_OK:
        raise SystemExit("%s: status %d" % (what, r.status))
    return r


def read_all(c, fh, n):
    r = c.read(fh, 0, n)
    return r.data if r.status == NFS3_OK else None


def main():
    binary, scratch = sys.argv[1], sys.argv[2]
    ds = os.path.join(scratch, "ds1")
    os.makedirs(ds, exist_ok=True)
    ck = Checks()
    proc, nfs_port, mount_port = start_server(binary, scratch)
    root = MountClient((HOST, mount_port)).mnt("/ds1").fhandle
    c = Nfs3Client((HOST, nfs_port))
    fh = {}
    for name in "abcdfghi":
        fh[name] = must(c.create(root, name), "CREATE " + name).object
    verf = set()

    must(c.write(fh["b"], 0, b"old" * 1000, stable=FILE_SYNC), "b old")
    must(c.write(fh["b"], 0, b"new" * 1000, stable=UNSTABLE), "b new")
    commit_verf = must(c.commit(fh["b"]), "COMMIT b").verf

    must(c.write(fh["c"], 0, b"C" * 4096, stable=FILE_SYNC), "c small")
    must(c.write(fh["c"], 0, b"c" * 65536, stable=FILE_SYNC), "c")
    must(c.setattr(fh["c"], size=4096), "SETATTR c")

    must(c.write(fh["h"], 0, b"h" * 8192, stable=FILE_SYNC), "h")
    must(c.create(root, "h", how=UNCHECKED, size=0), "CREATE h size 0")

    # Nothing below settles the log (e has no records): d, f, g and a
    # keep theirs until the kill.
    must(c.write(fh["d"], 0, b"d" * 8192, stable=FILE_SYNC), "d")
    must(c.remove(root, "d"), "REMOVE d")
    fh["e"] = must(c.create(root, "e"), "CREATE e").object
    must(c.write(fh["e"], 0, b"keep", stable=UNSTABLE), "e")
    must(c.commit(fh["e"]), "COMMIT e")

    must(c.write(fh["f"], 0, b"moved", stable=FILE_SYNC), "f")
    must(c.write(fh["g"], 0, b"dead!", stable=FILE_SYNC), "g")
    must(c.rename(root, "f", root, "g"), "RENAME f g")

    must(c.write(fh["i"], 0, b"o" * 8192, stable=FILE_SYNC), "i old")
    must(c.write(fh["i"], 0, b"I" * 65536, stable=FILE_SYNC), "i in place")

    blk_a = bytes(range(256)) * 16
    verf.add(must(c.write(fh["a"], 0, blk_a, stable=FILE_SYNC), "a").verf)
    must(c.write(fh["a"], 1 << 20, blk_a, stable=FILE_SYNC), "a past EOF")

    c.close()

    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # a's pages "lost": only the log has them now.
    os.truncate(os.path.join(ds, "a"), 0)

    proc, nfs_port, _ = start_server(binary, scratch)
    c = Nfs3Client((HOST, nfs_port))
    log = open(os.path.join(scratch, "log")).read()
    m = re.search(r"ilog: .*: replayed (\d+) records, skipped (\d+)", log)
    # a's two and f's are written back, i's kept off its newer bytes;
    # d's and g's (gone) are skipped.
    ck.check("the log was replayed at start: 4 records, 2 skipped",
             m is not None and m.groups() == ("4", "2"), log[-1500:])
    ck.check("i: one range synced in place, one older record kept off it",
             "1 ranges synced in place, 1 records kept off them" in log,
             log[-1500:])
    ck.check("i: the large write synced in place stays over the older one",
             read_all(c, fh["i"], 65536) == b"I" * 65536)
    ga = c.getattr(fh["a"])
    ck.check("a: the write 1 MiB past EOF came back with its size",
             ga.status == NFS3_OK and
             ga.attributes.size == (1 << 20) + len(blk_a),
             "size %s" % (ga.attributes.size if ga.status == NFS3_OK else ga.status))
    ra = c.read(fh["a"], 0, len(blk_a))
    rb = c.read(fh["a"], 1 << 20, len(blk_a))
    ck.check("a: both acknowledged blocks read back",
             ra.status == NFS3_OK and ra.data == blk_a and
             rb.status == NFS3_OK and rb.data == blk_a)
    ck.check("b: COMMITted UNSTABLE bytes over a logged write stay",
             read_all(c, fh["b"], 3000) == b"new" * 1000)
    gc = c.getattr(fh["c"])
    ck.check("c: the truncate after a logged write stays",
             gc.status == NFS3_OK and gc.attributes.size == 4096 and
             read_all(c, fh["c"], 4096) == b"c" * 4096)
    ck.status("d: the removed file stays removed", c.lookup(root, "d"),
              NFS3ERR_NOENT)
    ck.check("e: the file made after the REMOVE is untouched",
             read_all(c, fh["e"], 100) == b"keep")
    rg = c.lookup(root, "g")
    ck.check("g: after RENAME f over g, g holds f's data",
             rg.status == NFS3_OK and read_all(c, rg.object, 100) == b"moved")
    ck.check("f's old handle reads its data under the new name",
             read_all(c, fh["f"], 100) == b"moved")
    gh = c.getattr(fh["h"])
    ck.check("h: CREATE UNCHECKED size 0 over a logged write stays",
             gh.status == NFS3_OK and gh.attributes.size == 0)
    w = c.write(fh["a"], 0, blk_a, stable=FILE_SYNC)
    ck.check("the write verifier changed across the crash",
             w.status == NFS3_OK and w.verf not in verf and
             w.verf != commit_verf)
    c.close()
    proc.send_signal(signal.SIGTERM)
    ck.check("dsnfsd exits cleanly", proc.wait() == 0)
    ck.exit()


if __name__ == "__main__":
    main()
