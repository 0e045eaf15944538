/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log: the one place dsnfsd's messages go (stderr, or syslog later).
 * One shape: "component: subject: what happened[: why]".  Levels:
 * error (an operator must act), warn (a client or image misbehaved),
 * info (lifecycle), debug (per request; off by default, the level is tested
 * before any formatting).  Errors are passed as values: strerror(-err).
 */
#ifndef DSNFS_LOG_H
#define DSNFS_LOG_H

#include <stdbool.h>

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/* Sets the most verbose level that is printed (default LOG_LEVEL_INFO). */
void log_set_level(enum log_level level);

/* True when messages of @level are printed; test it before costly formatting.
 */
bool log_enabled(enum log_level level);

/* Prints one line at @level.  Thread-safe: one write(2) per line. */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prints one error line and exits(1).  Only before the loops start. */
void fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...)                                                         \
	do {                                                                   \
		if (log_enabled(LOG_LEVEL_DEBUG))                              \
			log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__);                 \
	} while (0)

#endif
