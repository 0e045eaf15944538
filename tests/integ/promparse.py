#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A strict checker of the Prometheus text exposition format 0.0.4, for
dsnfsd's /metrics (prometheus.io/docs/instrumenting/exposition_formats).

    promparse.py FILE|-        exit 0 and print "N families, N samples",
                               or exit 1 naming the first broken rule
                               and its line.

Checks what the format requires (line grammar, metric and label names,
label value escapes, float values, one HELP and one TYPE per family before
its samples, a family's samples together, no repeated series, a final
newline, summary and histogram sample suffixes) and what `promtool check
metrics` lints (counters end in _total, HELP present, no _total on other
types).  promtool itself comes with Debian's prometheus package, 96 MB and a
service; this file stands in for it.
"""
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
FLOAT = re.compile(
    r"[+-]?(?:Inf|NaN|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\Z")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
SUFFIXES = {"summary": ("", "_sum", "_count"),
            "histogram": ("_bucket", "_sum", "_count")}


class Bad(Exception):
    pass


def parse_labels(text, pos, lineno):
    """Parses {a="x",b="y"} from text[pos] == '{'; returns (labels, end)."""
    labels = []
    pos += 1
    while True:
        if pos < len(text) and text[pos] == "}":
            return labels, pos + 1
        m = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*").match(text, pos)
        if not m:
            raise Bad(f"line {lineno}: bad label name at column {pos + 1}")
        name = m.group(0)
        if name.startswith("__"):
            raise Bad(f"line {lineno}: label {name} is reserved")
        pos = m.end()
        if text[pos:pos + 2] != '="':
            raise Bad(f"line {lineno}: label {name} without =\"value\"")
        pos += 2
        value = []
        while True:
            if pos >= len(text):
                raise Bad(f"line {lineno}: label {name}: unterminated value")
            c = text[pos]
            if c == "\\":
                nxt = text[pos + 1:pos + 2]
                if nxt not in ("\\", '"', "n"):
                    raise Bad(f"line {lineno}: label {name}: bad escape "
                              f"\\{nxt}")
                value.append({"\\": "\\", '"': '"', "n": "\n"}[nxt])
                pos += 2
            elif c == '"':
                pos += 1
                break
            elif c == "\n":
                raise Bad(f"line {lineno}: raw newline in a label value")
            else:
                value.append(c)
                pos += 1
        if any(n == name for n, _ in labels):
            raise Bad(f"line {lineno}: label {name} given twice")
        labels.append((name, "".join(value)))
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        if pos < len(text) and text[pos] == "}":
            return labels, pos + 1
        raise Bad(f"line {lineno}: expected , or }} after label {name}")


def family_of(name, types):
    """The declared family a sample name belongs to, and its suffix."""
    for base, kind in types.items():
        for suffix in SUFFIXES.get(kind, ("",)):
            if name == base + suffix:
                return base, suffix
    return name, ""


def check(text):
    if text and not text.endswith("\n"):
        raise Bad("the last line does not end with a newline")
    helps, types, done = {}, {}, set()
    series = set()
    current = None
    nsamples = 0
    for lineno, line in enumerate(text.split("\n")[:-1], 1):
        if line.strip() == "":
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not NAME.match(name):
                    raise Bad(f"line {lineno}: bad metric name {name!r}")
                if name in done or (current and current != name and
                                    name in helps | types.keys()):
                    raise Bad(f"line {lineno}: {parts[1]} for {name} "
                              f"after its samples")
                if parts[1] == "HELP":
                    if name in helps:
                        raise Bad(f"line {lineno}: second HELP for {name}")
                    help_text = parts[3] if len(parts) > 3 else ""
                    if re.search(r"\\[^\\n]", help_text.replace("\\\\", "")):
                        raise Bad(f"line {lineno}: bad escape in HELP")
                    helps[name] = help_text
                else:
                    if name in types:
                        raise Bad(f"line {lineno}: second TYPE for {name}")
                    kind = parts[3] if len(parts) > 3 else ""
                    if kind not in TYPES:
                        raise Bad(f"line {lineno}: bad type {kind!r}")
                    types[name] = kind
                if current and current != name:
                    done.add(current)
                current = name
            continue
        m = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*").match(line)
        if not m:
            raise Bad(f"line {lineno}: not a sample: {line!r}")
        name = m.group(0)
        pos = m.end()
        labels = []
        if pos < len(line) and line[pos] == "{":
            labels, pos = parse_labels(line, pos, lineno)
        rest = line[pos:]
        if not rest.startswith(" "):
            raise Bad(f"line {lineno}: no space before the value")
        fields = rest.split(" ")[1:]
        if not 1 <= len(fields) <= 2 or not FLOAT.match(fields[0]):
            raise Bad(f"line {lineno}: bad value {rest.strip()!r}")
        if len(fields) == 2 and not re.match(r"-?[0-9]+\Z", fields[1]):
            raise Bad(f"line {lineno}: bad timestamp {fields[1]!r}")
        base, suffix = family_of(name, types)
        kind = types.get(base, "untyped")
        if base in done:
            raise Bad(f"line {lineno}: samples of {base} are not together")
        if current and current != base:
            done.add(current)
        current = base
        if kind == "summary" and suffix == "" and \
                not any(n == "quantile" for n, _ in labels):
            raise Bad(f"line {lineno}: summary sample without quantile")
        key = (name, tuple(sorted(labels)))
        if key in series:
            raise Bad(f"line {lineno}: series {name}{labels} repeated")
        series.add(key)
        nsamples += 1
    for name, kind in types.items():
        if name not in helps:
            raise Bad(f"{name}: no HELP (promtool lint)")
        if kind == "counter" and not name.endswith("_total"):
            raise Bad(f"{name}: a counter's name ends in _total "
                      f"(promtool lint)")
        if kind != "counter" and name.endswith("_total"):
            raise Bad(f"{name}: only counters end in _total "
                      f"(promtool lint)")
    return len(types), nsamples


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = sys.argv[1]
    text = sys.stdin.read() if path == "-" else open(path).read()
    try:
        families, samples = check(text)
    except Bad as e:
        print(f"promparse: {e}", file=sys.stderr)
        return 1
    print(f"{families} families, {samples} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
