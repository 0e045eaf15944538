// SPDX-License-Identifier: Apache-2.0
/*
 * log_capture: replaces nfsd/base/log.c in unit tests.  Messages are kept in a
 * buffer that tests read through log_capture_text() and assert on.
 */
#include "tests/lib/log_capture.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char captured[16384];
static size_t captured_len;
static enum log_level capture_level = LOG_LEVEL_DEBUG;

void log_set_level(enum log_level level)
{
	capture_level = level;
}

bool log_enabled(enum log_level level)
{
	return level <= capture_level;
}

static void log_capture_append(const char *fmt, va_list ap)
{
	size_t room = sizeof(captured) - captured_len;
	int n;

	if (room <= 1) {
		return;
	}
	n = vsnprintf(captured + captured_len, room - 1, fmt, ap);
	if (n < 0) {
		return;
	}
	captured_len += (size_t)n < room - 1 ? (size_t)n : room - 2;
	captured[captured_len++] = '\n';
	captured[captured_len] = '\0';
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(level)) {
		return;
	}
	va_start(ap, fmt);
	log_capture_append(fmt, ap);
	va_end(ap);
}

void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

const char *log_capture_text(void)
{
	return captured;
}

bool log_capture_contains(const char *needle)
{
	return strstr(captured, needle) != NULL;
}

void log_capture_reset(void)
{
	captured_len = 0;
	captured[0] = '\0';
}
