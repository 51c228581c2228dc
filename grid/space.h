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

#include "../store/mode.h"

#define SPACE_MAX_PROBLEMS 16
#define SPACE_MAX_AXIS 16
#define SPACE_MAX_MODES MODE_COUNT /* the table's modes, each at most once */
#define SPACE_ERR_LEN 512
#define SPACE_MAX_SAMPLES 1000000 /* measure.min_samples and max_samples at most */

/* The five axes of a space: its family's config slots 1 to 5 (named after
 * mma's, the default family's). */
typedef enum space_axis_id {
    SPACE_AXIS_BLOCK_M,
    SPACE_AXIS_BLOCK_N,
    SPACE_AXIS_NUM_WARPS,
    SPACE_AXIS_STAGES,
    SPACE_AXIS_SWIZZLE,
    SPACE_AXIS_COUNT
} space_axis_id;

/* One attention problem: fp16 [batch, heads, seq_len, head_dim]. */
typedef struct space_problem {
    int batch, heads, seq_len, head_dim;
    int causal;
} space_problem;

/* Measurement settings; every field has a default (docs/spaces.md). */
typedef struct space_measure {
    int warmup_runs;    /* launches before timing (default 3) */
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
 * of its five axes (slots 1 to 5, named by the family's fa_family.axes). */
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

/* The axis's name as written in the file ("BLOCK_M" ...) for the default
 * family, mma; a space's "axes" are its family's slots 1 to 5
 * (kernels/family.h: fa_family.axes, names and the values each allows). */
const char *space_axis_name(space_axis_id a);

/* Canonical problem text used in store keys: "b4.h8.s512.d64.nc" (".c" when
 * causal). Returns what snprintf returns. */
int space_problem_format(const space_problem *p, char *buf, size_t n);
/* Parses that text, or the short "4,8,512,64" form (non-causal). 0 / -1. */
int space_problem_parse(const char *s, space_problem *p);

/* Whether the kernels can launch p at all, whatever the config: the
 * launches index batch x heads as the CUDA grid's y dimension (at most
 * SPACE_MAX_BATCH_HEADS) and batch x heads x seq_len rows in 32-bit ints
 * (at most SPACE_MAX_ROWS). Returns 0, or -1 with one line in why ("batch
 * x heads is 65536, ..."). The space parser and `eval --problem` check it
 * before any work; a stored record's problem is only text and is not. */
#define SPACE_MAX_BATCH_HEADS 65535L
#define SPACE_MAX_ROWS (1L << 30)
int space_problem_check(const space_problem *p, char *why, size_t n);

/* FLOPs and minimum DRAM bytes of one forward pass (for TFLOPS, GB/s):
 * 4*B*H*S*S*D (halved when causal) and 4 tensors of B*H*S*D fp16. */
double space_problem_flops(const space_problem *p);
double space_problem_bytes(const space_problem *p);

#endif /* SPACE_H */
