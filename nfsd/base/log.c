// SPDX-License-Identifier: Apache-2.0
/*
 * log: formats one line per message and writes it to stderr with a single
 * write(2), so lines from worker threads never interleave.
 */
#include "nfsd/base/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_int log_max_level = LOG_LEVEL_INFO;

static const char *const log_level_names[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

void log_set_level(enum log_level level)
{
	atomic_store(&log_max_level, (int)level);
}

bool log_enabled(enum log_level level)
{
	return (int)level <= atomic_load(&log_max_level);
}

static void log_vwrite(enum log_level level, const char *fmt, va_list ap)
{
	char line[1024];
	struct timespec now;
	struct tm tm;
	size_t n;
	int len;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	len = snprintf(line + n, sizeof(line) - n,
		       ".%03ldZ %s: ", now.tv_nsec / 1000000,
		       log_level_names[level]);
	if (len > 0) {
		n += (size_t)len;
	}
	len = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (len > 0) {
		n += (size_t)len;
	}
	if (n > sizeof(line) - 2) {
		n = sizeof(line) - 2;
	}
	line[n++] = '\n';
	/* Nothing sensible to do if stderr is gone. */
	if (write(STDERR_FILENO, line, n) < 0) {
		return;
	}
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(level)) {
		return;
	}
	va_start(ap, fmt);
	log_vwrite(level, fmt, ap);
	va_end(ap);
}

void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERROR, fmt, ap);
	va_end(ap);
	exit(1);
}
