#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes an ESXi seSparse delta file, since no tool on this machine does.

    mksesparse.py FILE CAPACITY_SECTORS [ENTRY ...] [--version V]
                  [--replay] [--gde-high H]

Each ENTRY is GRAIN:KIND[:BYTE[:SLOT]]: guest grain GRAIN (4 KiB) is
`alloc` (stored in grain slot SLOT of the file, filled with BYTE), `zero`
or `unmapped` (both read as zeros), or `bad` (a table entry of type 0x5,
which no seSparse reader accepts).  Slots are placed where given, so a
test can put guest grain 3 in slot 4097 and check the split index encoding
(low 12 bits in bits 48-59, the rest in bits 0-47).  The corruptions:
--version writes another constant-header version, --replay sets the
volatile header's replay-journal flag, --gde-high H writes H as the top
32 bits of the first directory entry.  Layout as QEMU's block/vmdk.c reads
it: constant header at sector 0, volatile header at 1, journal header and
journal, the directory, the tables, then the grains; the file is sparse.
"""
import struct
import sys

GRAIN = 8  # sectors
GT_SECTORS = 64
GTES = 4096


def main(argv):
    args = argv[1:]
    version, replay, gde_high = 0x0000000200000001, 0, 0x10000000
    positional = []
    while args:
        a = args.pop(0)
        if a == '--version':
            version = int(args.pop(0), 0)
        elif a == '--replay':
            replay = 1
        elif a == '--gde-high':
            gde_high = int(args.pop(0), 0)
        else:
            positional.append(a)
    path, cap = positional[0], int(positional[1])
    entries = [e.split(':') for e in positional[2:]]

    n_gd = (cap + GTES * GRAIN - 1) // (GTES * GRAIN)
    gd_off, gd_size = 16, max(1, (n_gd * 8 + 511) // 512)
    gt_off = gd_off + gd_size
    gt_size = n_gd * GT_SECTORS
    grains_off = gt_off + gt_size
    grains_size = cap  # room for every grain of the disk and then some
    hdr = struct.pack(
        '<26Q', 0xcafebabe, version, cap, GRAIN, GT_SECTORS, 0, 0, 0, 0, 0,
        1, 1,  # volatile header
        2, 1,  # journal header
        3, 8,  # journal
        gd_off, gd_size, gt_off, gt_size,
        11, 1,  # free bitmap
        12, 4,  # backmap
        grains_off, grains_size) + b'\0' * 304
    vol = struct.pack('<4Q', 0xcafecafe, 0, 1, replay) + b'\0' * 480
    assert len(hdr) == 512 and len(vol) == 512

    gd = [0] * n_gd
    tables = {}
    grains = {}
    next_slot = 0
    for e in entries:
        g, kind = int(e[0]), e[1]
        t, i = divmod(g, GTES)
        table = tables.setdefault(t, [0] * GTES)
        gd[t] = (gde_high << 32) | t
        if kind == 'alloc':
            byte = e[2].encode() if len(e) > 2 else b'D'
            slot = int(e[3]) if len(e) > 3 else next_slot
            next_slot = max(next_slot, slot + 1)
            table[i] = (0x3 << 60) | ((slot & 0xfff) << 48) | (slot >> 12)
            grains[slot] = byte * (GRAIN * 512)
        elif kind == 'zero':
            table[i] = 0x2 << 60
        elif kind == 'unmapped':
            table[i] = (0x1 << 60) | 0xabc  # low bits carry no meaning
        elif kind == 'bad':
            table[i] = 0x5 << 60
        else:
            raise SystemExit('unknown kind ' + kind)

    end = (grains_off + max(grains, default=-1) * GRAIN + GRAIN) * 512
    with open(path, 'wb') as f:
        f.write(hdr + vol)
        f.seek(gd_off * 512)
        f.write(struct.pack('<%dQ' % n_gd, *gd))
        for t, table in tables.items():
            f.seek((gt_off + t * GT_SECTORS) * 512)
            f.write(struct.pack('<%dQ' % GTES, *table))
        for slot, data in grains.items():
            f.seek((grains_off + slot * GRAIN) * 512)
            f.write(data)
        # The last grain, or the tables region without one, ends the file.
        f.truncate(max(end, grains_off * 512))


if __name__ == '__main__':
    main(sys.argv)
