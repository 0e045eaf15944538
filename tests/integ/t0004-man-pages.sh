#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The man pages (man/*.scd, built by scdoc into BUILD/man) cover every
# option each program's --help lists, and dsnfsd.conf(5) every config key
# the code parses; each page renders without a warning; every program prints
# the one VERSION with --version.
. "$(dirname "$0")/lib.sh"
MAN_DIR=$(dirname "$DSNFS_BIN")/man
VERSION=$(cat VERSION)

# The options a help text names: -x and --long-name, at a word's start.
help_options() {
	grep -oE '(^|[][ ,|(])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[][ ,|(]*//' |
		sort -u
}

# page_has PAGE OPTION: OPTION stands alone (not inside a longer option).
page_has() {
	grep -qE -- "(^|[^A-Za-z0-9-])$2([^A-Za-z0-9-]|\$)" "$1"
}

for pair in dsnfsd:8 dsnfsctl:8 dsvmdk:1 dsload:1; do
	prog=${pair%:*} sec=${pair#*:}
	src=man/$prog.$sec.scd
	"$DSNFS_BIN/$prog" --help >"$TEST_TMP/$prog.help" 2>&1
	check "$prog --help exits 0" [ $? -eq 0 ]
	opts=$(help_options <"$TEST_TMP/$prog.help")
	n=$(echo "$opts" | wc -w)
	missing=""
	for o in $opts; do
		page_has "$src" "$o" || missing="$missing $o"
	done
	[ -z "$missing" ] || echo "    $src lacks:$missing"
	check "$prog($sec) names all $n options of --help" [ -z "$missing" ]
	check "$prog --version prints '$prog $VERSION'" \
		[ "$("$DSNFS_BIN/$prog" --version)" = "$prog $VERSION" ]
done

# Config keys: every key the code parses (nfsd/config/ for [server] and
# [datastore NAME]; the modules that own [pool NAME], [traffic], [admin]
# and the pool keys of a datastore), as strcmp(key, "...") or a table row
# ({ "...", ... } or .key = "..."), is in dsnfsd.conf(5): fewer than 60
# found means this scan no longer matches the code, and fails.  The page is their one reference.
key_sources="nfsd/config/config.c nfsd/pool/pool_config.c
nfsd/traffic/traffic_config.c nfsd/admin/admin_config.c
nfsd/repl/repl_config.c"
keys=$(for f in $key_sources; do
	grep -ohE 'strn?cmp\(key, "[a-z_]+"|\{ "[a-z_]+",|\.(key|name) = "[a-z_]+"' "$f"
done | grep -oE '"[a-z_]+"' | tr -d '"' |
	grep -vxE 'k|kib|m|mib|g|gib|t|tib|ceph_' | sort -u)
n=$(echo "$keys" | wc -w)
check "the code's key table has its keys ($n found, 60 or more)" [ "$n" -ge 60 ]
missing=""
for k in $keys; do
	page_has man/dsnfsd.conf.5.scd "\\*$k\\*" || missing="$missing $k"
done
[ -z "$missing" ] || echo "    dsnfsd.conf.5.scd lacks:$missing"
check "dsnfsd.conf(5) names all $n keys the code parses" [ -z "$missing" ]
check "the README has no config reference of its own (one source)" \
	bash -c "! grep -q '^## Config reference' README.md"

for src in man/*.scd; do
	page=$MAN_DIR/$(basename "$src" .scd)
	check "$page is built" [ -s "$page" ]
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" >"$TEST_TMP/out" 2>"$TEST_TMP/warn"
	[ -s "$TEST_TMP/warn" ] && cat "$TEST_TMP/warn"
	check "$(basename "$page") renders without a warning" [ ! -s "$TEST_TMP/warn" ]
done
test_done
