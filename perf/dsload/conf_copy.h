/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conf_copy: the opening and closing of a server config that dsload
 * writes again under another name with some lines changed (the
 * profile's fitted [traffic] caps, the ceiling server's access keys);
 * what is copied is the caller's.
 */
#ifndef DSLOAD_CONF_COPY_H
#define DSLOAD_CONF_COPY_H

#include <stddef.h>
#include <stdio.h>

/* Opens @base_path to read (*@in) and @out_path to write (*@out):
 * 0, or -errno with the path and reason in @errbuf and nothing open. */
int conf_copy_open(const char *base_path, FILE **in, const char *out_path,
		   FILE **out, char *errbuf, size_t errlen);

/* Closes both; 0, or -errno when @out could not be written out (the
 * reason in @errbuf). */
int conf_copy_close(FILE *in, FILE *out, const char *out_path, char *errbuf,
		    size_t errlen);

#endif
