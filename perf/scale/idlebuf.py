#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""idlebuf: what idle connections hold after large WRITEs (docs/scale.md).

    perf/scale/idlebuf.py [-n CONNS] [-w WRITE_BYTES] BIN_DIR [BIN_DIR...]

For each dsnfsd (BIN_DIR/dsnfsd, e.g. a build before and after a change):
starts it on 127.0.0.1 (ephemeral ports, a scratch datastore), opens CONNS
NFS connections, makes each send one UNSTABLE WRITE of WRITE_BYTES and
stay open and idle, and reads dsnfsd's VmRSS before the connections, with
them idle after the writes, and after they close.  Prints one column per
dsnfsd: the figures and KiB per idle connection.
"""
import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "integ"))
from procstat import rss_kib  # noqa: E402
from nfs3wire import MountClient, Nfs3Client, NFS3_OK, UNSTABLE  # noqa: E402

HOST = "127.0.0.1"


# The labs' access to ds1 (loopback clients, uid 0 kept, any source port):
# the raw clients here bind unprivileged ports and create files as uid 0,
# which dsnfsd's defaults (secure, squash = root) refuse.
ACCESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                      "etc", "lab", "access.conf")


def start(bin_dir, tmp):
    ds, state = os.path.join(tmp, "ds1"), os.path.join(tmp, "state")
    os.makedirs(ds)
    os.makedirs(state)
    out = open(os.path.join(tmp, "out"), "w+")
    log = open(os.path.join(tmp, "log"), "w")
    proc = subprocess.Popen(
        [os.path.join(bin_dir, "dsnfsd"), "-f", "-l", HOST, "-p", "0",
         "-m", "0", "-P", "off", "-A", "0", "-s", state, "-e", "ds1=" + ds,
         "-c", ACCESS],
        stdout=out, stderr=log)
    for _ in range(200):
        out.seek(0)
        m = re.search(r"^dsnfsd: listening.* nfs=(\d+).* mount=(\d+)",
                      out.read(), re.M)
        if m:
            return proc, int(m.group(1)), int(m.group(2))
        if proc.poll() is not None:
            raise RuntimeError("dsnfsd died at start")
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("dsnfsd did not start")


def measure(bin_dir, nconns, wbytes):
    tmp = tempfile.mkdtemp(prefix="dsnfs-idlebuf.")
    proc, nfs_port, mount_port = start(bin_dir, tmp)
    try:
        root = MountClient((HOST, mount_port)).mnt("/ds1").fhandle
        c0 = Nfs3Client((HOST, nfs_port))
        r = c0.create(root, "f")
        assert r.status == NFS3_OK, r
        fh = r.object
        time.sleep(0.5)
        base = rss_kib(proc.pid)
        data = b"\xa5" * wbytes
        conns = []
        for i in range(nconns):
            c = Nfs3Client((HOST, nfs_port))
            r = c.write(fh, (i % 64) * wbytes, data, stable=UNSTABLE)
            assert r.status == NFS3_OK, r
            conns.append(c)
        time.sleep(1.0)
        idle = rss_kib(proc.pid)
        for c in conns:
            c.close()
        time.sleep(1.0)
        after = rss_kib(proc.pid)
        c0.close()
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp)
    return base, idle, after


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1000, help="connections")
    ap.add_argument("-w", type=int, default=1 << 20, help="WRITE bytes")
    ap.add_argument("bins", nargs="+")
    a = ap.parse_args(argv)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    cols = [measure(b, a.n, a.w) for b in a.bins]
    print("%d connections, one %d-byte UNSTABLE WRITE each, then idle"
          % (a.n, a.w))
    for i, b in enumerate(a.bins):
        print("#%d: %s/dsnfsd" % (i + 1, b))
    print("%-36s" % "dsnfsd" + "".join(
        "%16s" % ("#%d" % (i + 1)) for i in range(len(a.bins))))
    rows = [("RSS before the connections, KiB", lambda c: c[0]),
            ("RSS with them idle, KiB", lambda c: c[1]),
            ("RSS after they closed, KiB", lambda c: c[2]),
            ("KiB per idle connection", lambda c: (c[1] - c[0]) / a.n)]
    for name, f in rows:
        print("%-36s" % name + "".join("%16.1f" % f(c) for c in cols))
    if len(cols) == 2:
        print("%-36s%16.2f" % ("ratio per conn (#2 / #1)",
                               rows[3][1](cols[1]) / rows[3][1](cols[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
