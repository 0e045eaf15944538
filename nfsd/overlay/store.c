// SPDX-License-Identifier: Apache-2.0
/*
 * store: the server's overlay: the config's state it is taken over, the
 * overlay as last recorded and the text last written, behind the lock
 * that serialises every change of the live state (admin API, SIGHUP).
 */
#include "nfsd/overlay/overlay.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct overlay_store {
	pthread_mutex_t lock;
	char path[4096];
	struct pool_state *base; /* the config's */
	struct traffic_caps base_caps;
	struct overlay *current;
	char *text; /* owned: what the file holds, as we encode it */
	size_t len;
};

int overlay_store_new(const char *path, struct overlay_store **out)
{
	struct overlay_store *s = calloc(1, sizeof(*s));
	int err = -ENOMEM;

	if (!s) {
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->base = calloc(1, sizeof(*s->base));
	s->current = calloc(1, sizeof(*s->current));
	if (!s->base || !s->current) {
		goto fail;
	}
	traffic_caps_default(&s->base_caps);
	err = -ENAMETOOLONG;
	if ((size_t)snprintf(s->path, sizeof(s->path), "%s", path) >=
	    sizeof(s->path)) {
		goto fail;
	}
	/* No file yet holds the same as an empty overlay. */
	err = overlay_encode(s->current, &s->text, &s->len);
	if (err) {
		goto fail;
	}
	*out = s;
	return 0;
fail:
	overlay_store_free(s);
	return err;
}

void overlay_store_free(struct overlay_store *s)
{
	if (!s) {
		return;
	}
	pthread_mutex_destroy(&s->lock);
	free(s->text);
	free(s->current);
	free(s->base);
	free(s);
}

void overlay_store_lock(struct overlay_store *s)
{
	pthread_mutex_lock(&s->lock);
}

void overlay_store_unlock(struct overlay_store *s)
{
	pthread_mutex_unlock(&s->lock);
}

const char *overlay_store_path(const struct overlay_store *s)
{
	return s->path;
}

/* Remembers the text of @ov as the file's. */
static int store_text_set(struct overlay_store *s, const struct overlay *ov)
{
	char *text;
	size_t len;
	int err = overlay_encode(ov, &text, &len);

	if (err) {
		return err;
	}
	free(s->text);
	s->text = text;
	s->len = len;
	return 0;
}

int overlay_store_load(struct overlay_store *s, struct overlay *out,
		       char *errbuf, size_t errlen)
{
	int err = overlay_file_read(s->path, out, errbuf, errlen);

	if (err) {
		return err;
	}
	memcpy(s->current, out, sizeof(*out));
	err = store_text_set(s, out);
	if (err) {
		snprintf(errbuf, errlen, "%s: out of memory", s->path);
	}
	return err;
}

void overlay_store_base_set(struct overlay_store *s,
			    const struct pool_state *base,
			    const struct traffic_caps *caps)
{
	memcpy(s->base, base, sizeof(*base));
	s->base_caps = *caps;
}

void overlay_store_base_get(const struct overlay_store *s,
			    struct pool_state *base, struct traffic_caps *caps)
{
	memcpy(base, s->base, sizeof(*base));
	*caps = s->base_caps;
}

const struct overlay *overlay_store_current(const struct overlay_store *s)
{
	return s->current;
}

int overlay_store_record(struct overlay_store *s, const struct pool_state *live,
			 const struct traffic_caps *live_caps, char *errbuf,
			 size_t errlen)
{
	char *text;
	size_t len;
	int err;

	overlay_diff(s->base, &s->base_caps, live, live_caps, s->current);
	err = overlay_encode(s->current, &text, &len);
	if (err) {
		snprintf(errbuf, errlen, "%s: out of memory", s->path);
		return err;
	}
	if (len == s->len && !memcmp(text, s->text, len)) {
		free(text);
		return 0;
	}
	err = overlay_file_write(s->path, text, len, errbuf, errlen);
	if (err) {
		free(text);
		return err;
	}
	free(s->text);
	s->text = text;
	s->len = len;
	return 0;
}
