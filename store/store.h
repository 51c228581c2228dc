/* store.h - the persistent results store: one LMDB environment, one record
 * per (device, problem, kernel build, config, measurement mode).
 *
 * Keys are canonical text, ordered so that one device+problem is one range
 * scan:   DEVICE|PROBLEM|BUILD|CONFIG|MODE
 * e.g.    "NVIDIA H100 80GB HBM3|b4.h8.s512.d64.nc|3f9a0c1d2e4b5a69|d64.m128.n64.w4.s2.z1|hot"
 * Values are JSON objects (store_record_to_json), readable with mdb_dump.
 *
 * Every write is its own transaction, committed before the call returns:
 * a result is on disk as soon as store_put returns 0. A full map is grown
 * (doubled) and the write retried; a map grown by another process is
 * adopted. The map starts at 64 MiB; the environment variable
 * FASWEEP_STORE_MAPSIZE (bytes, >= 32768) sets the start size of a store
 * being created (for tests of the growth path).
 * A meta database holds the schema version; opening a store written by a
 * newer schema fails with STORE_ESCHEMA.
 *
 * Concurrency: LMDB's lock file lets several processes write one store at
 * once (writes are serialized, nothing is lost). The store must be on a
 * local file system: LMDB's locks and shared memory map do not work over
 * NFS. No call keeps a transaction open after it returns (store_scan reads
 * in batches and calls fn with none open), so a process may fork() while a
 * store is open and fn may write to the store it scans; but a forked child
 * must not use its parent's handle: it opens its own. One process must not
 * open one store twice (an LMDB rule; store_merge refuses a store into
 * itself). A handle is not thread-safe: one call at a time (map growth
 * remaps the file under any open transaction). It is opened MDB_NOTLS, so
 * a reader slot belongs to a transaction, not a thread: a handle may move
 * between threads, and threads leave no stale slots behind.
 *
 * Return codes (every int-returning function): STORE_OK (0) or one of the
 * negative STORE_E* values; store_strerror() names it. STORE_NOTFOUND (1)
 * only where a function says so.
 */
#ifndef STORE_H
#define STORE_H

#include <stddef.h>

#define STORE_SCHEMA_VERSION 1

/* Room for any canonical key (the key fields' sizes plus separators). */
#define STORE_KEY_LEN 256

#define STORE_OK 0
#define STORE_NOTFOUND 1
#define STORE_EIO (-1)     /* LMDB or the file system failed (see err text) */
#define STORE_ESCHEMA (-2) /* store written by a newer fasweep */
#define STORE_EINVAL (-3)  /* a record or argument is malformed */
#define STORE_ENOMEM (-4)

typedef enum store_status {
    STORE_ST_OK,      /* checked correct and timed */
    STORE_ST_WRONG,   /* ran, but failed the correctness gate */
    STORE_ST_CRASHED, /* faulted or failed to launch */
    STORE_ST_TIMEOUT  /* ran past the space's timeout_s */
} store_status;

typedef enum store_kind {
    STORE_KIND_KERNEL,  /* a fasweep kernel instance */
    STORE_KIND_BASELINE /* another implementation timed the same way */
} store_kind;

typedef struct store_timing {
    double median_us, min_us, mean_us, stdev_us;
    double cv;    /* stdev / mean of the samples */
    double noise; /* relative standard error of the median estimate */
    int samples;
} store_timing;

typedef struct store_record {
    /* ---- key ---- */
    char device[64];  /* GPU model name, as the driver reports it */
    char problem[48]; /* space_problem_format text */
    char build[40];   /* fa_build_id() of the binary, or "baseline" */
    char config[64];  /* fa_config_format text, or a baseline's name */
    char mode[8];     /* "hot" or "cold" */
    /* ---- result ---- */
    store_kind kind;
    store_status status;
    char error[256]; /* what went wrong, for wrong/crashed/timeout */
    store_timing time;
    double tflops, gbps;
    double rel_l2, max_abs; /* errors vs the fp32 reference */
    /* resource use (kernel records) */
    int regs, smem_static, local_bytes, max_blocks_per_sm;
    long smem_dynamic;
    /* clock64 instrumentation: per-CTA cycles and SM balance */
    double cta_cycles_mean, cta_cycles_max;
    double waves;        /* CTAs / (SMs * max_blocks_per_sm) */
    double sm_imbalance; /* max over SMs of busy cycles / mean over SMs */
    /* environment */
    char gpu_uuid[48];
    int cc; /* compute capability x10 */
    int sm_count;
    char driver[24], runtime[24];
    int sm_clock_mhz, mem_clock_mhz; /* -1 when unknown */
    unsigned long long throttle_reasons;
    int throttled; /* 1 yes, 0 no, -1 unknown */
    char host[64];
    /* provenance */
    char space_name[64];
    char space_hash[17];
    char version[16]; /* fasweep version */
    double timestamp; /* Unix seconds */
} store_record;

typedef struct store store; /* an open environment */

/* Opens (creating directory and files on first use) the store at path.
 * read_only: 1 opens without creating or writing. Returns STORE_OK and
 * *out, or an error with a message in err naming the path and what to do. */
int store_open(const char *path, int read_only, store **out, char *err, size_t errlen);
void store_close(store *s);

/* Canonical key of r. Returns STORE_OK, or STORE_EINVAL when a key field is
 * empty, holds '|' or a control character, or the key does not fit in n. */
int store_key(const store_record *r, char *buf, size_t n);

/* Writes r (replacing a record of the same key) in its own transaction. */
int store_put(store *s, const store_record *r);

/* Writes all n records in one transaction: all or none. */
int store_put_many(store *s, const store_record *r, size_t n);

/* Reads the record at key into *out: STORE_OK, STORE_NOTFOUND, or error. */
int store_get(store *s, const char *key, store_record *out);

/* Calls fn for every record whose key starts with prefix ("" for all), in
 * key order; stops early when fn returns non-zero. Returns STORE_OK or an
 * error. A record that fails to decode is an error (STORE_EINVAL) naming
 * its key in err. */
typedef int (*store_visit_fn)(const store_record *r, void *ctx);
int store_scan(store *s, const char *prefix, store_visit_fn fn, void *ctx);

/* Records in the store; -1 on error (store_last_error says why). */
long store_count(store *s);

/* Text of the last error on s (path, LMDB message, what to do). */
const char *store_last_error(const store *s);
/* Sets that text (printf format) for a failure found outside store.c, e.g.
 * a write error in store_export. Returns code. */
int store_set_error(store *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *store_strerror(int code);

/* Status and kind names: "ok" "wrong" "crashed" "timeout"; "kernel"
 * "baseline". The _parse functions return 0 or -1 for unknown text. */
const char *store_status_name(store_status st);
int store_status_parse(const char *s, store_status *out);
const char *store_kind_name(store_kind k);
int store_kind_parse(const char *s, store_kind *out);

/* JSON (cJSON) form of a record, the store's value format and the
 * import/export line format (README.md, "Results store", lists every field).
 * to_json returns a new object (NULL when out of memory). A non-finite
 * double (e.g. rel_l2 of a NaN output) is written as null and read back as
 * NaN. Non-integer numbers are cJSON raw items holding the shortest text
 * that reads back to the same double (cJSON's printer may drop the last
 * bit); print the object, or parse the text back, to read them.
 * throttle_reasons is a hex string ("0x..."), as a u64 does not fit a
 * double. from_json is strict: unknown or repeated keys, missing key fields
 * (key.*, kind, status), wrong types, non-integers where integers belong,
 * text too long for its field, unknown status or kind names are STORE_EINVAL
 * with the field named in err ("time.samples: ..."); *out is untouched
 * then. Missing optional fields are 0 (sm_clock_mhz, mem_clock_mhz,
 * throttled: -1, unknown). */
struct cJSON;
struct cJSON *store_record_to_json(const store_record *r);
int store_record_from_json(const struct cJSON *j, store_record *out, char *err, size_t errlen);

/* Merge rule: 1 when a should replace b for the same key, else 0.
 * A status "ok" beats any other status; among two "ok" records the one with
 * the lower noise wins, then the one with more samples, then the newer. */
int store_record_better(const store_record *a, const store_record *b);

#endif /* STORE_H */
