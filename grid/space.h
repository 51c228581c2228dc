/* space.h - a sweep space: the target GPU's limits, the problems to run,
 * the kernel axes to enumerate, and how to measure and check each point.
 *
 * A space is a JSON file (format: docs/spaces.md). Parsing is
 * strict: unknown keys, wrong types, empty or duplicate axis values and
 * out-of-range numbers are errors that name the file, the JSON path
 * (e.g. "axes.BLOCK_M[2]") and what was expected. A JSON syntax error names
 * line and column. A space that fails to parse is never partly filled in.
 */
#ifndef SPACE_H
#define SPACE_H

#include <stddef.h>

#include "../kernels/fa_config.h"
#include "../store/mode.h"

#define SPACE_MAX_PROBLEMS 16
#define SPACE_MAX_AXIS 16
#define SPACE_MAX_MODES MODE_COUNT /* the table's modes, each at most once */
#define SPACE_ERR_LEN 512
#define SPACE_MAX_SAMPLES 1000000 /* measure.min_samples and max_samples at most */

/* The axes of a grid: axis a (0 to SPACE_AXIS_COUNT - 1) is its family's
 * a-th tunable axis, fa_config.axis[a] of its points; the family's table
 * names it (fa_family.axes[1 + a]: space_axis_name). No index has a
 * meaning of its own: "BLOCK_M" or "CONSUMER_WG" is the family's word,
 * and only the family's code reads one by name (kernels/mma/mma.h: MMA_*,
 * kernels/wgmma/traits.h: WG_*). */
#define SPACE_AXIS_COUNT FA_CONFIG_AXES

/* One attention problem: Q and O [batch, heads, seq_len, head_dim], K and
 * V [batch, kv_heads, seq_len, head_dim], of element type dtype. Query head
 * h reads K/V head h / (heads / kv_heads): kv_heads == heads is multi-head
 * attention, 1 < kv_heads < heads grouped-query (GQA), 1 multi-query
 * (MQA). A space or text that does not say is fp16 with kv_heads = heads;
 * every problem made here has kv_heads set (1 <= kv_heads <= heads, heads
 * divisible by it). */
typedef struct space_problem {
    int batch, heads, seq_len, head_dim;
    int causal;
    int kv_heads; /* K/V heads */
    int dtype;    /* FA_DTYPE_* (kernels/fa_config.h) */
} space_problem;

/* Measurement settings; every field has a default (docs/spaces.md). */
typedef struct space_measure {
    int warmup_runs;    /* launches before a config's first timed mode (default 3) */
    int min_samples;    /* timed samples at least (default 10) */
    int max_samples;    /* timed samples at most (default 200) */
    double noise;       /* stop once stdev/mean of the median's estimate
                           is under this (default 0.01) */
    double max_seconds; /* timing budget per config and mode (default 0.5) */
    double timeout_s;   /* a config running longer is a hang (default 10) */
    int n_modes;        /* modes to measure, in order */
    char modes[SPACE_MAX_MODES][MODE_NAME_MAX]; /* names of store/mode.h's table (default: its
                                                   first, hot) */
    double batch_us;        /* batch mode: launches per sample fill this much time (default 200) */
    double clock_tolerance; /* a block whose SM clock is under the calibrated clock by more
                               than this fraction is discarded (default 0.03) */
    double clock_pause_ms;  /* the pause before a discarded block is taken again (default 100) */
    int max_discards;       /* discarded blocks per record at most; 0: never discard (default 10) */
    double calibrate_ms;    /* length of the clock calibration load (default 50) */
    int rounds;             /* rounds each config is measured in, spread over the run; the
                               interval comes from them (store/rounds.h; default 3, 1 to
                               RECORD_MAX_ROUNDS) */
    double ci_floor;        /* relative half-width added in quadrature to every interval: what
                               two processes differ by with no drift (default 0.007) */
} space_measure;

/* Correctness tolerances against the fp32 reference. */
typedef struct space_tolerance {
    double rel_l2;  /* ||out-ref|| / ||ref|| at most (default 5e-3) */
    double max_abs; /* max |out-ref| at most (default 3e-2) */
} space_tolerance;

/* Most families a space sweeps besides its own ("families", docs/spaces.md). */
#define SPACE_MAX_EXTRA 4

/* One family's grid: its family (an index, kernels/family.h) and the values
 * of its axes (named by the family's fa_family.axes: space_axis_name). */
typedef struct space_grid {
    int family;
    int axis_len[SPACE_AXIS_COUNT];
    int axis[SPACE_AXIS_COUNT][SPACE_MAX_AXIS];
} space_grid;

typedef struct space {
    char name[64];
    char path[256];  /* file it came from ("<string>" for space_parse) */
    char hash[17];   /* FNV-1a 64 of the file bytes, hex */
    int family;      /* kernel family, an index into kernels/family.h's table: the file's
                        "family", FA_FAMILY_DEFAULT (mma) when it names none */
    char gpu[64];    /* target GPU, informative ("NVIDIA L4") */
    int arch;        /* compute capability x10: 89, 90 */
    long smem_limit; /* dynamic smem bytes a block may use */
    int n_problems;
    space_problem problems[SPACE_MAX_PROBLEMS];
    int axis_len[SPACE_AXIS_COUNT];
    int axis[SPACE_AXIS_COUNT][SPACE_MAX_AXIS];
    /* The grids of the other families the space sweeps (the file's optional
     * "families" object, in file order): none of them is `family`, none
     * twice. The planner enumerates the space's own grid first, then these. */
    int n_extra;
    space_grid extra[SPACE_MAX_EXTRA];
    space_measure measure;
    space_tolerance tolerance;
} space;

/* The space's own grid (family, axis_len, axis) copied into *g, so a caller
 * can walk it and s->extra[] alike. */
void space_grid_main(const space *s, space_grid *g);

/* Parses `len` bytes of JSON text. `name` is used in error messages (the
 * file name). Returns 0 and fills *out, or -1 and writes a one-line message
 * "NAME: PATH: what was expected" into err (errlen bytes, NUL-terminated);
 * *out is then untouched. */
int space_parse(const char *text, size_t len, const char *name, space *out, char *err,
                size_t errlen);

/* Reads and parses a space file. Returns 0, or -1 with err as above (a file
 * that cannot be read says so, with strerror). */
int space_load(const char *path, space *out, char *err, size_t errlen);

/* The measurement settings a space gets when it sets none (docs/spaces.md):
 * what `fasweep eval` measures with unless told otherwise. */
void space_measure_defaults(space_measure *m);
#define SPACE_DEFAULT_REL_L2 5e-3
#define SPACE_DEFAULT_MAX_ABS 3e-2

/* Axis a's name as written in the file for a grid of family `family` (an
 * index, kernels/family.h): "BLOCK_M", "NUM_WARPS" for mma, "CONSUMER_WG"
 * for wgmma (fa_family.axes[1 + a], which also holds the values each
 * allows); "?" for an axis or family out of range. */
const char *space_axis_name(int family, int a);

/* Canonical problem text used in store keys: "b4.h8.s512.d64.nc" (".c" when
 * causal) for fp16 multi-head attention, the text every problem had before
 * kv_heads and dtype, so older records keep their key. A problem with
 * kv_heads != heads says so after the heads ("b1.h32.kv8.s4096.d128.c"), one
 * of another dtype ends in its name ("b1.h32.kv8.s4096.d128.c.bf16").
 * Returns what snprintf returns; SPACE_PROBLEM_TEXT_MAX bytes hold any. */
#define SPACE_PROBLEM_TEXT_MAX 96
int space_problem_format(const space_problem *p, char *buf, size_t n);
/* Parses that text, strictly (every accepted text is the one
 * space_problem_format writes: no leading zeros, ".kvN" only when N is not
 * the heads and divides them, no ".fp16"), or the short forms "4,8,512,64"
 * (non-causal fp16 MHA), "1,32:8,4096,128" (K/V heads after the colon) and
 * either with ",bf16" or ",fp16" at the end. 0 / -1 (*p untouched). */
int space_problem_parse(const char *s, space_problem *p);

/* A dtype's name in a space file and a problem text: "fp16", "bf16"; NULL
 * for no FA_DTYPE_*. space_dtype_of is the reverse (-1 for no name). */
const char *space_dtype_name(int dtype);
int space_dtype_of(const char *name);

/* Whether the kernels can launch p at all, whatever the config: the
 * launches index batch x heads as the CUDA grid's y dimension (at most
 * SPACE_MAX_BATCH_HEADS) and batch x heads x seq_len rows in 32-bit ints
 * (at most SPACE_MAX_ROWS); kv_heads is 1 to heads and divides them; dtype
 * is an FA_DTYPE_*. Returns 0, or -1 with one line in why ("batch x heads
 * is 65536, ..."). The space parser and `eval --problem` check it before
 * any work; a stored record's problem is only text and is not. */
#define SPACE_MAX_BATCH_HEADS 65535L
#define SPACE_MAX_ROWS (1L << 30)
int space_problem_check(const space_problem *p, char *why, size_t n);

/* FLOPs and minimum DRAM bytes of one forward pass (for TFLOPS, GB/s):
 * 4*B*H*S*S*D (halved when causal; kv_heads does not change the math) and
 * Q, O of B*H*S*D plus K, V of B*KV*S*D elements of 2 bytes (fp16, bf16).
 * space_problem_input_bytes: Q, K and V alone, what must be read at least
 * once. */
double space_problem_flops(const space_problem *p);
double space_problem_bytes(const space_problem *p);
double space_problem_input_bytes(const space_problem *p);

#endif /* SPACE_H */
