// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/descriptor.c: the descriptor grammar (VMware "Virtual Disk Format
 * 5.0", "The Descriptor File"): header lines `key=value` (version, CID,
 * parentCID, createType, parentFileNameHint and any other), extent lines
 * `ACCESS SIZE TYPE "FILE" [OFFSET]`, and the disk database `ddb.key =
 * "value"`.  Parsing is bounded by the caps of format.h and names the line
 * of every error; formatting keeps the lines we do not interpret.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "vmdk/vmdk_int.h"

static const char *const access_names[] = {
	[VMDK_ACCESS_RW] = "RW",
	[VMDK_ACCESS_RDONLY] = "RDONLY",
	[VMDK_ACCESS_NOACCESS] = "NOACCESS",
};

static const char *const type_names[] = {
	[VMDK_EXTENT_FLAT] = "FLAT",
	[VMDK_EXTENT_VMFS] = "VMFS",
	[VMDK_EXTENT_SPARSE] = "SPARSE",
	[VMDK_EXTENT_VMFSSPARSE] = "VMFSSPARSE",
	[VMDK_EXTENT_SESPARSE] = "SESPARSE",
	[VMDK_EXTENT_ZERO] = "ZERO",
};

/* Extent types of the format that this library does not read. */
static const char *const unsupported_types[] = { "VMFSRDM", "VMFSRAW",
						 "VMFSRAWDEVICEMAP" };

const char *vmdk__access_name(enum vmdk_access access)
{
	return access_names[access];
}

const char *vmdk__extent_type_name(enum vmdk_extent_type type)
{
	return type_names[type];
}

uint32_t vmdk__cid_random(void)
{
	uint32_t cid;

	if (getrandom(&cid, sizeof(cid), 0) != sizeof(cid)) {
		cid = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
	}
	if (cid >= 0xfffffffeu) {
		cid = 0x5a5a5a5au;
	}
	return cid;
}

/*
 * Room for one more item after the @n (of @size bytes) at @arr: an array
 * grows to twice its size when @n is a power of two, so it always has room
 * for its next power of two, and 32,768 extents cost 16 reallocs, not
 * 32,768 (one each made parsing such a descriptor quadratic).  Returns
 * the array, or NULL (@arr untouched) when it cannot grow.
 */
static void *desc_room_for_one(void *arr, size_t n, size_t size)
{
	if (n & (n - 1)) {
		return arr;
	}
	return realloc(arr, (n ? 2 * n : 1) * size);
}

static int kv_append(struct vmdk_kv **arr, size_t *n, const char *key,
		     size_t key_len, const char *value, size_t value_len,
		     bool quoted)
{
	struct vmdk_kv *grown;
	char *k;
	char *v;

	if (*n >= VMDK_MAX_DESCRIPTOR_KEYS) {
		return -E2BIG;
	}
	k = strndup(key, key_len);
	v = strndup(value, value_len);
	grown = desc_room_for_one(*arr, *n, sizeof(**arr));
	if (!k || !v || !grown) {
		free(k);
		free(v);
		if (grown) {
			*arr = grown;
		}
		return -ENOMEM;
	}
	*arr = grown;
	grown[*n] = (struct vmdk_kv){ .key = k, .value = v, .quoted = quoted };
	(*n)++;
	return 0;
}

static void kv_free(struct vmdk_kv *arr, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(arr[i].key);
		free(arr[i].value);
	}
	free(arr);
}

void vmdk__descriptor_fini(struct vmdk_descriptor *d)
{
	kv_free(d->keys, d->n_keys);
	kv_free(d->ddb, d->n_ddb);
	for (size_t i = 0; i < d->n_extents; i++) {
		free(d->extents[i].file);
	}
	free(d->extents);
	memset(d, 0, sizeof(*d));
}

static struct vmdk_kv *kv_find(struct vmdk_kv *arr, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(arr[i].key, key)) {
			return &arr[i];
		}
	}
	return NULL;
}

static bool is_ddb_key(const char *key)
{
	return !strncmp(key, "ddb.", 4);
}

const char *vmdk__descriptor_get(const struct vmdk_descriptor *d,
				 const char *key)
{
	const struct vmdk_kv *kv;

	if (is_ddb_key(key)) {
		kv = kv_find(d->ddb, d->n_ddb, key);
	} else {
		kv = kv_find(d->keys, d->n_keys, key);
	}
	return kv ? kv->value : NULL;
}

int vmdk__descriptor_set(struct vmdk_descriptor *d, const char *key,
			 const char *value)
{
	bool ddb = is_ddb_key(key);
	struct vmdk_kv *kv;
	bool quoted;
	char *copy;

	kv = ddb ? kv_find(d->ddb, d->n_ddb, key)
		 : kv_find(d->keys, d->n_keys, key);
	if (kv) {
		copy = strdup(value);
		if (!copy) {
			return -ENOMEM;
		}
		free(kv->value);
		kv->value = copy;
		return 0;
	}
	quoted = ddb || (strcmp(key, "version") && strcmp(key, "CID") &&
			 strcmp(key, "parentCID"));
	if (ddb) {
		return kv_append(&d->ddb, &d->n_ddb, key, strlen(key), value,
				 strlen(value), true);
	}
	return kv_append(&d->keys, &d->n_keys, key, strlen(key), value,
			 strlen(value), quoted);
}

void vmdk__descriptor_set_cid(struct vmdk_descriptor *d, uint32_t cid)
{
	d->cid = cid;
}

static void kv_remove(struct vmdk_kv *arr, size_t *n, const char *key)
{
	for (size_t i = 0; i < *n; i++) {
		if (!strcmp(arr[i].key, key)) {
			free(arr[i].key);
			free(arr[i].value);
			memmove(&arr[i], &arr[i + 1],
				(*n - i - 1) * sizeof(arr[0]));
			(*n)--;
			return;
		}
	}
}

void vmdk__descriptor_unset(struct vmdk_descriptor *d, const char *key)
{
	if (is_ddb_key(key)) {
		kv_remove(d->ddb, &d->n_ddb, key);
	} else {
		kv_remove(d->keys, &d->n_keys, key);
	}
}

int vmdk__descriptor_set_parent(struct vmdk_descriptor *d, uint32_t cid,
				const char *hint)
{
	d->parent_cid = cid;
	if (!hint) {
		vmdk__descriptor_unset(d, "parentFileNameHint");
		return 0;
	}
	return vmdk__descriptor_set(d, "parentFileNameHint", hint);
}

int vmdk__descriptor_add_extent(struct vmdk_descriptor *d,
				enum vmdk_access access, uint64_t len_sectors,
				enum vmdk_extent_type type, const char *file,
				uint64_t offset_sectors)
{
	struct vmdk_desc_extent *grown;
	char *copy = NULL;

	if (d->n_extents >= VMDK_MAX_EXTENTS) {
		return -E2BIG;
	}
	if (file) {
		copy = strdup(file);
		if (!copy) {
			return -ENOMEM;
		}
	}
	grown = desc_room_for_one(d->extents, d->n_extents, sizeof(*grown));
	if (!grown) {
		free(copy);
		return -ENOMEM;
	}
	d->extents = grown;
	grown[d->n_extents++] = (struct vmdk_desc_extent){
		.access = access,
		.len_sectors = len_sectors,
		.type = type,
		.file = copy,
		.offset_sectors = offset_sectors,
	};
	d->size_sectors += len_sectors;
	return 0;
}

int vmdk__descriptor_init(struct vmdk_descriptor *d, const char *create_type)
{
	int err;

	memset(d, 0, sizeof(*d));
	d->version = 1;
	d->cid = vmdk__cid_random();
	d->parent_cid = VMDK_CID_NONE;
	err = vmdk__descriptor_set(d, "version", "1");
	if (!err) {
		err = vmdk__descriptor_set(d, "CID", "0");
	}
	if (!err) {
		err = vmdk__descriptor_set(d, "parentCID", "ffffffff");
	}
	if (!err) {
		err = vmdk__descriptor_set(d, "createType", create_type);
	}
	if (err) {
		vmdk__descriptor_fini(d);
	}
	return err;
}

int vmdk__descriptor_set_geometry(struct vmdk_descriptor *d,
				  uint64_t size_sectors, const char *adapter)
{
	bool ide = !strcmp(adapter, "ide");
	uint64_t heads = ide ? 16 : 255;
	uint64_t cyl = size_sectors / (heads * 63);
	char num[32];
	int err;

	if (ide && cyl > 16383) {
		cyl = 16383;
	}
	err = vmdk__descriptor_set(d, "ddb.adapterType", adapter);
	snprintf(num, sizeof(num), "%" PRIu64, cyl);
	if (!err) {
		err = vmdk__descriptor_set(d, "ddb.geometry.cylinders", num);
	}
	snprintf(num, sizeof(num), "%" PRIu64, heads);
	if (!err) {
		err = vmdk__descriptor_set(d, "ddb.geometry.heads", num);
	}
	if (!err) {
		err = vmdk__descriptor_set(d, "ddb.geometry.sectors", "63");
	}
	return err;
}

/* ---- parsing ---------------------------------------------------------- */

struct parser {
	struct vmdk_descriptor *d;
	unsigned line;
	char *errbuf;
	size_t errlen;
	bool seen_version, seen_cid, seen_pcid;
};

static int perr(struct parser *p, int err, const char *what, const char *s,
		size_t n)
{
	return vmdk__errf(p->errbuf, p->errlen, err, "line %u: %s: '%.*s'",
			  p->line, what, (int)(n > 60 ? 60 : n), s);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 20) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i])) {
			return false;
		}
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10) {
			return false;
		}
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

static bool parse_hex32(const char *s, size_t n, uint32_t *out)
{
	uint32_t v = 0;

	if (n == 0 || n > 8) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i])) {
			return false;
		}
		v = v * 16 +
		    (uint32_t)(isdigit((unsigned char)s[i])
				       ? s[i] - '0'
				       : (tolower((unsigned char)s[i]) - 'a' +
					  10));
	}
	*out = v;
	return true;
}

/* Next whitespace-separated token of [*pos, end): [*tok, *tok + *n). */
static bool next_token(const char **pos, const char *end, const char **tok,
		       size_t *n)
{
	const char *s = *pos;

	while (s < end && is_blank(*s)) {
		s++;
	}
	if (s == end) {
		return false;
	}
	*tok = s;
	if (*s == '"') {
		const char *q = memchr(s + 1, '"', (size_t)(end - s - 1));

		if (!q) {
			return false;
		}
		*n = (size_t)(q + 1 - s);
		*pos = q + 1;
		return true;
	}
	while (s < end && !is_blank(*s)) {
		s++;
	}
	*n = (size_t)(s - *tok);
	*pos = s;
	return true;
}

static int word_index(const char *const *names, size_t count, const char *s,
		      size_t n)
{
	for (size_t i = 0; i < count; i++) {
		if (names[i] && strlen(names[i]) == n &&
		    !memcmp(names[i], s, n)) {
			return (int)i;
		}
	}
	return -1;
}

static int parse_extent(struct parser *p, const char *s, const char *end)
{
	const char *tok = NULL;
	const char *file = NULL;
	size_t n = 0;
	size_t file_len = 0;
	uint64_t len = 0;
	uint64_t off = 0;
	int access;
	int type;
	char *name;
	int err;

	next_token(&s, end, &tok, &n);
	access = word_index(access_names, ARRAY_SIZE(access_names), tok, n);
	if (!next_token(&s, end, &tok, &n)) {
		return perr(p, -EINVAL, "extent line has no size", "", 0);
	}
	if (!parse_u64(tok, n, &len) || len == 0 ||
	    len > VMDK_MAX_CAPACITY_SECTORS) {
		return perr(p, -EINVAL,
			    "extent size (sectors) is not in 1..2^37", tok, n);
	}
	if (!next_token(&s, end, &tok, &n)) {
		return perr(p, -EINVAL, "extent line has no type", "", 0);
	}
	type = word_index(type_names, ARRAY_SIZE(type_names), tok, n);
	if (type < 0) {
		bool known =
			word_index(unsupported_types,
				   ARRAY_SIZE(unsupported_types), tok, n) >= 0;

		return perr(p, known ? -ENOTSUP : -EINVAL,
			    known ? "extent type not supported"
				  : "unknown extent type",
			    tok, n);
	}
	if (type != VMDK_EXTENT_ZERO) {
		if (!next_token(&s, end, &file, &file_len) || file_len < 3 ||
		    file[0] != '"' || file[file_len - 1] != '"') {
			return perr(p, -EINVAL, "extent file name not quoted",
				    file ? file : "", file ? file_len : 0);
		}
		file++;
		file_len -= 2;
		if (file_len > VMDK_MAX_PATH_BYTES ||
		    memchr(file, '\0', file_len)) {
			return perr(p, -EINVAL, "extent file name too long",
				    file, file_len);
		}
	}
	if (next_token(&s, end, &tok, &n)) {
		if ((type != VMDK_EXTENT_FLAT && type != VMDK_EXTENT_VMFS) ||
		    !parse_u64(tok, n, &off) ||
		    off > VMDK_MAX_CAPACITY_SECTORS) {
			return perr(p, -EINVAL, "bad extent offset", tok, n);
		}
		if (next_token(&s, end, &tok, &n)) {
			return perr(p, -EINVAL, "junk after extent line", tok,
				    n);
		}
	}
	if (p->d->size_sectors + len > VMDK_MAX_CAPACITY_SECTORS) {
		return perr(p, -EINVAL, "extents add up to more than 64 TiB",
			    "", 0);
	}
	name = file ? strndup(file, file_len) : NULL;
	if (file && !name) {
		return -ENOMEM;
	}
	err = vmdk__descriptor_add_extent(p->d, (enum vmdk_access)access, len,
					  (enum vmdk_extent_type)type, name,
					  off);
	free(name);
	if (err == -E2BIG) {
		return perr(p, err, "more than 32768 extents", "", 0);
	}
	return err;
}

/* Interprets the header keys whose values we use. */
static int header_key(struct parser *p, const char *key, const char *v,
		      size_t n)
{
	uint64_t num;

	if (!strcmp(key, "version")) {
		if (!parse_u64(v, n, &num) || num < 1 || num > 3) {
			return perr(p, -EINVAL, "version is not 1, 2 or 3", v,
				    n);
		}
		p->d->version = (uint32_t)num;
		p->seen_version = true;
	} else if (!strcmp(key, "CID")) {
		if (!parse_hex32(v, n, &p->d->cid)) {
			return perr(p, -EINVAL, "CID is not 8 hex digits", v,
				    n);
		}
		p->seen_cid = true;
	} else if (!strcmp(key, "parentCID")) {
		if (!parse_hex32(v, n, &p->d->parent_cid)) {
			return perr(p, -EINVAL, "parentCID is not 8 hex digits",
				    v, n);
		}
		p->seen_pcid = true;
	} else if (!strcmp(key, "createType") ||
		   !strcmp(key, "parentFileNameHint")) {
		if (n == 0 || n > VMDK_MAX_PATH_BYTES) {
			return perr(p, -EINVAL, key, v, n);
		}
	}
	return 0;
}

static bool key_char_ok(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

static int parse_kv(struct parser *p, const char *s, const char *end)
{
	const char *eq = memchr(s, '=', (size_t)(end - s));
	const char *kend = eq;
	const char *v = eq + 1;
	bool quoted = false;
	char key[128];
	size_t klen;
	int err;

	while (kend > s && is_blank(kend[-1])) {
		kend--;
	}
	klen = (size_t)(kend - s);
	if (klen == 0 || klen >= sizeof(key)) {
		return perr(p, -EINVAL, "bad key", s, (size_t)(end - s));
	}
	for (size_t i = 0; i < klen; i++) {
		if (!key_char_ok(s[i])) {
			return perr(p, -EINVAL, "bad key", s, klen);
		}
	}
	memcpy(key, s, klen);
	key[klen] = '\0';
	while (v < end && is_blank(*v)) {
		v++;
	}
	if (v < end && *v == '"') {
		if (end - v < 2 || end[-1] != '"' ||
		    memchr(v + 1, '"', (size_t)(end - v - 2))) {
			return perr(p, -EINVAL, "unbalanced quotes", s,
				    (size_t)(end - s));
		}
		v++;
		end--;
		quoted = true;
	} else if (memchr(v, '"', (size_t)(end - v))) {
		return perr(p, -EINVAL, "unbalanced quotes", s,
			    (size_t)(end - s));
	}
	for (const char *c = v; c < end; c++) {
		if ((unsigned char)*c < 0x20 && *c != '\t') {
			return perr(p, -EINVAL, "control character in value", s,
				    (size_t)(end - s));
		}
	}
	if (is_ddb_key(key)) {
		if (kv_find(p->d->ddb, p->d->n_ddb, key)) {
			return perr(p, -EINVAL, "key defined twice", key, klen);
		}
		err = kv_append(&p->d->ddb, &p->d->n_ddb, key, klen, v,
				(size_t)(end - v), quoted);
	} else {
		if (kv_find(p->d->keys, p->d->n_keys, key)) {
			return perr(p, -EINVAL, "key defined twice", key, klen);
		}
		err = header_key(p, key, v, (size_t)(end - v));
		if (!err) {
			err = kv_append(&p->d->keys, &p->d->n_keys, key, klen,
					v, (size_t)(end - v), quoted);
		}
	}
	if (err == -E2BIG) {
		return perr(p, err, "more than 1024 keys", key, klen);
	}
	return err;
}

static int parse_line(struct parser *p, const char *s, const char *end)
{
	const char *tok;
	size_t n;

	while (s < end && is_blank(*s)) {
		s++;
	}
	while (end > s && (is_blank(end[-1]) || end[-1] == '\r')) {
		end--;
	}
	if (s == end || *s == '#') {
		return 0;
	}
	tok = s;
	n = 0;
	while (tok + n < end && !is_blank(tok[n])) {
		n++;
	}
	if (word_index(access_names, 3, tok, n) >= 0) {
		return parse_extent(p, s, end);
	}
	if (memchr(s, '=', (size_t)(end - s))) {
		return parse_kv(p, s, end);
	}
	return perr(p, -EINVAL, "neither key=value nor extent line", s,
		    (size_t)(end - s));
}

static int check_whole(struct parser *p)
{
	struct vmdk_descriptor *d = p->d;

	if (!p->seen_version) {
		return vmdk__errf(p->errbuf, p->errlen, -EINVAL,
				  "no version line");
	}
	if (!p->seen_cid) {
		return vmdk__errf(p->errbuf, p->errlen, -EINVAL, "no CID line");
	}
	if (!vmdk__descriptor_get(d, "createType")) {
		return vmdk__errf(p->errbuf, p->errlen, -EINVAL,
				  "no createType line");
	}
	if (d->n_extents == 0) {
		return vmdk__errf(p->errbuf, p->errlen, -EINVAL,
				  "no extent lines");
	}
	if (!p->seen_pcid) {
		d->parent_cid = VMDK_CID_NONE;
	}
	if (vmdk__descriptor_get(d, "parentFileNameHint") &&
	    d->parent_cid == VMDK_CID_NONE) {
		return vmdk__errf(p->errbuf, p->errlen, -EINVAL,
				  "parentFileNameHint without a parentCID");
	}
	return 0;
}

int vmdk__descriptor_parse(const char *text, size_t len,
			   struct vmdk_descriptor *d, char *errbuf,
			   size_t errlen)
{
	struct parser p = { .d = d, .errbuf = errbuf, .errlen = errlen };
	const char *end;
	const char *s = text;
	int err = 0;

	memset(d, 0, sizeof(*d));
	len = strnlen(text, len);
	if (len > VMDK_MAX_DESCRIPTOR_BYTES) {
		return vmdk__errf(errbuf, errlen, -EFBIG,
				  "descriptor of %zu bytes exceeds %u", len,
				  VMDK_MAX_DESCRIPTOR_BYTES);
	}
	end = text + len;
	while (s < end && !err) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *eol = nl ? nl : end;

		p.line++;
		err = parse_line(&p, s, eol);
		s = nl ? nl + 1 : end;
	}
	if (!err) {
		err = check_whole(&p);
	}
	if (err) {
		vmdk__descriptor_fini(d);
	}
	return err;
}

/* ---- formatting ------------------------------------------------------- */

struct sbuf {
	char *s;
	size_t len, cap;
	int err;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err) {
		return;
	}
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = -EINVAL;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		char *grown = realloc(b->s, b->cap * 2 + (size_t)n);

		if (!grown) {
			b->err = -ENOMEM;
			return;
		}
		b->s = grown;
		b->cap = b->cap * 2 + (size_t)n;
	}
}

int vmdk__descriptor_format(const struct vmdk_descriptor *d, char **text,
			    size_t *len)
{
	struct sbuf b = { .s = malloc(1024), .cap = 1024 };

	if (!b.s) {
		return -ENOMEM;
	}
	b.s[0] = '\0';
	sb_printf(&b, "# Disk DescriptorFile\n");
	for (size_t i = 0; i < d->n_keys; i++) {
		const struct vmdk_kv *kv = &d->keys[i];

		if (!strcmp(kv->key, "CID")) {
			sb_printf(&b, "CID=%08x\n", d->cid);
		} else if (!strcmp(kv->key, "parentCID")) {
			sb_printf(&b, "parentCID=%08x\n", d->parent_cid);
		} else if (kv->quoted) {
			sb_printf(&b, "%s=\"%s\"\n", kv->key, kv->value);
		} else {
			sb_printf(&b, "%s=%s\n", kv->key, kv->value);
		}
	}
	sb_printf(&b, "\n# Extent description\n");
	for (size_t i = 0; i < d->n_extents; i++) {
		const struct vmdk_desc_extent *e = &d->extents[i];

		sb_printf(&b, "%s %" PRIu64 " %s", access_names[e->access],
			  e->len_sectors, type_names[e->type]);
		if (e->file) {
			sb_printf(&b, " \"%s\"", e->file);
		}
		if (e->type == VMDK_EXTENT_FLAT) {
			sb_printf(&b, " %" PRIu64, e->offset_sectors);
		} else if (e->type == VMDK_EXTENT_VMFS && e->offset_sectors) {
			sb_printf(&b, " %" PRIu64, e->offset_sectors);
		}
		sb_printf(&b, "\n");
	}
	sb_printf(&b, "\n# The Disk Data Base\n#DDB\n\n");
	for (size_t i = 0; i < d->n_ddb; i++) {
		sb_printf(&b, "%s = \"%s\"\n", d->ddb[i].key, d->ddb[i].value);
	}
	if (b.err) {
		free(b.s);
		return b.err;
	}
	*text = b.s;
	*len = b.len;
	return 0;
}
