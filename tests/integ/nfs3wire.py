#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""nfs3wire: a small NFSv3 and MOUNT v3 client, written from the RFCs.

Standard library only.  Read it top to bottom; each layer uses only the
ones above it:

  1. XDR (RFC 4506): Packer and Unpacker, big-endian 4-byte units.
  2. ONC RPC (RFC 5531): call header with AUTH_SYS, record marking over
     TCP (section 11), one datagram per call over UDP; RpcClient.
  3. Protocol constants of RFC 1813 (NFSv3, MOUNT v3).
  4. The shared NFSv3 structures (RFC 1813 2.5, 2.6): fattr3,
     post_op_attr, wcc_data, sattr3, diropargs3 ...
  5. One encoder and one decoder per NFSv3 procedure (RFC 1813 3.3),
     collected in the table NFS3_PROCS.
  6. Nfs3Client and MountClient: one method per procedure.
  7. Checks: ok/FAIL lines for the test scripts.

A decoded result is a Result: `res.status` plus the fields the RFC names
(`res.attributes`, `res.dir_wcc`, ...), for the success arm or the
failure arm as the status says.  Procedures are called with Python
values; the encoders are public so that tests can send damaged
arguments through Nfs3Client.call_raw().

    m = MountClient(("127.0.0.1", mount_port))
    root = m.mnt("/ds1").fhandle
    c = Nfs3Client(("127.0.0.1", nfs_port))
    r = c.lookup(root, "hello.txt")
    if r.status == NFS3_OK:
        print(c.read(r.object, 0, 100).data)
"""
import os
import socket
import struct
import time

# ---------------------------------------------------------------------------
# 1. XDR (RFC 4506)
# ---------------------------------------------------------------------------


def lab_access():
    """-c and the lab's access config (tests/integ/lib.sh lab_conf: loopback
    clients, uid 0 kept, any source port) for a dsnfsd a test starts itself
    with -e ds1=DIR: these clients bind unprivileged ports, which dsnfsd's
    defaults (secure, squash = root) refuse.  Empty outside lib.sh."""
    conf = os.environ.get("DSNFS_LAB_CONF")
    return ["-c", conf] if conf else []


class XdrError(Exception):
    """The bytes do not decode as the type asked for."""


def xdr_pad(n):
    """Bytes of padding after n bytes of opaque data (RFC 4506 4.10)."""
    return (4 - n % 4) % 4


class Packer:
    """Appends XDR items to a byte buffer; bytes() returns it."""

    def __init__(self):
        self._parts = []

    def u32(self, v):
        self._parts.append(struct.pack(">I", v & 0xFFFFFFFF))

    def i32(self, v):
        self._parts.append(struct.pack(">i", v))

    def u64(self, v):
        self._parts.append(struct.pack(">Q", v & 0xFFFFFFFFFFFFFFFF))

    def boolean(self, v):
        self.u32(1 if v else 0)

    def fixed(self, data, n):
        """opaque data[n]: exactly n bytes, padded."""
        if len(data) != n:
            raise XdrError("fixed opaque of %d bytes, want %d" % (len(data), n))
        self._parts.append(bytes(data) + b"\0" * xdr_pad(n))

    def opaque(self, data):
        """opaque data<>: a length, the bytes, padding."""
        self.u32(len(data))
        self._parts.append(bytes(data) + b"\0" * xdr_pad(len(data)))

    def string(self, s):
        self.opaque(s.encode() if isinstance(s, str) else s)

    def raw(self, data):
        """Bytes as they are: for hand-made (or damaged) arguments."""
        self._parts.append(bytes(data))

    def bytes(self):
        return b"".join(self._parts)


class Unpacker:
    """Reads XDR items from a byte buffer; every read is bounds-checked."""

    def __init__(self, data, pos=0):
        self.data = data
        self.pos = pos

    def _take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise XdrError("need %d bytes at %d of %d" % (n, self.pos, len(self.data)))
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def u32(self):
        return struct.unpack(">I", self._take(4))[0]

    def i32(self):
        return struct.unpack(">i", self._take(4))[0]

    def u64(self):
        return struct.unpack(">Q", self._take(8))[0]

    def boolean(self):
        v = self.u32()
        if v > 1:
            raise XdrError("bool of value %d" % v)
        return v == 1

    def fixed(self, n):
        data = self._take(n)
        self._take(xdr_pad(n))
        return data

    def opaque(self, bound=None):
        n = self.u32()
        if bound is not None and n > bound:
            raise XdrError("opaque of %d bytes exceeds %d" % (n, bound))
        return self.fixed(n)

    def string(self, bound=None):
        return self.opaque(bound).decode("utf-8", "surrogateescape")

    def rest(self):
        return len(self.data) - self.pos

    def done(self):
        """Every byte was consumed: trailing bytes are a decoding error."""
        if self.pos != len(self.data):
            raise XdrError("%d bytes left over" % (len(self.data) - self.pos))


def xdr_list(u, item):
    """An XDR optional-data linked list (`*entry3`): item(u) per element."""
    out = []
    while u.boolean():
        out.append(item(u))
    return out


# ---------------------------------------------------------------------------
# 2. ONC RPC (RFC 5531)
# ---------------------------------------------------------------------------

RPC_VERS = 2
CALL, REPLY = 0, 1
MSG_ACCEPTED, MSG_DENIED = 0, 1
AUTH_NONE, AUTH_SYS = 0, 1
# accept_stat
SUCCESS, PROG_UNAVAIL, PROG_MISMATCH, PROC_UNAVAIL = 0, 1, 2, 3
GARBAGE_ARGS, SYSTEM_ERR = 4, 5
ACCEPT_STAT_NAMES = {0: "SUCCESS", 1: "PROG_UNAVAIL", 2: "PROG_MISMATCH",
                     3: "PROC_UNAVAIL", 4: "GARBAGE_ARGS", 5: "SYSTEM_ERR"}
# reject_stat
RPC_MISMATCH, AUTH_ERROR = 0, 1


class RpcError(Exception):
    """The call got no SUCCESS: .kind is 'accepted' or 'denied', .stat the
    accept_stat or reject_stat."""

    def __init__(self, kind, stat):
        name = ACCEPT_STAT_NAMES.get(stat, str(stat)) if kind == "accepted" else str(stat)
        super().__init__("RPC %s %s" % (kind, name))
        self.kind = kind
        self.stat = stat


class ConnectionClosed(Exception):
    """The server closed the connection (or sent nothing in time)."""


def auth_sys(uid=0, gid=0, gids=(), machine="nfs3wire", stamp=None):
    """opaque_auth with an authsys_parms body (RFC 5531 appendix A)."""
    p = Packer()
    p.u32(int(time.time()) if stamp is None else stamp)
    p.string(machine)
    p.u32(uid)
    p.u32(gid)
    p.u32(len(gids))
    for g in gids:
        p.u32(g)
    return (AUTH_SYS, p.bytes())


def call_header(xid, prog, vers, proc, cred):
    """rpc_msg of a CALL up to the arguments; verifier AUTH_NONE."""
    p = Packer()
    p.u32(xid)
    p.u32(CALL)
    p.u32(RPC_VERS)
    p.u32(prog)
    p.u32(vers)
    p.u32(proc)
    p.u32(cred[0])
    p.opaque(cred[1])
    p.u32(AUTH_NONE)
    p.opaque(b"")
    return p.bytes()


def parse_reply(data, xid):
    """The reply to call xid -> an Unpacker at its results.  Raises RpcError
    when the call was not accepted with SUCCESS."""
    u = Unpacker(data)
    got_xid, mtype = u.u32(), u.u32()
    if got_xid != xid or mtype != REPLY:
        raise XdrError("reply xid %#x type %d, want xid %#x" % (got_xid, mtype, xid))
    if u.u32() == MSG_DENIED:
        raise RpcError("denied", u.u32())
    u.u32()          # verifier flavor
    u.opaque(400)    # verifier body
    stat = u.u32()
    if stat != SUCCESS:
        raise RpcError("accepted", stat)
    return u


def record_frame(payload, last=True):
    """One record-marking fragment (RFC 5531 11): 31-bit length + last bit."""
    return struct.pack(">I", len(payload) | (0x80000000 if last else 0)) + payload


def addr_family(host):
    """AF_INET6 for an IPv6 literal ("::1"), else AF_INET."""
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def recv_exact(sock, n):
    """n bytes from a stream socket; ConnectionClosed on EOF, a reset or a
    timeout."""
    buf = b""
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except (ConnectionResetError, socket.timeout) as e:
            raise ConnectionClosed(str(e))
        if not chunk:
            raise ConnectionClosed("EOF")
        buf += chunk
    return buf


def read_record(sock):
    """One whole record (RFC 5531 11) from a stream socket, fragments
    joined."""
    data = b""
    while True:
        (mark,) = struct.unpack(">I", recv_exact(sock, 4))
        data += recv_exact(sock, mark & 0x7FFFFFFF)
        if mark & 0x80000000:
            return data


class RpcClient:
    """One connection to one RPC program; TCP (default) or UDP.

    call() sends one call and waits for its reply; calls are sequential.
    cred is an (flavor, body) pair; auth_sys() makes one.  src_port: the
    source port to bind (None: any, the kernel's choice, above 1023;
    "priv": a free privileged one, 600..1023, which needs root).
    """

    def __init__(self, addr, prog, vers, proto="tcp", cred=None, timeout=10.0,
                 src_port=None):
        self.addr = addr
        self.src_port = src_port
        self.prog = prog
        self.vers = vers
        self.proto = proto
        self.cred = cred if cred is not None else auth_sys()
        self.timeout = timeout
        self.xid = (os.getpid() << 16 ^ int(time.time() * 1000)) & 0x7FFFFFFF
        self.sock = None
        self.last_result_bytes = 0  # size of the last reply's results
        self.connect()

    def connect(self, addr=None):
        """(Re)connects, to addr when given: a restarted server may have
        moved to new ports."""
        self.close()
        if addr is not None:
            self.addr = addr
        if self.src_port is not None:
            self.sock = self._bound_connected()
        elif self.proto == "tcp":
            self.sock = socket.create_connection(self.addr, timeout=self.timeout)
        else:
            self.sock = socket.socket(addr_family(self.addr[0]),
                                      socket.SOCK_DGRAM)
            self.sock.settimeout(self.timeout)
            self.sock.connect(self.addr)

    def _bound_connected(self):
        """A socket bound to src_port (or a free privileged port) and
        connected.  SO_REUSEADDR lets a port with a connection in
        TIME_WAIT bind, but connecting it to the same server then fails
        (EADDRNOTAVAIL): with "priv" another port is tried."""
        import errno
        import random
        kind = socket.SOCK_STREAM if self.proto == "tcp" else socket.SOCK_DGRAM
        ports = ([self.src_port] if self.src_port != "priv"
                 else random.sample(range(600, 1024), 424))
        for port in ports:
            s = socket.socket(addr_family(self.addr[0]), kind)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("", port))
                s.settimeout(self.timeout)
                s.connect(self.addr)
                return s
            except OSError as e:
                s.close()
                if self.src_port != "priv" or e.errno not in (
                        errno.EADDRINUSE, errno.EADDRNOTAVAIL,
                        errno.EACCES):
                    raise
        raise OSError("no free privileged port")

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def read_record(self):
        """One whole record, fragments joined."""
        return read_record(self.sock)

    def send_message(self, msg):
        """Sends one RPC message: a record on TCP, a datagram on UDP."""
        try:
            if self.proto == "tcp":
                self.sock.sendall(record_frame(msg))
            else:
                self.sock.send(msg)
        except (BrokenPipeError, ConnectionResetError) as e:
            raise ConnectionClosed(str(e))

    def recv_message(self):
        if self.proto == "tcp":
            return self.read_record()
        try:
            return self.sock.recv(65536)
        except (socket.timeout, ConnectionRefusedError) as e:
            raise ConnectionClosed(str(e))

    def call(self, proc, args=b""):
        """Calls proc with encoded args -> Unpacker at the results."""
        self.xid = (self.xid + 1) & 0xFFFFFFFF
        xid = self.xid
        self.send_message(call_header(xid, self.prog, self.vers, proc, self.cred) + args)
        while True:
            data = self.recv_message()
            # A stale reply (UDP retransmission) has another xid: skip it.
            if len(data) >= 4 and struct.unpack(">I", data[:4])[0] == xid:
                u = parse_reply(data, xid)
                # READDIR's count bounds these bytes (RFC 1813 3.3.16).
                self.last_result_bytes = u.rest()
                return u


# ---------------------------------------------------------------------------
# 3. Constants of RFC 1813
# ---------------------------------------------------------------------------

NFS_PROGRAM, NFS_V3 = 100003, 3
MOUNT_PROGRAM, MOUNT_V3 = 100005, 3
NFS3_FHSIZE = 64
NFS3_COOKIEVERFSIZE = NFS3_CREATEVERFSIZE = NFS3_WRITEVERFSIZE = 8

NFS3_OK = 0
NFS3ERR_PERM = 1
NFS3ERR_NOENT = 2
NFS3ERR_IO = 5
NFS3ERR_NXIO = 6
NFS3ERR_ACCES = 13
NFS3ERR_EXIST = 17
NFS3ERR_XDEV = 18
NFS3ERR_NODEV = 19
NFS3ERR_NOTDIR = 20
NFS3ERR_ISDIR = 21
NFS3ERR_INVAL = 22
NFS3ERR_FBIG = 27
NFS3ERR_NOSPC = 28
NFS3ERR_ROFS = 30
NFS3ERR_MLINK = 31
NFS3ERR_NAMETOOLONG = 63
NFS3ERR_NOTEMPTY = 66
NFS3ERR_DQUOT = 69
NFS3ERR_STALE = 70
NFS3ERR_REMOTE = 71
NFS3ERR_BADHANDLE = 10001
NFS3ERR_NOT_SYNC = 10002
NFS3ERR_BAD_COOKIE = 10003
NFS3ERR_NOTSUPP = 10004
NFS3ERR_TOOSMALL = 10005
NFS3ERR_SERVERFAULT = 10006
NFS3ERR_BADTYPE = 10007
NFS3ERR_JUKEBOX = 10008
# nfsstat3 value -> its name, for messages.
NFS3_STATUS = {v: k for k, v in dict(globals()).items()
               if k == "NFS3_OK" or k.startswith("NFS3ERR_")}


def status_name(code):
    return NFS3_STATUS.get(code, "nfsstat3(%d)" % code)


# ftype3
NF3REG, NF3DIR, NF3BLK, NF3CHR, NF3LNK, NF3SOCK, NF3FIFO = range(1, 8)
# ACCESS3 bits
ACCESS3_READ, ACCESS3_LOOKUP, ACCESS3_MODIFY = 0x01, 0x02, 0x04
ACCESS3_EXTEND, ACCESS3_DELETE, ACCESS3_EXECUTE = 0x08, 0x10, 0x20
ACCESS3_ALL = 0x3F
# stable_how
UNSTABLE, DATA_SYNC, FILE_SYNC = 0, 1, 2
# createmode3
UNCHECKED, GUARDED, EXCLUSIVE = 0, 1, 2
# time_how
DONT_CHANGE, SET_TO_SERVER_TIME, SET_TO_CLIENT_TIME = 0, 1, 2
# FSINFO properties
FSF3_LINK, FSF3_SYMLINK, FSF3_HOMOGENEOUS, FSF3_CANSETTIME = 0x1, 0x2, 0x8, 0x10

# mountstat3
MNT3_OK, MNT3ERR_PERM, MNT3ERR_NOENT, MNT3ERR_IO, MNT3ERR_ACCES = 0, 1, 2, 5, 13
MNT3ERR_NOTDIR, MNT3ERR_INVAL, MNT3ERR_NAMETOOLONG = 20, 22, 63
MNT3ERR_NOTSUPP, MNT3ERR_SERVERFAULT = 10004, 10006

NFS3_PROC_NAMES = [
    "NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ",
    "WRITE", "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR",
    "RENAME", "LINK", "READDIR", "READDIRPLUS", "FSSTAT", "FSINFO",
    "PATHCONF", "COMMIT",
]

# ---------------------------------------------------------------------------
# 4. Shared structures (RFC 1813 2.5, 2.6)
# ---------------------------------------------------------------------------


class Result:
    """A decoded result: keyword fields as attributes, printable."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        items = []
        for k, v in self.__dict__.items():
            if k == "status":
                v = status_name(v)
            elif isinstance(v, bytes) and len(v) > 16:
                v = "<%d bytes>" % len(v)
            items.append("%s=%r" % (k, v))
        return "Result(%s)" % ", ".join(items)


def pack_fh(p, fh):
    """nfs_fh3: opaque data<NFS3_FHSIZE>."""
    p.opaque(fh)


def unpack_fh(u):
    return u.opaque(NFS3_FHSIZE)


def unpack_nfstime(u):
    """nfstime3 -> (seconds, nseconds)."""
    return (u.u32(), u.u32())


def unpack_fattr3(u):
    return Result(
        type=u.u32(), mode=u.u32(), nlink=u.u32(), uid=u.u32(), gid=u.u32(),
        size=u.u64(), used=u.u64(), rdev=(u.u32(), u.u32()), fsid=u.u64(),
        fileid=u.u64(), atime=unpack_nfstime(u), mtime=unpack_nfstime(u),
        ctime=unpack_nfstime(u))


def unpack_post_op_attr(u):
    """post_op_attr -> a fattr3 Result, or None when not sent."""
    return unpack_fattr3(u) if u.boolean() else None


def unpack_pre_op_attr(u):
    """pre_op_attr -> wcc_attr (size, mtime, ctime), or None."""
    if not u.boolean():
        return None
    return Result(size=u.u64(), mtime=unpack_nfstime(u), ctime=unpack_nfstime(u))


def unpack_wcc_data(u):
    return Result(before=unpack_pre_op_attr(u), after=unpack_post_op_attr(u))


def unpack_post_op_fh3(u):
    """post_op_fh3 -> the handle, or None."""
    return unpack_fh(u) if u.boolean() else None


def pack_sattr3(p, mode=None, uid=None, gid=None, size=None, atime=None, mtime=None):
    """sattr3; None leaves a field unset.  atime/mtime: SET_TO_SERVER_TIME
    or a (seconds, nseconds) pair for SET_TO_CLIENT_TIME."""
    for v in (mode, uid, gid):
        p.boolean(v is not None)
        if v is not None:
            p.u32(v)
    p.boolean(size is not None)
    if size is not None:
        p.u64(size)
    for t in (atime, mtime):
        if t is None:
            p.u32(DONT_CHANGE)
        elif t == SET_TO_SERVER_TIME:
            p.u32(SET_TO_SERVER_TIME)
        else:
            p.u32(SET_TO_CLIENT_TIME)
            p.u32(t[0])
            p.u32(t[1])


def pack_diropargs3(p, dir_fh, name):
    pack_fh(p, dir_fh)
    p.string(name)


# ---------------------------------------------------------------------------
# 5. NFSv3 procedures (RFC 1813 3.3): encode_<proc>(p, ...) and
#    decode_<proc>(u, status) -> the Result's fields
# ---------------------------------------------------------------------------


def encode_null(p):
    pass


def decode_null(u, status):
    return {}


def encode_getattr(p, fh):
    pack_fh(p, fh)


def decode_getattr(u, status):
    return {"attributes": unpack_fattr3(u)} if status == NFS3_OK else {}


def encode_setattr(p, fh, guard_ctime=None, **sattr):
    """sattr keywords as pack_sattr3; guard_ctime: (sec, nsec) or None."""
    pack_fh(p, fh)
    pack_sattr3(p, **sattr)
    p.boolean(guard_ctime is not None)
    if guard_ctime is not None:
        p.u32(guard_ctime[0])
        p.u32(guard_ctime[1])


def decode_setattr(u, status):
    return {"obj_wcc": unpack_wcc_data(u)}


def encode_lookup(p, dir_fh, name):
    pack_diropargs3(p, dir_fh, name)


def decode_lookup(u, status):
    if status == NFS3_OK:
        return {"object": unpack_fh(u), "obj_attributes": unpack_post_op_attr(u),
                "dir_attributes": unpack_post_op_attr(u)}
    return {"dir_attributes": unpack_post_op_attr(u)}


def encode_access(p, fh, access=ACCESS3_ALL):
    pack_fh(p, fh)
    p.u32(access)


def decode_access(u, status):
    out = {"obj_attributes": unpack_post_op_attr(u)}
    if status == NFS3_OK:
        out["access"] = u.u32()
    return out


def encode_readlink(p, fh):
    pack_fh(p, fh)


def decode_readlink(u, status):
    out = {"symlink_attributes": unpack_post_op_attr(u)}
    if status == NFS3_OK:
        out["data"] = u.string()
    return out


def encode_read(p, fh, offset, count):
    pack_fh(p, fh)
    p.u64(offset)
    p.u32(count)


def decode_read(u, status):
    out = {"file_attributes": unpack_post_op_attr(u)}
    if status == NFS3_OK:
        out["count"] = u.u32()
        out["eof"] = u.boolean()
        out["data"] = u.opaque()
    return out


def encode_write(p, fh, offset, data, stable=FILE_SYNC, count=None):
    """count defaults to len(data); a different count makes a bad call."""
    pack_fh(p, fh)
    p.u64(offset)
    p.u32(len(data) if count is None else count)
    p.u32(stable)
    p.opaque(data)


def decode_write(u, status):
    out = {"file_wcc": unpack_wcc_data(u)}
    if status == NFS3_OK:
        out["count"] = u.u32()
        out["committed"] = u.u32()
        out["verf"] = u.fixed(NFS3_WRITEVERFSIZE)
    return out


def encode_create(p, dir_fh, name, how=UNCHECKED, verf=None, **sattr):
    """createhow3: UNCHECKED and GUARDED take sattr keywords (mode=...),
    EXCLUSIVE an 8-byte verf."""
    pack_diropargs3(p, dir_fh, name)
    p.u32(how)
    if how == EXCLUSIVE:
        p.fixed(verf, NFS3_CREATEVERFSIZE)
    else:
        pack_sattr3(p, **sattr)


def decode_new_object(u, status):
    """CREATE3res, MKDIR3res, SYMLINK3res and MKNOD3res are alike."""
    if status == NFS3_OK:
        return {"object": unpack_post_op_fh3(u),
                "obj_attributes": unpack_post_op_attr(u),
                "dir_wcc": unpack_wcc_data(u)}
    return {"dir_wcc": unpack_wcc_data(u)}


decode_create = decode_mkdir = decode_symlink = decode_mknod = decode_new_object


def encode_mkdir(p, dir_fh, name, **sattr):
    pack_diropargs3(p, dir_fh, name)
    pack_sattr3(p, **sattr)


def encode_symlink(p, dir_fh, name, target, **sattr):
    pack_diropargs3(p, dir_fh, name)
    pack_sattr3(p, **sattr)
    p.string(target)


def encode_mknod(p, dir_fh, name, ftype, spec=(0, 0), **sattr):
    """mknoddata3: devices carry sattr3 + specdata3, FIFO/SOCK sattr3,
    every other type nothing (the server then answers BADTYPE)."""
    pack_diropargs3(p, dir_fh, name)
    p.u32(ftype)
    if ftype in (NF3CHR, NF3BLK):
        pack_sattr3(p, **sattr)
        p.u32(spec[0])
        p.u32(spec[1])
    elif ftype in (NF3SOCK, NF3FIFO):
        pack_sattr3(p, **sattr)


def encode_remove(p, dir_fh, name):
    pack_diropargs3(p, dir_fh, name)


def decode_remove(u, status):
    return {"dir_wcc": unpack_wcc_data(u)}


encode_rmdir, decode_rmdir = encode_remove, decode_remove


def encode_rename(p, from_dir, from_name, to_dir, to_name):
    pack_diropargs3(p, from_dir, from_name)
    pack_diropargs3(p, to_dir, to_name)


def decode_rename(u, status):
    return {"fromdir_wcc": unpack_wcc_data(u), "todir_wcc": unpack_wcc_data(u)}


def encode_link(p, fh, dir_fh, name):
    pack_fh(p, fh)
    pack_diropargs3(p, dir_fh, name)


def decode_link(u, status):
    return {"file_attributes": unpack_post_op_attr(u),
            "linkdir_wcc": unpack_wcc_data(u)}


ZERO_VERF = b"\0" * 8


def encode_readdir(p, dir_fh, cookie=0, cookieverf=ZERO_VERF, count=4096):
    pack_fh(p, dir_fh)
    p.u64(cookie)
    p.fixed(cookieverf, NFS3_COOKIEVERFSIZE)
    p.u32(count)


def unpack_entry3(u):
    return Result(fileid=u.u64(), name=u.string(), cookie=u.u64())


def decode_readdir(u, status):
    out = {"dir_attributes": unpack_post_op_attr(u)}
    if status == NFS3_OK:
        out["cookieverf"] = u.fixed(NFS3_COOKIEVERFSIZE)
        out["entries"] = xdr_list(u, unpack_entry3)
        out["eof"] = u.boolean()
    return out


def encode_readdirplus(p, dir_fh, cookie=0, cookieverf=ZERO_VERF,
                       dircount=4096, maxcount=16384):
    pack_fh(p, dir_fh)
    p.u64(cookie)
    p.fixed(cookieverf, NFS3_COOKIEVERFSIZE)
    p.u32(dircount)
    p.u32(maxcount)


def unpack_entryplus3(u):
    return Result(fileid=u.u64(), name=u.string(), cookie=u.u64(),
                  name_attributes=unpack_post_op_attr(u),
                  name_handle=unpack_post_op_fh3(u))


def decode_readdirplus(u, status):
    out = {"dir_attributes": unpack_post_op_attr(u)}
    if status == NFS3_OK:
        out["cookieverf"] = u.fixed(NFS3_COOKIEVERFSIZE)
        out["entries"] = xdr_list(u, unpack_entryplus3)
        out["eof"] = u.boolean()
    return out


def encode_fsstat(p, fh):
    pack_fh(p, fh)


def decode_fsstat(u, status):
    out = {"obj_attributes": unpack_post_op_attr(u)}
    if status == NFS3_OK:
        for k in ("tbytes", "fbytes", "abytes", "tfiles", "ffiles", "afiles"):
            out[k] = u.u64()
        out["invarsec"] = u.u32()
    return out


encode_fsinfo = encode_pathconf = encode_fsstat


def decode_fsinfo(u, status):
    out = {"obj_attributes": unpack_post_op_attr(u)}
    if status == NFS3_OK:
        for k in ("rtmax", "rtpref", "rtmult", "wtmax", "wtpref", "wtmult",
                  "dtpref"):
            out[k] = u.u32()
        out["maxfilesize"] = u.u64()
        out["time_delta"] = unpack_nfstime(u)
        out["properties"] = u.u32()
    return out


def decode_pathconf(u, status):
    out = {"obj_attributes": unpack_post_op_attr(u)}
    if status == NFS3_OK:
        out["linkmax"] = u.u32()
        out["name_max"] = u.u32()
        for k in ("no_trunc", "chown_restricted", "case_insensitive",
                  "case_preserving"):
            out[k] = u.boolean()
    return out


def encode_commit(p, fh, offset=0, count=0):
    pack_fh(p, fh)
    p.u64(offset)
    p.u32(count)


def decode_commit(u, status):
    out = {"file_wcc": unpack_wcc_data(u)}
    if status == NFS3_OK:
        out["verf"] = u.fixed(NFS3_WRITEVERFSIZE)
    return out


# Procedure number -> (name, encoder, decoder), built from the names above.
NFS3_PROCS = {
    num: (name, globals()["encode_" + name.lower()],
          globals()["decode_" + name.lower()])
    for num, name in enumerate(NFS3_PROC_NAMES)
}


def encode_args(proc, *args, **kwargs):
    """The encoded arguments of NFSv3 procedure proc, as bytes."""
    p = Packer()
    NFS3_PROCS[proc][1](p, *args, **kwargs)
    return p.bytes()


# ---------------------------------------------------------------------------
# 6. Clients
# ---------------------------------------------------------------------------


class Nfs3Client(RpcClient):
    """NFSv3 over TCP: one method per procedure, each returning a Result
    (NULL returns None).  Results of the wrong shape raise XdrError."""

    def __init__(self, addr, **kw):
        super().__init__(addr, NFS_PROGRAM, NFS_V3, **kw)

    def call_raw(self, proc, args):
        """Sends already-encoded (possibly damaged) args -> Unpacker."""
        return self.call(proc, args)

    def _proc(self, proc, *args, **kwargs):
        u = self.call(proc, encode_args(proc, *args, **kwargs))
        if proc == 0:
            u.done()
            return None
        status = u.u32()
        fields = NFS3_PROCS[proc][2](u, status)
        u.done()
        return Result(status=status, **fields)

    def null(self):
        return self._proc(0)

    def getattr(self, fh):
        return self._proc(1, fh)

    def setattr(self, fh, guard_ctime=None, **sattr):
        return self._proc(2, fh, guard_ctime=guard_ctime, **sattr)

    def lookup(self, dir_fh, name):
        return self._proc(3, dir_fh, name)

    def access(self, fh, access=ACCESS3_ALL):
        return self._proc(4, fh, access)

    def readlink(self, fh):
        return self._proc(5, fh)

    def read(self, fh, offset, count):
        return self._proc(6, fh, offset, count)

    def write(self, fh, offset, data, stable=FILE_SYNC, count=None):
        return self._proc(7, fh, offset, data, stable, count)

    def create(self, dir_fh, name, how=UNCHECKED, verf=None, **sattr):
        return self._proc(8, dir_fh, name, how, verf, **sattr)

    def mkdir(self, dir_fh, name, **sattr):
        return self._proc(9, dir_fh, name, **sattr)

    def symlink(self, dir_fh, name, target, **sattr):
        return self._proc(10, dir_fh, name, target, **sattr)

    def mknod(self, dir_fh, name, ftype, spec=(0, 0), **sattr):
        return self._proc(11, dir_fh, name, ftype, spec, **sattr)

    def remove(self, dir_fh, name):
        return self._proc(12, dir_fh, name)

    def rmdir(self, dir_fh, name):
        return self._proc(13, dir_fh, name)

    def rename(self, from_dir, from_name, to_dir, to_name):
        return self._proc(14, from_dir, from_name, to_dir, to_name)

    def link(self, fh, dir_fh, name):
        return self._proc(15, fh, dir_fh, name)

    def readdir(self, dir_fh, cookie=0, cookieverf=ZERO_VERF, count=4096):
        return self._proc(16, dir_fh, cookie, cookieverf, count)

    def readdirplus(self, dir_fh, cookie=0, cookieverf=ZERO_VERF,
                    dircount=4096, maxcount=16384):
        return self._proc(17, dir_fh, cookie, cookieverf, dircount, maxcount)

    def fsstat(self, fh):
        return self._proc(18, fh)

    def fsinfo(self, fh):
        return self._proc(19, fh)

    def pathconf(self, fh):
        return self._proc(20, fh)

    def commit(self, fh, offset=0, count=0):
        return self._proc(21, fh, offset, count)

    # Conveniences built on the procedures.

    def walk(self, root, path):
        """LOOKUP each component of path from root -> the handle; raises
        LookupError with the status on a failure."""
        fh = root
        for name in [n for n in path.split("/") if n]:
            r = self.lookup(fh, name)
            if r.status != NFS3_OK:
                raise LookupError("%s: %s" % (name, status_name(r.status)))
            fh = r.object
        return fh

    def readdir_all(self, dir_fh, plus=False, count=4096):
        """Every entry of a directory, page by page -> (entries, pages)."""
        entries, pages, cookie, verf = [], 0, 0, ZERO_VERF
        while True:
            if plus:
                r = self.readdirplus(dir_fh, cookie, verf, count, count)
            else:
                r = self.readdir(dir_fh, cookie, verf, count)
            if r.status != NFS3_OK:
                raise LookupError("READDIR: %s" % status_name(r.status))
            pages += 1
            entries += r.entries
            if r.eof:
                return entries, pages
            if not r.entries:
                raise XdrError("READDIR page with no entries and no eof")
            cookie, verf = r.entries[-1].cookie, r.cookieverf


def unpack_mountbody(u):
    return Result(hostname=u.string(255), directory=u.string(1024))


def unpack_exportnode(u):
    return Result(dir=u.string(1024), groups=xdr_list(u, lambda g: g.string(255)))


def retry_jukebox(call, tries=50, delay_s=0.1):
    """call() again while it answers NFS3ERR_JUKEBOX ("try again later",
    RFC 1813 2.6), as the kernel client does -> (result, jukeboxes seen)."""
    import time
    seen = 0
    while True:
        r = call()
        if r.status != NFS3ERR_JUKEBOX or seen >= tries:
            return r, seen
        seen += 1
        time.sleep(delay_s)


def tag_pattern(tag, n):
    """n bytes that name tag: what a load writes, so a read back tells
    which write it got."""
    seed = ("%08d" % tag).encode()
    return (seed * (n // len(seed) + 1))[:n]


def mount_root(addr, path):
    """The root handle of export `path` from the MOUNT server at addr."""
    with MountClient(addr) as m:
        r = m.mnt(path)
        if r.status != 0:
            raise SystemExit("MNT %s: %d" % (path, r.status))
        return r.fhandle


def create_retry(c, dir_fh, name):
    """CREATE, again while it answers JUKEBOX (a cluster catching up)
    -> the new file's handle; any other error ends the test, named."""
    r, _ = retry_jukebox(lambda: c.create(dir_fh, name), tries=600)
    if r.status != NFS3_OK:
        raise SystemExit("CREATE %s: %s" % (name, status_name(r.status)))
    return r.object


class MountClient(RpcClient):
    """MOUNT v3 (RFC 1813 5.2) over TCP or UDP (proto="udp")."""

    def __init__(self, addr, **kw):
        super().__init__(addr, MOUNT_PROGRAM, MOUNT_V3, **kw)

    def null(self):
        self.call(0).done()

    def mnt(self, path):
        """-> Result(status, fhandle, auth_flavors)."""
        p = Packer()
        p.string(path)
        u = self.call(1, p.bytes())
        status = u.u32()
        r = Result(status=status)
        if status == MNT3_OK:
            r.fhandle = u.opaque(NFS3_FHSIZE)
            n = u.u32()
            r.auth_flavors = [u.i32() for _ in range(n)]
        u.done()
        return r

    def dump(self):
        """-> [Result(hostname, directory)]."""
        u = self.call(2)
        out = xdr_list(u, unpack_mountbody)
        u.done()
        return out

    def umnt(self, path):
        p = Packer()
        p.string(path)
        self.call(3, p.bytes()).done()

    def umntall(self):
        self.call(4).done()

    def export(self):
        """-> [Result(dir, groups)]."""
        u = self.call(5)
        out = xdr_list(u, unpack_exportnode)
        u.done()
        return out


# ---------------------------------------------------------------------------
# 7. Checks for the test scripts
# ---------------------------------------------------------------------------


class Checks:
    """Prints `  ok   what` or `  FAIL what: detail` as tests/integ/lib.sh
    does and counts failures; exit() ends the script with 1 on any.

    A check marked known_bug="..." is an expected failure (a
    known bug stays in the suite): it prints `  xfail` and does not count;
    once it passes it prints a reminder to drop the mark."""

    def __init__(self):
        self.fails = 0

    def check(self, what, cond, detail="", known_bug=None):
        if cond and known_bug:
            print("  ok   %s (known bug fixed? drop the mark: %s)" % (what, known_bug))
        elif cond:
            print("  ok   %s" % what)
        elif known_bug:
            print("  xfail %s%s [known bug: %s]" % (what, ": " + detail if detail else "", known_bug))
        else:
            print("  FAIL %s%s" % (what, ": " + detail if detail else ""))
            self.fails += 1
        return cond

    def status(self, what, res, want, known_bug=None):
        """res.status is want (one nfsstat3, or a tuple of allowed ones)."""
        wants = want if isinstance(want, tuple) else (want,)
        got = res.status
        return self.check("%s -> %s" % (what, "|".join(status_name(w) for w in wants)),
                          got in wants, "got %s" % status_name(got), known_bug)

    def exit(self):
        if self.fails:
            print("%d check(s) failed" % self.fails)
        raise SystemExit(1 if self.fails else 0)
