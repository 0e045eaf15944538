#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Markdown pages hold together: every relative link and #anchor in
# README.md, docs/*.md and the other pages resolves, and every docs/NAME.md
# a source file, script, man page or page cites exists
# (t0007-docs-links.py).  Needs no build.
. "$(dirname "$0")/lib.sh"

here=$(dirname "$0")
check "relative links, anchors and docs/*.md citations resolve" \
	python3 -B "$here/t0007-docs-links.py"

# The checker finds what it must: a page with a broken link, a broken
# anchor and a good one fails it, naming both.
mkdir -p "$TEST_TMP/docs"
cat >"$TEST_TMP/docs/probe.md" <<'MD'
# Probe

## A `section`, here

[good](#a-section-here) [no file](nosuch.md) [no anchor](#nowhere)
MD
python3 -B "$here/t0007-docs-links.py" "$TEST_TMP/docs/probe.md" \
	>"$TEST_TMP/probe.out" 2>&1
rc=$?
check "a broken link fails the check" [ "$rc" -eq 1 ]
check "it names the missing file" grep -q "nosuch.md: no such file" "$TEST_TMP/probe.out"
check "it names the missing anchor" grep -q "no heading #nowhere" "$TEST_TMP/probe.out"
check "it accepts the good anchor" bash -c "! grep -q 'a-section-here' '$TEST_TMP/probe.out'"
test_done
