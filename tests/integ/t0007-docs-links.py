# SPDX-License-Identifier: Apache-2.0
"""Every relative link and anchor in the repository's Markdown resolves.

For each *.md file git knows (README.md, docs/, tests/ ...): every inline
link or image [text](target) outside code, whose target is not a URL,
names a file or directory that exists, relative to the page; a #anchor
names a heading of that page (GitHub's slugs: lower case, punctuation
dropped, spaces to hyphens, -1, -2 ... for repeats) or an explicit
<a name=...> / id=....  And every docs/NAME.md that a source file, script,
man page or page names exists, so a comment's citation can be followed.

Prints one line per broken link (file:line: target: why) and exits 1 if
there is any; the counts it checked otherwise."""
import os
import re
import subprocess
import sys

LINK = re.compile(r'!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
EXPLICIT = re.compile(r'<a\s+(?:name|id)="([^"]+)"|\sid="([^"]+)"')
CITED = re.compile(r'\bdocs/([A-Za-z0-9_.-]+\.md)\b')


def slug(text):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)  # links: their text
    text = re.sub(r'<[^>]+>', '', text)  # inline HTML
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)  # keeps letters, digits, _ - space
    return text.replace(' ', '-')


def prose_lines(path):
    """(line number, text) of the lines outside fenced and indented code,
    inline code spans blanked."""
    fence = None
    prev_blank = True
    in_indented = False
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            stripped = line.lstrip()
            if fence:
                if stripped.startswith(fence):
                    fence = None
                continue
            m = re.match(r'(```+|~~~+)', stripped)
            if m:
                fence = m.group(1)[:3]
                continue
            if line.startswith(('    ', '\t')) and (prev_blank or in_indented):
                in_indented = True
                continue
            in_indented = False
            prev_blank = not line.strip()
            yield n, re.sub(r'(`+)(?:(?!\1).)+?\1', '', line)


def anchors(path, cache={}):
    if path not in cache:
        seen = {}
        found = set()
        for _, line in prose_lines(path):
            for m in EXPLICIT.finditer(line):
                found.add(m.group(1) or m.group(2))
        with open(path, encoding='utf-8') as f:
            text = f.read()
        # Headings: code spans count (their text stays, the backticks go).
        fence = None
        for line in text.split('\n'):
            s = line.lstrip()
            if fence:
                if s.startswith(fence):
                    fence = None
                continue
            m = re.match(r'(```+|~~~+)', s)
            if m:
                fence = m.group(1)[:3]
                continue
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else '%s-%d' % (base, n))
        cache[path] = found
    return cache[path]


def main():
    files = subprocess.run(['git', 'ls-files', '*.md'], check=True,
                           capture_output=True, text=True).stdout.split()
    files += [f for f in sys.argv[1:] if f not in files]
    bad = []
    links = 0
    for page in files:
        if not os.path.exists(page):
            continue
        base = os.path.dirname(page)
        for n, line in prose_lines(page):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r'[a-z][a-z0-9+.-]*:', target, re.I):
                    continue  # http:, https:, mailto: ...
                links += 1
                path, _, anchor = target.partition('#')
                dest = os.path.normpath(os.path.join(base, path)) if path else page
                if not os.path.exists(dest):
                    bad.append('%s:%d: %s: no such file %s' % (page, n, target, dest))
                    continue
                if anchor and dest.endswith('.md') and anchor not in anchors(dest):
                    bad.append('%s:%d: %s: no heading #%s in %s' % (page, n, target, anchor, dest))
    # docs/NAME.md named anywhere in the sources, scripts, man pages, pages.
    cited = 0
    srcs = subprocess.run(['git', 'ls-files', '*.c', '*.h', '*.sh', '*.py',
                           '*.scd', '*.md', 'Makefile', '*.mk', '*.ini',
                           '*.conf'], check=True, capture_output=True,
                          text=True).stdout.split()
    for src in srcs:
        if not os.path.exists(src) or 't0007-docs-links' in src:
            continue
        with open(src, encoding='utf-8', errors='replace') as f:
            for n, line in enumerate(f, 1):
                for m in CITED.finditer(line):
                    cited += 1
                    if not os.path.exists(os.path.join('docs', m.group(1))):
                        bad.append('%s:%d: cites docs/%s, which does not exist' % (src, n, m.group(1)))
    for b in bad:
        print('    ' + b)
    print('    %d pages, %d relative links, %d citations of docs/*.md checked'
          % (len(files), links, cited))
    if links < 10 or cited < 10:
        print('    too few links found: the checker is broken')
        return 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
