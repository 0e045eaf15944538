# SPDX-License-Identifier: Apache-2.0
"""What may be read back after a gateway dies under a mixed NFSv3 load
(t2114, t2115; the load itself is rlogload.py's).

The load: WRITEs FILE_SYNC, DATA_SYNC and UNSTABLE, COMMITs, SETATTRs of
the size (shorter and longer), writes that extend the files, and writes
that overlap writes still in flight.  Each op gets two times on one
clock of the client's: when it was sent and when its reply was read
(None: never).  The client is one thread, so "Y was sent after X's reply
was read" is exactly Y.sent > X.replied.

Durable (the server promised it; RFC 1813 3.3.7, 3.3.21):
  - a WRITE answered NFS3_OK with committed DATA_SYNC or FILE_SYNC;
  - an UNSTABLE WRITE answered NFS3_OK with verifier V, whose reply was
    read before a COMMIT of its file was sent, that COMMIT answered
    NFS3_OK with the same V (a COMMIT is not promised to cover a write
    still in flight when it is sent; another verifier means the server
    may have lost it);
  - a SETATTR of the size answered NFS3_OK (RFC 1813 3.3.2: every
    procedure but an UNSTABLE WRITE is stable when answered).  The load
    of t2114/t2115 sends one only when nothing else of that file is in
    flight, and nothing of that file until it is answered; t2116's sends
    them among the file's writes in flight (concurrent=True).

What each byte of a file may hold after the crash, the acknowledged-last
rule: a source X of the byte (the round's starting content, a WRITE
covering it, a SETATTR that cut the file below it: zeros) may be read
unless some durable Y covering the byte was sent after X's reply was
read (Y.sent > X.replied); the starting content counts as replied before
everything.  So a durable write is read unless a durable write sent
after its reply covers it; two writes in flight together may either be
read, byte by byte; a write never answered or not durable may be read or
not; nothing else may (no zeros where a durable write is, no byte of a
write over which a later durable one was sent).
The size: NFS orders nothing sent together, so any SETATTR S that no
durable SETATTR sent after S's reply follows may have been applied last
(none: the round's starting size, while no SETATTR is durable).  For
such an S the size is at least max(S.size, the end of every durable
write sent after S's reply) and at most max(S.size, the end of every
write not answered before S was sent) (a write that was not durable may
land in part: a RADOS object of it); the size read must fit one such S.
A SETATTR in flight at the crash, or answered with an error, may have
been done or not: either reading passes.
With no fault (check(nofault=True): every op answered, nothing lost),
every op answered NFS3_OK is applied, UNSTABLE writes too, and the size
must be exactly one that some order of them gives: max(S.size, the ends
of the writes that must follow S, and of any one that may).
After a check the bytes and size read become the next round's start:
the gateway that read them has replayed and fsynced, and they are what
the cluster holds.  self_test() runs the model on made-up histories
(a write lost, a COMMITted write lost, a truncate undone, ...): the
tests check it first.
"""
import struct
from array import array

UNSTABLE, DATA_SYNC, FILE_SYNC = 0, 1, 2
KIND = {UNSTABLE: "UNSTABLE", DATA_SYNC: "DATA_SYNC", FILE_SYNC: "FILE_SYNC"}
NEVER = float("inf")
UNIT = struct.Struct("<II")  # a 16-byte unit: write id, unit index


def op_data(op_id, off, n, salt):
    """The n bytes of write op_id at file offset off: 16-byte units, each
    (op_id, its unit index in the file) and a word of the run's salt."""
    u0, u1 = off // 16, (off + n + 15) // 16
    a = array("Q", bytes(16 * (u1 - u0)))
    a[0::2] = array("Q", range(op_id + (u0 << 32), op_id + (u1 << 32),
                               1 << 32))
    a[1::2] = array("Q", [salt ^ op_id]) * (u1 - u0)
    b = a.tobytes()
    return b[off - u0 * 16:off - u0 * 16 + n]


def who(buf, pos, file_off):
    """Which write the 16-byte unit around buf[pos] (file offset
    file_off) came from, for a FAIL line."""
    start = pos - file_off % 16
    if start < 0 or start + 16 > len(buf):
        return "?"
    op_id, unit = UNIT.unpack_from(buf, start)
    if op_id == 0 and unit == 0:
        return "zeros"
    if unit != (file_off // 16) & 0xFFFFFFFF:
        return "foreign(%d@%d)" % (op_id, unit)
    return "op %d" % op_id


class Op:
    """A WRITE ("W"), COMMIT ("C") or SETATTR of the size ("S")."""

    def __init__(self, kind, op_id, f, off=0, n=0, stable=FILE_SYNC,
                 size=0, salt=0):
        self.kind, self.id, self.f = kind, op_id, f
        self.off, self.n, self.stable, self.size = off, n, stable, size
        self.end = off + n
        self.data = op_data(op_id, off, n, salt) if kind == "W" else b""
        self.sent = self.replied = None
        self.ok = False  # answered NFS3_OK as asked
        self.committed = None  # a WRITE's stable_how in its reply
        self.verf = None
        self.durable = False
        self.assumed = False  # a SETATTR taken as done (Model.check)

    def when_replied(self):
        return NEVER if self.replied is None else self.replied

    def __repr__(self):
        if self.kind == "W":
            return "op %d (%s WRITE file %d %d+%d)" % (
                self.id, KIND[self.stable], self.f, self.off, self.n)
        if self.kind == "S":
            return "op %d (SETATTR file %d size %d)" % (self.id, self.f,
                                                          self.size)
        return "op %d (COMMIT file %d)" % (self.id, self.f)


class Model:
    """The files' content at the round's start and the round's ops, per
    file, and the choice of the next op (seeded)."""

    def __init__(self, rng, salt, files, file_max, mix=True,
                 setattr_p=0.025):
        self.rng, self.salt, self.files, self.file_max = (rng, salt, files,
                                                          file_max)
        self.mix = mix  # False: FILE_SYNC and DATA_SYNC writes only
        self.setattr_p = setattr_p  # of the ops, SETATTRs of the size
        self.base = [bytes(file_max) for _ in range(files)]
        self.base_size = [0] * files
        self.hist = [[] for _ in range(files)]
        self.end = [0] * files  # the size the next ops are placed by
        self.unstable = [[] for _ in range(files)]  # not yet committed
        self.ops = {}
        self.next_id = 1
        self.clock = 0
        self.stats = dict.fromkeys(
            ("FILE_SYNC", "DATA_SYNC", "UNSTABLE+COMMIT", "UNSTABLE",
             "COMMIT", "truncate", "extend", "overlapping", "raced",
             "bytes"), 0)

    def tick(self):
        self.clock += 1
        return self.clock

    def _new(self, kind, f, **kw):
        op = Op(kind, self.next_id, f, salt=self.salt, **kw)
        self.next_id += 1
        self.ops[op.id] = op
        self.hist[f].append(op)
        return op

    def next_op(self, inflight, barred):
        """The next op on a file not in @barred (a SETATTR of it in
        flight) -> an Op, or None when every file is barred."""
        rng = self.rng
        files = [f for f in range(self.files) if f not in barred]
        if not files:
            return None
        f = rng.choice(files)
        x = rng.random()
        if self.mix and x < self.setattr_p and self.end[f] > 0:
            if rng.random() < 0.6:  # shorter, sometimes to 0
                size = rng.choice((0, rng.randrange(self.end[f]),
                                   4096 * rng.randrange(
                                       self.end[f] // 4096 + 1)))
            else:  # longer, by up to 1 MiB
                size = min(self.file_max,
                           self.end[f] + rng.randint(1, 1 << 20))
            op = self._new("S", f, size=size)
            op.grow = size > self.end[f]
            self.end[f] = size
            return op
        if self.mix and x < self.setattr_p + 0.045 and self.unstable[f]:
            return self._new("C", f)
        stable = FILE_SYNC
        if self.mix:
            y = rng.random()
            stable = (FILE_SYNC if y < 0.45 else
                      DATA_SYNC if y < 0.65 else UNSTABLE)
        elif rng.random() < 0.3:
            stable = DATA_SYNC
        if rng.random() < 0.5:
            n = 4096 * rng.randint(1, 16)
        else:
            n = rng.randint(4096, 65536)
        end = self.end[f]
        over = [o for o in inflight if o.kind == "W" and o.f == f]
        kind = rng.random()
        if over and kind < 0.25:  # over part of a write in flight
            o = rng.choice(over)
            off = max(0, o.off + rng.randint(-n + 1, o.n - 1))
        elif kind < 0.45 and end + n <= self.file_max:
            off = end  # extends the file
        elif kind < 0.55 and end + 8192 + n <= self.file_max:
            off = end + rng.randint(1, 8192)  # past a hole
        elif end < n or kind < 0.8:
            off = 4096 * rng.randrange(
                max(1, min(end, self.file_max - n) // 4096))
        else:
            off = rng.randrange(end - n + 1)  # unaligned overwrite
        off = min(off, self.file_max - n)
        op = self._new("W", f, off=off, n=n, stable=stable)
        self.end[f] = max(self.end[f], op.end)
        if stable == UNSTABLE:
            self.unstable[f].append(op)
        return op

    def sent(self, op, inflight):
        op.sent = self.tick()
        if op.kind == "W" and any(o.kind == "W" and o.f == op.f and
                                  o.off < op.end and op.off < o.end
                                  for o in inflight):
            self.stats["overlapping"] += 1
        # A SETATTR and a WRITE of one file in flight together (t2116).
        if op.kind in "WS" and any(o.f == op.f and o.kind in "WS" and
                                   "S" in (o.kind, op.kind)
                                   for o in inflight):
            self.stats["raced"] += 1

    def replied(self, op, ok, committed=None, verf=None):
        """Notes @op's reply: @ok when NFS3_OK as asked."""
        op.replied = self.tick()
        op.ok, op.committed, op.verf = ok, committed, verf
        if not ok:
            return
        if op.kind == "W" and committed == UNSTABLE:
            self.stats["UNSTABLE"] += 1
        elif op.kind == "W":
            op.durable = True
            self.stats[KIND[max(op.stable, DATA_SYNC)]] += 1
            self.stats["bytes"] += op.n
        elif op.kind == "S":
            op.durable = True
            self.stats["extend" if op.grow else "truncate"] += 1
        elif op.kind == "C":
            self.stats["COMMIT"] += 1
            for w in self.unstable[op.f]:
                if (w.ok and w.committed == UNSTABLE and not w.durable and
                        w.replied is not None and w.replied < op.sent and
                        w.verf == verf):
                    w.durable = True
                    self.stats["UNSTABLE+COMMIT"] += 1
                    self.stats["bytes"] += w.n
            self.unstable[op.f] = [w for w in self.unstable[op.f]
                                   if not w.durable]

    def durable_writes(self):
        return sum(self.stats[k] for k in ("FILE_SYNC", "DATA_SYNC",
                                           "UNSTABLE+COMMIT"))

    def check(self, f, got, size, nofault=False):
        """Checks file @f read back as @got (its bytes to EOF) with size
        @size -> (bad bytes, first failure named or None); @nofault: no
        gateway died, every op was answered (all applied).  Then the
        round starts again from what was read."""
        hist = self.hist[f]
        if nofault:
            for op in hist:
                op.durable = op.durable or (op.ok and op.kind in "WS")
        alts = [hist]
        last = hist[-1] if hist else None
        if last and last.kind == "S" and not last.ok:
            # In flight at the crash, or refused (a fenced gateway's
            # JUKEBOX): done or not.
            last.assumed = True
            alts.append(hist[:-1])
        best = min((self._check(f, h, got, size, nofault) for h in alts),
                   key=lambda r: r[0])
        self.base[f] = bytes(got[:size]) + bytes(self.file_max - size)
        self.base_size[f] = size
        self.end[f] = size
        self.hist[f] = []
        self.unstable[f] = []
        return best

    def _size_choices(self, f, hist):
        """One per SETATTR that may have been applied last (None: none
        was) -> [(least size, greatest size, the sizes one order of the
        answered ops gives, what sets the least)]."""
        sets = [op for op in hist if op.kind == "S"]
        done = [op for op in sets if op.ok or op.assumed]
        lasts = [s for s in sets if not any(
            t.sent > s.when_replied() for t in done)]
        if not done:
            lasts.append(None)
        out = []
        for s in lasts:
            lo, why = ((s.size, repr(s)) if s else
                       (self.base_size[f], "the round's start"))
            sent = s.sent if s else 0
            after = s.when_replied() if s else 0
            may = []
            for op in hist:
                if op.kind != "W" or op.when_replied() < sent:
                    continue  # answered before s: s sets the size
                if op.durable and op.sent > after and op.end > lo:
                    lo, why = op.end, repr(op)
                elif not (op.durable and op.sent > after):
                    may.append(op.end)
            sizes = {lo} | {max(lo, e) for e in may}
            out.append((lo, max(sizes), sizes, why))
        return out

    def _sources(self, f, hist, p, q):
        """The sources that may be read in [p, q) (no op starts or ends
        inside it) -> [(label, bytes)]."""
        cover = []
        for op in hist:
            if op.kind == "W" and op.off <= p and q <= op.end:
                cover.append(op)
            elif op.kind == "S" and op.size <= p:
                cover.append(op)
        # A SETATTR in flight at the crash or refused counts as done
        # here (the other alternative leaves it out).
        last = max((op.sent for op in cover if op.durable or op.assumed),
                   default=None)
        out = []
        if last is None:
            out.append(("the round's start", self.base[f][p:q]))
        for op in cover:
            if last is not None and op.when_replied() < last:
                continue  # a durable op sent after its reply covers it
            if op.kind == "W":
                out.append((repr(op), op.data[p - op.off:q - op.off]))
            else:
                out.append((repr(op), bytes(q - p)))
        return out

    def _check(self, f, hist, got, size, nofault=False):
        choices = self._size_choices(f, hist)
        if len(got) != size or not any(
                size in sizes if nofault else lo <= size <= hi
                for lo, hi, sizes, _ in choices):
            return (max(1, abs(len(got) - size)),
                    "file %d: size %d (read %d bytes), may be %s" % (
                        f, size, len(got), " or ".join(
                            "%s (%s)" % (sorted(sizes) if nofault else
                                         "%d to %d" % (lo, hi), why)
                            for lo, hi, sizes, why in choices)))
        pts = {0, size, min(size, self.base_size[f])}
        for op in hist:
            for x in ((op.off, op.end) if op.kind == "W" else (op.size,)):
                pts.add(min(max(x, 0), size))
        pts = sorted(pts)
        bad, first = 0, None
        for p, q in zip(pts, pts[1:]):
            src = self._sources(f, hist, p, q)
            seg = got[p:q]
            if any(seg == b for _, b in src):
                continue
            for i in range(q - p):
                if any(seg[i] == b[i] for _, b in src):
                    continue
                bad += 1
                if first is None:
                    first = ("file %d offset %d: read %s; may be %s" %
                             (f, p + i, self._name(who(got, p + i, p + i)),
                              " or ".join(
                                  "%s (%s)" % (l, who(b, i, p + i))
                                  for l, b in src)))
        return bad, first

    def _name(self, label):
        if label.startswith("op "):
            op = self.ops.get(int(label[3:]))
            return repr(op) if op else label
        return label


def self_test():
    """The model against made-up histories of one file -> the cases it
    judged wrongly (none: it is strict where the protocol is, and lets
    through what the protocol allows).  A model that let everything
    through would pass every crash test."""
    wrong = []

    def case(name, want_ok, build, nofault=False):
        m = Model(None, 7, 1, 1 << 16)
        got, size = build(m)
        bad = m.check(0, got, size, nofault)[0]
        if (bad == 0) != want_ok:
            wrong.append(name)

    def write(m, off, n, stable, answer=True, committed=None):
        op = m._new("W", 0, off=off, n=n, stable=stable)
        if stable == UNSTABLE:
            m.unstable[0].append(op)
        m.sent(op, [])
        if answer:
            m.replied(op, True, stable if committed is None else committed,
                      b"v")
        return op

    def commit(m, verf=b"v"):
        op = m._new("C", 0)
        m.sent(op, [])
        m.replied(op, True, verf=verf)

    def setattr_(m, size, answer=True):
        op = m._new("S", 0, size=size)
        op.grow = False
        m.sent(op, [])
        if answer:
            m.replied(op, True)

    def w1_then_u(m, commit_verf=None):
        w1 = write(m, 0, 8192, FILE_SYNC)
        u = write(m, 4096, 8192, UNSTABLE)
        if commit_verf:
            commit(m, commit_verf)
        return w1, u

    def lost_u(m, verf):
        w1, u = w1_then_u(m, verf)
        return w1.data, 8192

    def landed_u(m, verf):
        w1, u = w1_then_u(m, verf)
        return w1.data[:4096] + u.data, 12288

    case("a FILE_SYNC write lost", False,
         lambda m: (bytes(8192), 8192) if write(m, 0, 8192, FILE_SYNC)
         else None)
    case("an UNSTABLE write not committed, lost", True,
         lambda m: lost_u(m, None))
    case("an UNSTABLE write committed with another verifier, lost", True,
         lambda m: lost_u(m, b"x"))
    case("an UNSTABLE write committed, lost", False,
         lambda m: lost_u(m, b"v"))
    case("an UNSTABLE write committed, read", True,
         lambda m: landed_u(m, b"v"))

    def superseded(m):
        w1 = write(m, 0, 4096, FILE_SYNC)
        write(m, 0, 4096, DATA_SYNC)
        return w1.data, 4096
    case("a write over which a later one was acknowledged", False,
         superseded)

    def in_flight(m):
        w1 = write(m, 0, 4096, FILE_SYNC, answer=False)
        w2 = m._new("W", 0, off=0, n=4096, stable=FILE_SYNC)
        m.sent(w2, [w1])
        m.replied(w2, True, FILE_SYNC, b"v")
        m.replied(w1, True, FILE_SYNC, b"v")
        return w1.data, 4096
    case("two overlapping writes in flight together: the first read",
         True, in_flight)

    def truncated(m, done):
        w1 = write(m, 0, 8192, FILE_SYNC)
        setattr_(m, 100)
        return (w1.data[:100], 100) if done else (w1.data, 8192)
    case("a truncate answered, undone", False,
         lambda m: truncated(m, False))
    case("a truncate answered, done", True, lambda m: truncated(m, True))

    def truncate_in_flight(m):
        w1 = write(m, 0, 8192, FILE_SYNC)
        setattr_(m, 100, answer=False)
        return w1.data, 8192
    case("a truncate in flight, not done", True, truncate_in_flight)

    def extended(m, size):
        write(m, 0, 100, FILE_SYNC)
        op = m.hist[0][0]
        setattr_(m, 5000)
        return op.data + bytes(size - 100), size
    case("an extend answered, lost", False, lambda m: extended(m, 100))
    case("an extend answered, kept", True, lambda m: extended(m, 5000))
    concurrent_cases(case, write, setattr_)
    return wrong


def concurrent_cases(case, write, setattr_):
    """self_test()'s SETATTRs sent among writes in flight (t2116)."""
    def send(m, kind, **kw):
        op = m._new(kind, 0, **kw)
        op.grow = False
        m.sent(op, [])
        return op

    def reply(m, op):
        m.replied(op, True, FILE_SYNC if op.kind == "W" else None, b"v")

    def racing(m, got):
        """A truncate to 0 and a FILE_SYNC write of 8 KiB at 0 in flight
        together; @got: "write" (it came last), "cut" (the truncate
        did), "half" (4 KiB of it: no order gives that)."""
        w = send(m, "W", off=0, n=8192, stable=FILE_SYNC)
        t = send(m, "S", size=0)
        reply(m, t)
        reply(m, w)
        return {"write": (w.data, 8192), "cut": (b"", 0),
                "half": (w.data[:4096], 4096)}[got]

    for nofault in (False, True):
        how = " (no fault)" if nofault else ""
        case("a truncate and a write in flight together, the write last" +
             how, True, lambda m: racing(m, "write"), nofault)
        case("a truncate and a write in flight together, the truncate "
             "last" + how, True, lambda m: racing(m, "cut"), nofault)
    case("a truncate and a write in flight together: a size no order "
         "gives (no fault)", False, lambda m: racing(m, "half"), True)

    def after_truncate(m):
        setattr_(m, 0)
        w = write(m, 0, 8192, FILE_SYNC)
        return (b"", 0) if w else None
    case("a write sent after a truncate was answered, cut by it", False,
         after_truncate)

    def resurrected(m):
        w = write(m, 0, 8192, FILE_SYNC)
        t = send(m, "S", size=0)
        late = send(m, "W", off=16384, n=4096, stable=FILE_SYNC)
        reply(m, t)
        reply(m, late)
        setattr_(m, 8192)
        return w.data, 8192
    case("bytes of a write a later truncate cut, back after an extend "
         "(a write in flight beside the truncate)", False, resurrected)

    def two_sizes(m, size):
        write(m, 0, 8192, FILE_SYNC)
        a = send(m, "S", size=0)
        b = send(m, "S", size=12288)
        reply(m, b)
        reply(m, a)
        return bytes(size), size
    case("two SETATTRs in flight together, either last", True,
         lambda m: two_sizes(m, 0), True)
    case("two SETATTRs in flight together, the other last", True,
         lambda m: two_sizes(m, 12288), True)
    case("two SETATTRs in flight together, a size neither gives", False,
         lambda m: two_sizes(m, 4096), True)

    def unstable_lost(m):
        write(m, 0, 4096, FILE_SYNC)
        write(m, 4096, 4096, UNSTABLE)
        return m.hist[0][0].data, 4096
    case("an UNSTABLE write answered, lost with no fault", False,
         unstable_lost, True)
