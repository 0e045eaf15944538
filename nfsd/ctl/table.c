// SPDX-License-Identifier: Apache-2.0
/*
 * table: dsnfsctl's readable output: aligned columns under a header, and
 * the units sizes and rates are shown in.
 */
#include "nfsd/ctl/ctl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"

void ctl_table_init(struct ctl_table *t, const char *const *header)
{
	memset(t, 0, sizeof(*t));
	while (header[t->ncols] && t->ncols < CTL_TABLE_MAX_COLS) {
		t->header[t->ncols] = header[t->ncols];
		t->ncols++;
	}
}

void ctl_table_row(struct ctl_table *t, ...)
{
	va_list ap;
	char **p;

	if (t->failed) {
		return;
	}
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;

		p = realloc(t->cells, cap * t->ncols * sizeof(*p));
		if (!p) {
			t->failed = true;
			return;
		}
		t->cells = p;
		t->cap = cap;
	}
	p = &t->cells[t->nrows * t->ncols];
	va_start(ap, t);
	for (size_t c = 0; c < t->ncols; c++) {
		const char *cell = va_arg(ap, const char *);

		/* A field missing from the server's reply shows as "-". */
		p[c] = strdup(cell ? cell : "-");
		if (!p[c]) {
			t->failed = true;
		}
	}
	va_end(ap);
	t->nrows++;
}

static void table_free(struct ctl_table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++) {
		free(t->cells[i]);
	}
	free(t->cells);
	t->cells = NULL;
	t->nrows = 0;
}

static void table_line(const struct ctl_table *t, const size_t *width,
		       const char *const *cells)
{
	for (size_t c = 0; c < t->ncols; c++) {
		if (c + 1 == t->ncols) {
			printf("%s\n", cells[c]);
		} else {
			printf("%-*s  ", (int)width[c], cells[c]);
		}
	}
}

int ctl_table_print(struct ctl_table *t)
{
	size_t width[CTL_TABLE_MAX_COLS];

	if (t->failed) {
		table_free(t);
		fprintf(stderr, "dsnfsctl: out of memory\n");
		return -ENOMEM;
	}
	for (size_t c = 0; c < t->ncols; c++) {
		width[c] = strlen(t->header[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t w = strlen(t->cells[r * t->ncols + c]);

			if (w > width[c]) {
				width[c] = w;
			}
		}
	}
	table_line(t, width, t->header);
	for (size_t r = 0; r < t->nrows; r++) {
		table_line(t, width,
			   (const char *const *)&t->cells[r * t->ncols]);
	}
	table_free(t);
	return 0;
}

const char *ctl_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B",   "KiB", "MiB",
					     "GiB", "TiB", "PiB" };
	unsigned u = 0;
	double v = (double)bytes;

	while (u + 1 < ARRAY_SIZE(units) &&
	       bytes >= (UINT64_C(1) << (10 * (u + 1)))) {
		u++;
	}
	v = (double)bytes / (double)(UINT64_C(1) << (10 * u));
	if (bytes % (UINT64_C(1) << (10 * u)) == 0) {
		snprintf(buf, len, "%" PRIu64 " %s", bytes >> (10 * u),
			 units[u]);
	} else {
		snprintf(buf, len, "%.1f %s", v, units[u]);
	}
	return buf;
}

const char *ctl_fmt_rate(uint64_t bytes_per_s, char *buf, size_t len)
{
	const uint64_t mib = UINT64_C(1) << 20;

	if (bytes_per_s == 0) {
		snprintf(buf, len, "-");
	} else if (bytes_per_s % mib == 0) {
		snprintf(buf, len, "%" PRIu64 " MiB/s", bytes_per_s / mib);
	} else {
		snprintf(buf, len, "%.1f MiB/s", (double)bytes_per_s / mib);
	}
	return buf;
}

const char *ctl_fmt_member(const json_t *obj, const char *key, bool bytes,
			   char *buf, size_t len)
{
	const json_t *v = json_object_get(obj, key);

	if (json_is_integer(v) && bytes) {
		return ctl_fmt_bytes((uint64_t)json_integer_value(v), buf, len);
	}
	if (json_is_integer(v)) {
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
	} else if (json_is_real(v)) {
		/* %g: the value as set (scale 0.03125), not rounded to 0.0. */
		snprintf(buf, len, "%.6g", json_real_value(v));
	} else if (json_is_string(v)) {
		snprintf(buf, len, "%s", json_string_value(v));
	} else if (json_is_boolean(v)) {
		snprintf(buf, len, "%s", json_is_true(v) ? "yes" : "no");
	} else {
		snprintf(buf, len, "-");
	}
	return buf;
}

const char *ctl_fmt_percent(const json_t *obj, const char *key, char *buf,
			    size_t len)
{
	const json_t *v = json_object_get(obj, key);

	if (json_is_number(v)) {
		snprintf(buf, len, "%.1f", json_number_value(v));
	} else {
		snprintf(buf, len, "-");
	}
	return buf;
}

int ctl_parse_uint(const char *text, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!text[0]) {
		return -EINVAL;
	}
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10) {
			return -EINVAL;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v > max) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}
