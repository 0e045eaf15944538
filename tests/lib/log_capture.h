/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log_capture: the test double of nfsd/base/log.c.  Every log call appends one
 * line to an in-memory buffer.
 */
#ifndef DSNFS_TESTS_LOG_CAPTURE_H
#define DSNFS_TESTS_LOG_CAPTURE_H

#include <stdbool.h>

#include "nfsd/base/log.h"

/* All lines logged since the last reset.  Borrowed. */
const char *log_capture_text(void);
bool log_capture_contains(const char *needle);
void log_capture_reset(void);

#endif
