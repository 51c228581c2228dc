/* record.h - one result: the record type, its key, its JSON form, and the
 * two orders on records (which of two is better to keep, which ranks
 * first). No LMDB here: the store (store.h) keeps records, the engine
 * fills them, the ranking and the tools read them.
 *
 * Key: canonical text, ordered so that one device+problem is one range
 * scan of the store:   DEVICE|PROBLEM|BUILD|CONFIG|MODE
 * e.g. "NVIDIA H100 80GB HBM3|b4.h8.s512.d64.nc|3f9a0c1d2e4b5a69|d64.m128.n64.w4.s2.z1|hot"
 * for the default kernel family, mma (every record written before families
 * existed, and every record of mma since: byte-identical), and
 *                      DEVICE|PROBLEM|BUILD|FAMILY|CONFIG|MODE
 * for a record of another family (kernels/family.h): six fields, so the
 * two forms never collide. The store knows no family table: a family is a
 * name here (lower-case letters, digits, '_'; 1 to 15 bytes); only the
 * validation of a kernel record's config asks the family table
 * (kernels/family.h) about it.
 *
 * JSON: the store's value format and the import/export line format
 * (docs/store.md lists every field). Functions here return 0 on success
 * and -1 for an invalid record or argument, with the reason in err.
 */
#ifndef RECORD_H
#define RECORD_H

#include <stddef.h>

#include "mode.h"

/* The format version every record carries ("schema"). */
#define RECORD_SCHEMA_VERSION 1

/* The default kernel family: a record whose family is this name or empty
 * has the five-field key and no key.family in its JSON. */
#define RECORD_FAMILY_DEFAULT "mma"

/* Build ids of kernel variants (`fasweep eval --kernel`): this prefix and
 * the 16 hex digits of the source's FNV-1a hash. A variant is another
 * kernel, not a point of a space's grid. */
#define RECORD_VARIANT_PREFIX "src-"

/* Room for any canonical key (the key fields' sizes plus separators). */
#define RECORD_KEY_LEN 256

typedef enum record_status {
    RECORD_ST_OK,            /* checked correct and timed */
    RECORD_ST_WRONG,         /* ran, but failed the correctness gate */
    RECORD_ST_CRASHED,       /* faulted or failed to launch */
    RECORD_ST_TIMEOUT,       /* ran past the space's timeout_s */
    RECORD_ST_COMPILE_ERROR, /* a kernel variant (eval --kernel) that did not compile; its
                                error holds the compiler's first lines */
    RECORD_ST_IMPLAUSIBLE    /* checked, but timed faster than the GPU can do the work (its
                                median under the physical floor: sweep/stats.h); the error says
                                both numbers */
} record_status;

typedef enum record_kind {
    RECORD_KIND_KERNEL,  /* a fasweep kernel instance */
    RECORD_KIND_BASELINE /* another implementation timed the same way */
} record_kind;

/* Rounds a record is measured in (store/rounds.h): the median of each. */
#define RECORD_MAX_ROUNDS 8

/* The least time a record may hold, in us (one picosecond; record.c's rules): an interval's
 * lower end too (rounds_interval_us). */
#define RECORD_MIN_US 1e-6
typedef struct record_rounds {
    int n;
    double us[RECORD_MAX_ROUNDS];
} record_rounds;

typedef struct record_timing {
    double median_us, min_us, mean_us, stdev_us;
    double cv;    /* stdev / mean of the samples */
    double noise; /* relative standard error of the median within one burst: NOT the
                     uncertainty of the result (that is ci_lo_us..ci_hi_us) */
    int samples;
    int launches; /* launches per sample: 1 (hot, cold), more in batch mode; 0 unknown */
    /* The 95 % interval of median_us that an independent run lands in
     * (docs/measurement.md, "Intervals"); NaN both: no interval (a record
     * from before intervals, or too few rounds to say). */
    double ci_lo_us, ci_hi_us;
    record_rounds round; /* the median of each round, in the order measured */
} record_timing;

/* The SM clock while the samples were taken, from the clock probes around
 * every timed block (docs/measurement.md, "Clocks"). */
typedef struct record_clock {
    int min_mhz, median_mhz, max_mhz; /* over the kept blocks; -1 unknown */
    int ref_mhz;                      /* the calibrated clock under load; -1 unknown */
    int blocks;                       /* timed blocks kept */
    int discarded;                    /* blocks discarded for a clock under the threshold */
    int below;                        /* 1: some kept block ran under the threshold (it could not be
                                         measured otherwise); 0 none; -1 unknown */
} record_clock;

typedef struct record {
    /* ---- key ---- */
    char device[64];  /* GPU model name, as the driver reports it */
    char problem[48]; /* space_problem_format text */
    char build[40];   /* fa_build_id() of the binary, or "baseline" */
    char family[16];  /* kernel family: RECORD_FAMILY_DEFAULT ("mma") or "" for the default
                         (the two are one key), else another family's name */
    char config[64];  /* fa_config_format text (in the family's format), or a baseline's name */
    char mode[MODE_NAME_MAX]; /* a timing mode of the table in mode.h (hot, cold, batch) */
    /* ---- result ---- */
    record_kind kind;
    record_status status;
    char error[256]; /* what went wrong, for wrong/crashed/timeout */
    record_timing time;
    double tflops, gbps;
    double rel_l2, max_abs; /* errors vs the fp32 reference */
    /* resource use (kernel records) */
    int regs, smem_static, local_bytes, max_blocks_per_sm;
    long smem_dynamic;
    /* clock64 instrumentation: per-CTA cycles and SM balance */
    double cta_cycles_mean, cta_cycles_max;
    double waves;        /* CTAs / (SMs * max_blocks_per_sm) */
    double sm_imbalance; /* max over SMs of busy cycles / mean over SMs */
    record_clock clock;
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
    char version[16];      /* fasweep version */
    char kernel_path[256]; /* a kernel variant's source file (eval --kernel); "" otherwise */
    char kernel_hash[17];  /* FNV-1a 64 of that source, 16 hex digits; "" otherwise */
    double timestamp;      /* Unix seconds */
} record;

/* The timing modes fasweep measures are the table of mode.h: a record's
 * mode is one of them. These are that table's lookups under the record's
 * prefix (kept for their callers): known = in the table; index = its
 * place in the table (mode_id), -1 when unknown. RECORD_MODES_TEXT is
 * mode_names_text() ("hot, cold, batch"). */
#define RECORD_MODES_TEXT (mode_names_text())
int record_mode_known(const char *mode);
int record_mode_index(const char *mode);

/* Status and kind names: "ok" "wrong" "crashed" "timeout" "compile_error" "implausible";
 * "kernel"
 * "baseline". The _parse functions return 0 or -1 for unknown text. */
const char *record_status_name(record_status st);
int record_status_parse(const char *s, record_status *out);
const char *record_kind_name(record_kind k);
int record_kind_parse(const char *s, record_kind *out);

/* Canonical key of r into buf (n bytes). Returns 0, or -1 when a key field
 * is empty, holds '|' or a control character, the family is not a family
 * name, or the key does not fit. */
int record_key(const record *r, char *buf, size_t n);

/* r's kernel family: its family field, RECORD_FAMILY_DEFAULT when empty. */
const char *record_family(const record *r);

/* Whether r may be written, by the same rules from_json reads with: a valid
 * key (a known mode), a known status and kind, every text field
 * NUL-terminated, names valid UTF-8 without control characters (C0, DEL,
 * C1), free text (error) valid UTF-8; a kernel record's config a point of
 * its family by the planner's rules (kernels/family.h: the family's text,
 * axis values and static rules; a family this build does not know is not
 * checked, a baseline's config is a free name); time.cv and time.noise NaN
 * or finite >= 0; an ok record with a median of at least 1e-6 us, its
 * other times from 0 to 1e9 us, min_us (when > 0) no slower than the
 * median and the mean, rounds from 1e-6 to 1e9 us and an interval around
 * the median from at least 1e-6 us up to at most 1e6 times it (or none), so
 * any ratio of two records' times is finite; a timestamp from 0 to the end
 * of year 9999; a kernel_hash of 16 lower-case hex digits or none; and a
 * variant (RECORD_VARIANT_PREFIX build) whose build names its kernel_hash
 * and which has a kernel_path. 0, or -1 with the reason in why ("key.device
 * is empty"). */
int record_check(const record *r, char *why, size_t n);

/* The JSON form. to_json returns a new cJSON object (NULL when out of
 * memory). A non-finite double (e.g. rel_l2 of a NaN output) is written as
 * null and read back as NaN. Non-integer numbers are cJSON raw items
 * holding the shortest text that reads back to the same double (cJSON's
 * printer may drop the last bit); print the object, or parse the text
 * back, to read them. throttle_reasons is a hex string ("0x..."), as a u64
 * does not fit a double. from_json is strict: unknown or repeated keys,
 * missing key fields (key.*, kind, status), wrong types, non-integers where
 * integers belong, text too long for its field, unknown status or kind
 * names, and everything record_check refuses, are -1 with the field named
 * in err ("time.samples: ..."); *out is untouched then. key.family is
 * optional: written only for a family other than the default, read as
 * RECORD_FAMILY_DEFAULT when missing (so records and stores written before
 * families read unchanged). Missing optional fields are 0, except time.noise (NaN: no estimate) and
 * sm_clock_mhz, mem_clock_mhz, throttled and the clock.* MHz and below_threshold (-1: unknown). */
struct cJSON;
struct cJSON *record_to_json(const record *r);
int record_from_json(const struct cJSON *j, record *out, char *err, size_t errlen);

/* The merge rule: 1 when a should replace b for the same key, else 0, as
 * RECORD_MERGE_RULE says (the words `merge --help` prints). */
#define RECORD_MERGE_RULE                                                                          \
    "\"ok\" beats any failure; of two \"ok\" records the one with a 95 % interval\n"               \
    "beats one without, then the narrower interval (relative to its median), then the\n"           \
    "lower noise (a missing estimate loses), then more samples; else the newer.\n"
int record_better(const record *a, const record *b);

/* The ranking order, used by `fasweep topk` (seeds/rank.c) and by the
 * refine report (sweep/refine.c): negative when (median_a, noise_a,
 * config_a) ranks before b, positive when after, 0 when equal. Faster
 * median first, then lower noise, then config text (byte order). A NaN
 * median or noise (no number) sorts after every number, so the order is a
 * total one on any input: the comparison of a and b is always minus that
 * of b and a. */
int record_rank_order(double median_a, double noise_a, const char *config_a, double median_b,
                      double noise_b, const char *config_b);

/* Whether r is a kernel variant's record (build RECORD_VARIANT_PREFIX...). */
int record_is_variant(const record *r);

/* Whether r has an interval (both bounds numbers). */
int record_has_ci(const record *r);

/* The tie rule, used by everything that compares two timings (the refine
 * report, topk and the seeds, `fasweep report`, scripts/evolve*.py reads
 * the same rule from docs/measurement.md): b cannot be told apart from a
 * (RECORD_TIE_YES) when |median_a - median_b| is at most the combined
 * half-width sqrt(ha^2 + hb^2), each half-width being the side of its
 * interval that faces the other median; RECORD_TIE_NO when it is more.
 * When either record has no interval the rule cannot tell:
 * RECORD_TIE_UNKNOWN. Every output says so (yes / no / unknown in tables,
 * null in JSON); a caller that must decide treats unknown conservatively
 * (the refine report: never a certain order). */
typedef enum record_tie_t {
    RECORD_TIE_UNKNOWN = -1,
    RECORD_TIE_NO = 0,
    RECORD_TIE_YES = 1,
} record_tie_t;
record_tie_t record_tie(const record *a, const record *b);
/* "yes", "no" or "unknown". */
const char *record_tie_name(record_tie_t t);

/* The relative half-width of r's interval on the side facing other_us
 * (NaN without an interval), e.g. 0.008 for +-0.8 %. */
double record_ci_half(const record *r, double other_us);

#endif /* RECORD_H */
