#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bad input at the RPC layer: each gets its RPC error or a closed
# connection, and a fresh connection is answered afterwards.
. "$(dirname "$0")/lib.sh"
raw() { python3 "$(dirname "$0")/rawrpc.py" "$NFS_PORT" "$1" >/dev/null; }

dsnfsd_start || exit 1
check "garbage record closes the connection" raw garbage
check "NULL answered after garbage" raw null
check "record mark of 2 GiB closes the connection" raw huge-mark
check "record mark of 0-length last fragment + junk closes" raw huge-mark-2g
check "NULL answered after huge marks" raw null
check "unknown program -> PROG_UNAVAIL" raw wrong-prog
check "NFS version 4 -> PROG_MISMATCH" raw wrong-vers
check "procedure 23 -> PROC_UNAVAIL" raw wrong-proc
check "procedure 22 (VAAI-NAS) without a body -> GARBAGE_ARGS" raw vaai-empty
check "procedure 22 on NFS version 2 -> PROG_MISMATCH" raw vaai-v2
check "RPC version 3 -> RPC_MISMATCH" raw wrong-rpcvers
check "malformed AUTH_SYS -> AUTH_ERROR" raw bad-cred
check "truncated GETATTR args -> GARBAGE_ARGS" raw truncated-args
check "forged handle -> BADHANDLE or STALE" raw forged-handle
check "half-closed client gets every reply, then EOF" raw half-close
check "NULL answered at the end" raw null
check "server still running" kill -0 "$DSNFSD_PID"
check "server exits cleanly" dsnfsd_stop
test_done
