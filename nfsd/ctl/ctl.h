/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl: dsnfsctl's subcommands.  Each one is a function that parses its own
 * arguments (argv[0] is the subcommand's name) and returns the exit status:
 * 0, 1 (it failed; a message went to stderr) or 2 (bad usage).  Adding one
 * (the admin API's HTTP commands) is a new file and one row in dsnfsctl.c.
 */
#ifndef DSNFS_CTL_H
#define DSNFS_CTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pool_event;

#define CTL_EXIT_OK 0
#define CTL_EXIT_FAIL 1
#define CTL_EXIT_USAGE 2

typedef int ctl_command_fn(int argc, char **argv);

/* bill.c: `dsnfsctl bill --ledger FILE [--prices FILE] --from T --to T`,
 * the explained bill of a period, offline. */
int ctl_bill_main(int argc, char **argv);

/* ledger.c: `dsnfsctl ledger --ledger FILE`, the capacity events. */
int ctl_ledger_main(int argc, char **argv);

/* Opens @path read-only and returns its events (owned, free()) in *events,
 * warning on stderr about a torn last record.  Returns 0 or prints the
 * error and returns -errno. */
int ctl_ledger_read(const char *path, struct pool_event **events, size_t *n);

/* ---- the admin API (http.c, api.c) -------------------------------------- */

/* "127.0.0.1:8049" unless -s or DSNFSCTL_SERVER say otherwise. */
#define CTL_DEFAULT_SERVER "127.0.0.1:8049"
/* Replies larger than this are refused (a /metrics of many flows fits). */
#define CTL_REPLY_MAX_BYTES (64u << 20)

/* Where the admin endpoint is, its token and how to print, from the
 * global options: dsnfsctl [-s [https://]HOST:PORT] [--token-file FILE]
 * [--cacert FILE] [--json] COMMAND ... */
struct ctl_remote {
	const char *server; /* HOST:PORT; "https://" first: TLS */
	bool json;
	const char *token_file; /* --token-file, or NULL */
	const char *cacert; /* --cacert (implies HTTPS), or NULL */
	char token[65]; /* read from the token file before a command */
};

/* A subcommand that talks to the admin endpoint. */
typedef int ctl_remote_fn(const struct ctl_remote *r, int argc, char **argv);

struct ctl_http_reply {
	unsigned status;
	char content_type[128];
	char *body; /* owned, NUL-terminated */
	size_t len;
};

/*
 * One request to r->server ("HOST:PORT", "[V6]:PORT" or "HOST" for port
 * 8049; "https://" first or r->cacert: over TLS) through libcurl (http.c):
 * @method @path with @body (borrowed, may be NULL) as application/json and
 * r->token as the bearer token.  Returns 0 with @out filled (release:
 * ctl_http_reply_fini()), or -errno with the reason in errbuf.
 */
int ctl_http_request(const struct ctl_remote *r, const char *method,
		     const char *path, const char *body,
		     struct ctl_http_reply *out, char *errbuf, size_t errlen);
void ctl_http_reply_fini(struct ctl_http_reply *reply);

/*
 * Calls the admin API: @body (takes; may be NULL) as the request.  On a
 * 2xx reply returns 0 and *doc (owned; NULL for an empty reply; @doc may be
 * NULL); otherwise prints "dsnfsctl: STATUS: the error" to stderr and
 * returns -EIO (or the transport's -errno).
 */
int ctl_api_call(const struct ctl_remote *r, const char *method,
		 const char *path, json_t *body, json_t **doc);

/*
 * An item's verb: "create" (POST /@collection), "set" (PATCH), "show"
 * (GET) or "delete" (DELETE /@collection/@name), with @body (takes; may
 * be NULL).  Returns as ctl_api_call(), or -EOPNOTSUPP for another
 * verb.
 */
int ctl_item_call(const struct ctl_remote *r, const char *collection,
		  const char *verb, const char *name, json_t *body,
		  json_t **doc);

/* Prints @doc (borrowed) as indented JSON on stdout. */
void ctl_json_print(const json_t *doc);

/* ---- tables (table.c) -------------------------------------------------- */

#define CTL_TABLE_MAX_COLS 12

/* Rows of text under a header, printed with aligned columns. */
struct ctl_table {
	size_t ncols;
	const char *header[CTL_TABLE_MAX_COLS];
	char **cells; /* owned; nrows x ncols */
	size_t nrows;
	size_t cap;
	bool failed; /* out of memory: print says so */
};

/* @header: ncols column names, then NULL. */
void ctl_table_init(struct ctl_table *t, const char *const *header);

/* Adds a row of ncols cells, printf-formatted one by one: each argument is
 * a string (borrowed). */
void ctl_table_row(struct ctl_table *t, ...);

/* Prints and frees.  Returns 0, or -ENOMEM (reported on stderr). */
int ctl_table_print(struct ctl_table *t);

/* "4 TiB", "1.5 GiB", "512 B" into @buf. */
const char *ctl_fmt_bytes(uint64_t bytes, char *buf, size_t len);

/* "256 MiB/s" (whole MiB/s), "1.5 MiB/s", or "-" for 0 (none). */
const char *ctl_fmt_rate(uint64_t bytes_per_s, char *buf, size_t len);

/* An integer or real member of @obj as text, "-" when null or missing;
 * with @bytes, through ctl_fmt_bytes(). */
const char *ctl_fmt_member(const json_t *obj, const char *key, bool bytes,
			   char *buf, size_t len);

/* A percentage member of @obj with one decimal ("0.0", "87.9"), "-" when
 * it is not a number: a share, unlike a setting, reads rounded. */
const char *ctl_fmt_percent(const json_t *obj, const char *key, char *buf,
			    size_t len);

/* Parses a whole non-negative decimal number up to @max.  Returns 0 or
 * -EINVAL. */
int ctl_parse_uint(const char *text, uint64_t max, uint64_t *out);

/* ---- lists and items of the admin API (items.c) ------------------------ */

/* Adds the table row of one item of a list (@item borrowed). */
typedef void ctl_row_fn(struct ctl_table *t, const json_t *item);

/* Prints @doc (borrowed) as JSON (--json) or as a table under @header:
 * one @row per element of its array @list_key, or of @doc itself when
 * @list_key is NULL.  Returns CTL_EXIT_OK or CTL_EXIT_FAIL. */
int ctl_items_print(const struct ctl_remote *r, const json_t *doc,
		    const char *list_key, const char *const *header,
		    ctl_row_fn *row);

/* `dsnfsctl KEY` (no arguments): GETs @path and prints its list @key as
 * ctl_items_print().  Returns the exit status. */
int ctl_list_main(const struct ctl_remote *r, int argc, const char *path,
		  const char *key, const char *const *header, ctl_row_fn *row);

/* After getopt: the VERB NAME operands left in @argv, NAME a valid pool
 * or volume name (borrowed from @argv).  Returns 0 or -EINVAL. */
int ctl_item_operands(int argc, char **argv, const char **verb,
		      const char **name);

/* How an item option's value is read. */
enum ctl_option_kind {
	CTL_OPTION_STRING, /* as given */
	CTL_OPTION_UINT32, /* a whole number up to 2^32 - 1 */
	CTL_OPTION_SIZE, /* bytes, or a number with KiB/MiB/GiB/TiB */
};

/* One `--NAME VALUE` of `create` and `set`: the API field KEY. */
struct ctl_item_option {
	const char *name; /* "level" for --level */
	enum ctl_option_kind kind;
	const char *key; /* the field in the request body */
	bool required; /* `create` needs it */
};

#define CTL_ITEM_MAX_OPTIONS 8

/* What `dsnfsctl pool|volume VERB NAME` differs in. */
struct ctl_item_cmd {
	const char *kind; /* "pool": the item in messages */
	const char *collection; /* "pools": its path in the admin API */
	const char *gone; /* printed after "KIND NAME " when deleted */
	const char *const *header;
	ctl_row_fn *row;
	int (*usage)(void); /* prints the usage, returns CTL_EXIT_USAGE */
	const struct ctl_item_option *options; /* NULL-named end */
};

/*
 * `dsnfsctl KIND VERB NAME [--OPTION VALUE]...` for @cmd: parses
 * @cmd->options into the request's fields and runs ctl_item_main().
 */
int ctl_item_run(const struct ctl_remote *r, const struct ctl_item_cmd *cmd,
		 int argc, char **argv);

/*
 * Runs @verb on the item @name: "create" (needs @complete: its required
 * options were given), "set" (needs a field), "show" or "delete" (take
 * none).  @fields (takes; NULL when out of memory) holds the options
 * given, as the API names them; a create sends them after "name".
 * Prints the item, or that it is gone, and returns the exit status.
 */
int ctl_item_main(const struct ctl_remote *r, const struct ctl_item_cmd *cmd,
		  const char *verb, const char *name, json_t *fields,
		  bool complete);

/* ---- remote commands (pools.c volumes.c traffic.c) --------------------- */

/* `pools`, `pool create|set|show|delete NAME ...` */
int ctl_pools_main(const struct ctl_remote *r, int argc, char **argv);
int ctl_pool_main(const struct ctl_remote *r, int argc, char **argv);
/* `volumes`, `volume create|set|show|delete NAME ...` */
int ctl_volumes_main(const struct ctl_remote *r, int argc, char **argv);
int ctl_volume_main(const struct ctl_remote *r, int argc, char **argv);
/* `flows`, `hosts`, `alarms`, `caps [set ...]`, `metrics` */
int ctl_flows_main(const struct ctl_remote *r, int argc, char **argv);
int ctl_hosts_main(const struct ctl_remote *r, int argc, char **argv);
int ctl_alarms_main(const struct ctl_remote *r, int argc, char **argv);
int ctl_caps_main(const struct ctl_remote *r, int argc, char **argv);
int ctl_metrics_main(const struct ctl_remote *r, int argc, char **argv);
/* `changes [revert]`: the admin API's changes over the config (changes.c) */
int ctl_changes_main(const struct ctl_remote *r, int argc, char **argv);

/* ---- storage-side operations (operations.c vmdk.c) --------------------- */

/* `operations [ID]`: the admin API's long operations. */
int ctl_operations_main(const struct ctl_remote *r, int argc, char **argv);

/*
 * Waits for operation @op (takes: the JSON a POST answered) to end,
 * polling GET /operations/ID, with a progress bar on stderr when it is a
 * terminal (and not --json).  Returns 0 when it is done, or -EIO after
 * printing why it failed (or the transport's -errno); *out is its last
 * JSON (owned; may be NULL after a transport error).
 */
int ctl_op_wait(const struct ctl_remote *r, json_t *op, json_t **out);

/* `vmdk clone DATASTORE SRC DST --full|--linked|--native`,
 * `vmdk reserve DATASTORE PATH --zeroedthick|--eagerzeroedthick`,
 * `vmdk stats DATASTORE PATH`. */
int ctl_vmdk_main(const struct ctl_remote *r, int argc, char **argv);

/* `snapshot create|delete|restore DATASTORE NAME`, `snapshot list
 * DATASTORE` (snapshots.c). */
int ctl_snapshot_main(const struct ctl_remote *r, int argc, char **argv);
/* `snapshot policy show|set|clear DATASTORE ...` (snap_policy.c); @argv
 * starts at "snapshot". */
int ctl_snapshot_policy_main(const struct ctl_remote *r, int argc, char **argv);
/* `replication show|transfer|break|resync DATASTORE [--relation NAME]`
 * (replication.c). */
int ctl_replication_main(const struct ctl_remote *r, int argc, char **argv);

/* `replication list`, `replication create NAME --role ... --key-file F
 * ...`, `replication delete NAME` (repl_manage.c): argv[1] is the verb. */
int ctl_replication_manage(const struct ctl_remote *r, int argc, char **argv);

#endif
