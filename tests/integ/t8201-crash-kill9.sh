#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Crash consistency under SIGKILL: acknowledged stable writes survive,
# handles survive, the write verifier changes (see the .py for the scope).
. "$(dirname "$0")/lib.sh"

check "acknowledged writes survive 8 kills" python3 "$(dirname "$0")/t8201-crash-kill9.py" "$DSNFS_BIN/dsnfsd" "$TEST_TMP" "${CRASH_ROUNDS:-8}"
test_done
