#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The intent log opens only its own file (issue 23, finding 8): a 1 MiB
# file of data named as intent_log (a flat extent by typo) makes dsnfsd
# refuse to start with an error naming it, and the file is left byte for
# byte; a log readable by others is refused too.  A path that does not
# exist yet still becomes a new log, 0600.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TEST_TMP/v"
head -c 1048576 /dev/urandom >"$TEST_TMP/v/disk-flat.vmdk"
chmod 600 "$TEST_TMP/v/disk-flat.vmdk"
before=$(sha256sum <"$TEST_TMP/v/disk-flat.vmdk")
printf '[server]\nintent_log = %s\n' "$TEST_TMP/v/disk-flat.vmdk" \
	>"$TEST_TMP/v/typo.conf"
if dsnfsd_start -c "$TEST_TMP/v/typo.conf" 2>/dev/null; then
	dsnfsd_stop
	check "dsnfsd refuses a file of data as intent_log" false
else
	check "dsnfsd refuses a file of data as intent_log" true
fi
check "the refusal names the file and why" grep -q \
	"intent_log $TEST_TMP/v/disk-flat.vmdk: .*not an intent log" \
	"$TEST_TMP/dsnfsd.log"
check "the file is byte for byte unchanged" \
	[ "$(sha256sum <"$TEST_TMP/v/disk-flat.vmdk")" = "$before" ]

# A new log where nothing was: made 0600; then refused once made 0644.
printf '[server]\nintent_log = %s\n' "$TEST_TMP/v/intent.log" \
	>"$TEST_TMP/v/ok.conf"
old_umask=$(umask)
umask 0
dsnfsd_start -c "$TEST_TMP/v/ok.conf" || exit 1
umask "$old_umask"
check "server stops cleanly" dsnfsd_stop
check "a new log is made 0600" [ "$(stat -c %a "$TEST_TMP/v/intent.log")" = 600 ]
chmod 644 "$TEST_TMP/v/intent.log"
if dsnfsd_start -c "$TEST_TMP/v/ok.conf" 2>/dev/null; then
	dsnfsd_stop
	check "a log readable by others is refused" false
else
	check "a log readable by others is refused" grep -q \
		"intent_log $TEST_TMP/v/intent.log: mode 0644" \
		"$TEST_TMP/dsnfsd.log"
fi
test_done
