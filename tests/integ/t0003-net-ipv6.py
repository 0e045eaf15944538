#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""IPv6 on the wire (t0003-net-ipv6.sh): MOUNT, NFS, the portmapper (PMAP 2
GETPORT, rpcbind 3 and 4 GETADDR) over TCP and UDP to ::1, export rules, root squash, `secure` and the per-host
connection limit keyed by address.

    t0003-net-ipv6.py v6 NFS_PORT MOUNT_PORT PORTMAP_PORT ADMIN_PORT
        dsnfsd listens on ::1; ds1 clients = ::1/128, ds2 clients =
        fd00::/8, 127.0.0.1; ds3 secure, squash = root;
        max_conns_per_host = 3; the admin API listens on ::1
    t0003-net-ipv6.py dual NFS_PORT MOUNT_PORT PORTMAP_PORT ADMIN_PORT
        dsnfsd listens on ::, same config: IPv4 clients come in as
        ::ffff:127.0.0.1 and are matched by the IPv4 rules
"""
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import admintoken  # noqa: E402
from nfs3wire import (MNT3_OK, MNT3ERR_ACCES, NFS3_OK, NFS3ERR_ACCES,  # noqa: E402
                      Checks, ConnectionClosed, MountClient, Nfs3Client,
                      Packer, RpcClient, addr_family)

V6, V4 = "::1", "127.0.0.1"
PMAP_PROG, PMAP_VERS, PMAPPROC_GETPORT = 100000, 2, 3


def getport(host, pm_port, proto, prog, vers):
    """PMAP v2 GETPORT of (prog, vers, tcp) asked over proto."""
    p = Packer()
    for v in (prog, vers, socket.IPPROTO_TCP, 0):
        p.u32(v)
    with RpcClient((host, pm_port), PMAP_PROG, PMAP_VERS, proto=proto) as c:
        u = c.call(PMAPPROC_GETPORT, p.bytes())
        port = u.u32()
        u.done()
    return port


def rpcb_getaddr(host, pm_port, proto, prog, vers, netid, rpcb_vers=4):
    """rpcbind 3/4 GETADDR (RFC 1833 2.2.1) -> the universal address."""
    p = Packer()
    p.u32(prog)
    p.u32(vers)
    for text in (netid, "", ""):
        p.string(text)
    with RpcClient((host, pm_port), PMAP_PROG, rpcb_vers, proto=proto) as c:
        u = c.call(3, p.bytes())
        uaddr = u.string(256)
        u.done()
    return uaddr


def uaddr(host, port):
    return "%s.%d.%d" % (host, port >> 8, port & 0xFF)


def from_port(client, host, lo):
    """Reconnects client from a source port in lo..lo+49 (0: any)."""
    client.close()
    for p in range(lo, lo + 50) if lo else [0]:
        s = socket.socket(addr_family(host), socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.settimeout(10)
        try:
            s.bind((host, p))
            # Another test on this machine may hold the same 4-tuple.
            s.connect(client.addr)
        except OSError:
            s.close()
            continue
        client.sock = s
        return client
    raise OSError("no free source port from %d" % lo)


def closed_at_once(sock):
    """The server closes sock: a refused connection (generous bound)."""
    sock.settimeout(5)
    try:
        return sock.recv(1) == b""
    except (socket.timeout, TimeoutError):
        return False
    except ConnectionResetError:
        return True


def null_ok(host, port, patience=2.0):
    """NULL answered on a fresh connection within patience seconds (a
    closed connection is counted out when its loop sees the close)."""
    deadline = time.monotonic() + patience
    while True:
        try:
            c = Nfs3Client((host, port))
            c.null()
            return c
        except (ConnectionClosed, OSError):
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)


def check_portmap(ck, host, nfs_port, mount_port, pm_port):
    six = "6" if host == V6 else ""
    for proto in ("tcp", "udp"):
        ck.check("[%s] portmap GETPORT nfs over %s" % (host, proto),
                 getport(host, pm_port, proto, 100003, 3) == nfs_port)
        ck.check("[%s] portmap GETPORT mountd over %s" % (host, proto),
                 getport(host, pm_port, proto, 100005, 3) == mount_port)
        for vers in (3, 4):
            got = rpcb_getaddr(host, pm_port, proto, 100003, 3, "tcp" + six,
                               rpcb_vers=vers)
            ck.check("[%s] rpcbind %d GETADDR nfs tcp%s over %s" % (host, vers, six, proto),
                     got == uaddr(host, nfs_port), repr(got))
        got = rpcb_getaddr(host, pm_port, proto, 100005, 3, "udp" + six)
        ck.check("[%s] rpcbind 4 GETADDR mountd udp%s over %s" % (host, six, proto),
                 got == uaddr(host, mount_port), repr(got))
    # The other family's netid: not served on ::1, and on "::" the caller
    # of one family is not told an address of the other.
    other = "tcp" if six else "tcp6"
    got = rpcb_getaddr(host, pm_port, "tcp", 100003, 3, other)
    ck.check("[%s] rpcbind 4 GETADDR nfs %s -> \"\"" % (host, other),
             got == "", repr(got))


def check_rules(ck, host, nfs_port, mount_port, ds2_allowed):
    for proto in ("tcp", "udp"):
        with MountClient((host, mount_port), proto=proto) as m:
            r = m.mnt("/ds1" if host == V6 else "/ds2")
            ck.check("[%s] MNT over %s of a datastore whose rules admit it"
                     % (host, proto), r.status == MNT3_OK,
                     "got %d" % r.status)
    with MountClient((host, mount_port)) as m:
        if host == V6:
            r = m.mnt("/ds2")
            ck.check("[::1] MNT /ds2 (fd00::/8, 127.0.0.1) -> ACCES",
                     r.status == MNT3ERR_ACCES, "got %d" % r.status)
        else:
            r = m.mnt("/ds1")
            ck.check("[127.0.0.1] MNT /ds1 (::1/128 only) -> ACCES",
                     r.status == MNT3ERR_ACCES, "got %d" % r.status)
        r = m.mnt("/ds2")
        want = MNT3_OK if ds2_allowed else MNT3ERR_ACCES
        ck.check("[%s] MNT /ds2 -> %s" % (host, "OK" if ds2_allowed else
                                          "ACCES"), r.status == want,
                 "got %d" % r.status)
        names = [d.hostname for d in m.dump()]
        ck.check("[%s] MOUNT DUMP names the client %s" % (host, host),
                 host in names, repr(names))


def admin_get(admin_port, path):
    """GET http://[::1]:ADMIN_PORT/path with the admin token -> the
    decoded JSON."""
    with admintoken.urlopen("http://[::1]:%d/%s" % (admin_port, path)) as r:
        return json.load(r)


def check_admin(ck, host, admin_port):
    """While host holds a flow on ds3: /hosts and /flows name it as
    sockaddr_format_host() spells it."""
    hosts = [h["host"] for h in admin_get(admin_port, "hosts")["hosts"]]
    ck.check("[%s] /hosts over [::1] names %s" % (host, host),
             host in hosts, repr(hosts))
    flows = [(f["host"], f["volume"])
             for f in admin_get(admin_port, "flows")["flows"]]
    ck.check("[%s] /flows names (%s, ds3)" % (host, host),
             (host, "ds3") in flows, repr(flows))
    ck.check("[%s] no v4-mapped spelling in /hosts" % host,
             not any("ffff" in h for h in hosts), repr(hosts))


def check_nfs(ck, host, nfs_port, mount_port, admin_port):
    """ds3: secure, root squash; a privileged source port over host."""
    m = from_port(MountClient((host, mount_port)), host, 0)
    r = m.mnt("/ds3")
    ck.check("[%s] MNT of a secure datastore from port >= 1024 -> ACCES"
             % host, r.status == MNT3ERR_ACCES, "got %d" % r.status)
    from_port(m, host, 700)
    r = m.mnt("/ds3")
    ck.check("[%s] MNT of a secure datastore from a privileged port" % host,
             r.status == MNT3_OK, "got %d" % r.status)
    m.close()
    if r.status != MNT3_OK:
        return
    root = r.fhandle
    c = from_port(Nfs3Client((host, nfs_port)), host, 760)
    name = "root-" + host.replace(":", "_").replace(".", "_")
    res = c.create(root, name, mode=0o644)
    ck.status("[%s] CREATE as uid 0 from a privileged port" % host, res,
              NFS3_OK)
    if res.status == NFS3_OK:
        attrs = res.obj_attributes
        ck.check("[%s] root is squashed to 65534" % host,
                 attrs is not None and attrs.uid == 65534,
                 repr(attrs))
        fh = res.object
        ck.status("[%s] WRITE" % host, c.write(fh, 0, b"ipv6" * 1024),
                  NFS3_OK)
        rd = c.read(fh, 0, 8192)
        ck.check("[%s] READ returns what was written" % host,
                 rd.status == NFS3_OK and rd.data == b"ipv6" * 1024)
        check_admin(ck, host, admin_port)
        from_port(c, host, 0)
        ck.status("[%s] GETATTR from port >= 1024 with the same handle"
                  % host, c.getattr(fh), NFS3ERR_ACCES)
    c.close()


def check_limit(ck, host, other, nfs_port):
    """max_conns_per_host = 3, counted per address."""
    held = [null_ok(host, nfs_port) for _ in range(3)]
    ck.check("[%s] 3 connections admitted" % host, all(held))
    extra = socket.create_connection((host, nfs_port))
    ck.check("[%s] the 4th connection from one address is closed" % host,
             closed_at_once(extra))
    extra.close()
    if other:
        c = null_ok(other, nfs_port)
        ck.check("[%s] is not counted against [%s]: NULL answered"
                 % (other, host), c is not None)
        if c:
            c.close()
    for c in held:
        if c:
            c.close()


def main():
    mode = sys.argv[1]
    nfs_port, mount_port, pm_port, admin_port = (int(a) for a in sys.argv[2:6])
    ck = Checks()
    check_portmap(ck, V6, nfs_port, mount_port, pm_port)
    check_rules(ck, V6, nfs_port, mount_port, ds2_allowed=False)
    check_nfs(ck, V6, nfs_port, mount_port, admin_port)
    if mode == "dual":
        check_portmap(ck, V4, nfs_port, mount_port, pm_port)
        check_rules(ck, V4, nfs_port, mount_port, ds2_allowed=True)
        check_nfs(ck, V4, nfs_port, mount_port, admin_port)
        check_limit(ck, V6, V4, nfs_port)
    else:
        check_limit(ck, V6, None, nfs_port)
    ck.exit()


if __name__ == "__main__":
    main()
