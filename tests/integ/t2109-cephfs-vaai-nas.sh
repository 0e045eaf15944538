#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# VAAI-NAS in-band (NFSv3 procedure 22) on a CephFS datastore: t6120's
# checks with ds1 on the throw-away cluster (tests/ceph/lib.sh, through
# dsnfsd_start): the clone copies through libcephfs reads and writes and
# keeps the holes, FSTAT's unique bytes are the allocated ones, FRESERVE
# is not offered (NFS3ERR_NOTSUPP, nothing changed), and every refusal
# holds as on a local datastore.
export DSNFS_DS1_BACKEND=cephfs
. "$(dirname "$0")/t6120-vaai-nas-inband.sh"
