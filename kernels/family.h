/* family.h - the kernel families: one table entry per family, the only way
 * the planner, the instance generator, the engine and the store reach
 * family-specific code.
 *
 * A family is one kernel template with its own axes (kernels/<name>/). Its
 * entry (an fa_family, defined in kernels/<name>/<name>.c) says its name,
 * its axes as users name them, its config text, the planner's static rules
 * and the text of its registry entry (the instance macro the generated
 * shards expand). The table (kernels/family.c) lists every entry; family 0,
 * "mma" (the mma.sync template, kernels/mma/), is the default: a space, a
 * record or a config text that names no family is of it. How to add one:
 * docs/families.md.
 *
 * Pure C, no CUDA: built into the host library and into geninst.
 */
#ifndef FA_FAMILY_H
#define FA_FAMILY_H

#include "fa_config.h"

/* The default family's index and name. */
#define FA_FAMILY_DEFAULT 0
#define FA_FAMILY_DEFAULT_NAME "mma"
/* Room for a family name with its NUL (names are [a-z0-9_], 1 to 15). */
#define FA_FAMILY_NAME_LEN 16

/* A family's static verdicts on a point, first failing rule wins; the
 * planner's reasons (grid/plan.h) are these codes, plus its own. A family
 * returns the ones its rules need. */
typedef enum fa_reject {
    FA_REJ_OK = 0,
    FA_REJ_HEAD_DIM,  /* head_dim not one the template is built for */
    FA_REJ_WARP_ROWS, /* BLOCK_M is not the rows the CTA's warps own (each family says how:
                         fa_family.rule; mma 16 per warp, wgmma 64 per consumer warpgroup) */
    FA_REJ_CHUNKS,    /* a tile does not split into whole copies per thread */
    FA_REJ_SMEM,      /* shared memory over the space's limit */
    FA_REJ_ARCH,      /* the family's code does not run on the target's architecture */
    FA_REJ_TILE,      /* a tile the hardware cannot move or multiply (TMA box, wgmma N) */
    FA_REJ_REGS,      /* the registers the point needs exceed its budget (it would spill) */
    FA_REJ_PIPELINE,  /* a pipeline scheme the point's other axes cannot run */
    FA_REJ_COUNT
} fa_reject;

/* One axis of a family, as the space file names it and the values it may
 * take there (grid/space.c checks them, in this order): an integer from lo
 * to hi, a multiple of step when step > 1, one of the bits of set (bit v
 * for value v < 64) when set is not 0. A value under lo, off the step or
 * out of the set is refused with `what`; one over hi with `over` (or
 * `what` when NULL). `tag` is its letter in the config text ("m" in
 * "d64.m128..."), what the report's panels are titled with. */
typedef struct fa_axis {
    const char *name; /* "BLOCK_M" */
    const char *what; /* the values it allows, in words: "a positive integer multiple of 16" */
    const char *over; /* the words for a value over hi, or NULL */
    long lo, hi;
    int step;
    unsigned long long set;
    const char *tag; /* "m" */
} fa_axis;

/* The one rule for a value of an axis: NULL when ax allows v, else the
 * words of what it allows (ax->what; ax->over, when set, for a value
 * over hi that is otherwise allowed). A space's axis values
 * (grid/space.c), a record's config (store/record.c) and a config text
 * (fa_config_parse: eval's --config) are checked with it. */
const char *fa_axis_value_why(const fa_axis *ax, long v);

/* The first slot (1 to FA_CONFIG_SLOTS - 1; slot 0, HEAD_DIM, is the
 * problem's) whose value c's family does not allow, or 0 when every one
 * is allowed or c is of no known family. */
int fa_config_value_bad(const fa_config *c);
/* The same, and the words for it in buf ("SWIZZLE is 9, expected 0 or
 * 1"; nothing is written when every value is allowed, or n is 0). */
int fa_config_value_text(const fa_config *c, char *buf, unsigned long n);

/* fa_config_parse (kernels/fa_config.h), saying why: -1 with why empty
 * when s is not a config text of a known family, -1 with why set by
 * fa_config_value_text when it is one but a value no axis allows. */
int fa_config_parse_why(const char *s, fa_config *c, char *why, unsigned long n);

/* The registry entry of c, in the one form every family's is written (its
 * slots in order, as the config text has them): the line a generated shard
 * holds, the instance macro with "_BF16" for bf16 and the six slot values
 * ("FA_INSTANCE(64, 128, 64, 4, 2, 1)"), and the C name of the fa_instance
 * that line defines: symbol_prefix, "bf16_" for bf16, then tag and value of
 * each slot joined by '_' ("fa_inst_d64_m128_n64_w4_s2_z1"). snprintf-like;
 * a config of no known family writes "?". */
int fa_config_instance(const fa_config *c, char *buf, unsigned long n);
int fa_config_symbol(const fa_config *c, char *buf, unsigned long n);

/* Room for one Kernel Tuner restriction string, NUL included, and the most
 * a family writes (fa_family.kt_restrictions). */
#define FA_KT_RESTRICTION_LEN 160
#define FA_KT_MAX_RESTRICTIONS 12

/* Most derived code paths a family reports ("paths" in list and seeds). */
#define FA_FAMILY_MAX_PATHS 4

typedef struct fa_family {
    const char *name;    /* "mma": the space's "family", a record's key.family, a seed's family */
    const char *summary; /* one line: what the template is */
    const char
        *header; /* the template the generated shards include ("kernels/mma/flash_fwd.cuh") */
    /* What an edited copy of the template must still define to be compiled
     * as a kernel variant (sweep/variant.h; scripts/evolve_code.py reads the
     * same names from kernels/<name>/evolve.json): the instance macro
     * ("FA_INSTANCE") and the kernel template ("flash_fwd_kernel"). */
    const char *instance_macro, *kernel_name;
    /* The axis of each config slot, as the space file and the template name
     * it; slot 0 comes from the problem (HEAD_DIM: its name only, check
     * holds its rule), slots 1
     * to 5 are the space's "axes", with the values each may take. */
    fa_axis axes[FA_CONFIG_SLOTS];
    const char *text_example; /* a config text: "d64.m128.n64.w4.s2.z1" */
    /* The one architecture the family's code runs on, compute capability x10 (90 for
     * sm_90a), or 0 when it runs on every architecture the build targets. With it set,
     * arch_name says the target ("sm_90a", the instances' -gencode suffix after "sm_"),
     * arch_why what needs it ("wgmma, TMA"): a space whose target.arch differs plans none
     * of its points (FA_REJ_ARCH), and the build compiles its instances for that target
     * only, when ARCHS holds its number (scripts/geninst.c). */
    int arch;
    const char *arch_name, *arch_why;
    /* The planner's static rules (no GPU): an fa_reject, and the reason's
     * text with the numbers (snprintf-like). */
    int (*check)(const fa_config *c, long smem_limit);
    int (*reject_text)(int reason, const fa_config *c, long smem_limit, char *buf, unsigned long n);
    /* Each rule check applies, in one line and in the family's words, by its
     * fa_reject code (NULL for a code it never returns): what `plan` and the
     * report say a reason code means for this family's points ("BLOCK_M = 64
     * x CONSUMER_WG, 1 to 3 consumer warpgroups"). */
    const char *rule[FA_REJ_COUNT];
    long (*smem_bytes)(const fa_config *c); /* dynamic shared memory a launch asks for */
    int (*threads)(const fa_config *c);     /* threads per CTA a launch asks for (one dimension) */
    /* The C name prefix of the registry entries its instance macro defines
     * ("fa_inst_": fa_config_symbol). */
    const char *symbol_prefix;
    /* Kernel Tuner's view (export/tuner.c: the cache, T4 and T1 exports),
     * Python expressions over the axes' names: the threads per CTA a launch
     * asks for (block_size_x: "32*NUM_WARPS"), the grid's x size over T1's
     * ProblemSize [B, H, S, D], and check's rules as restriction strings for
     * a problem's head_dim and a shared-memory limit (LONG_MAX: none) into
     * out[0..max-1] (max >= FA_KT_MAX_RESTRICTIONS): a point of the axes'
     * values meets them all exactly when check accepts it
     * (tests/unit/test_plan.c brute-forces both over every point a space
     * may hold). Returns how many, or -1 when check rejects every point of
     * head_dim (nothing to search). */
    const char *kt_block_x, *kt_grid_x;
    int (*kt_restrictions)(int head_dim, long smem_limit, char (*out)[FA_KT_RESTRICTION_LEN],
                           int max);
    /* Derived code paths: names, and whether c runs each. */
    int n_paths;
    const char *paths[FA_FAMILY_MAX_PATHS];
    int (*path)(const fa_config *c, int i);
    /* The build's estimate of the nvcc CPU seconds one instance of c adds to a translation
     * unit (the unit's fixed cost, about 1.3 s, left out), which scripts/geninst.c balances
     * its shards by; NULL: every instance of the family alike. Only the sizes of the shards
     * depend on it, never what is compiled. */
    double (*build_cost)(const fa_config *c);
} fa_family;

/* The table: count, entry i (NULL out of range), the index of a name (-1
 * when no family has it), the family of a config (NULL when its index is
 * out of range), and the names as "mma, ..." for messages. */
int fa_family_count(void);
const fa_family *fa_family_get(int i);
int fa_family_index(const char *name);
const fa_family *fa_family_of(const fa_config *c);

/* c's family's build_cost, or 1 when it has none (or c has no family). */
static inline double fa_family_build_cost(const fa_config *c)
{
    const fa_family *f = fa_family_of(c);
    return f && f->build_cost ? f->build_cost(c) : 1.0;
}
const char *fa_family_names(void);

#endif /* FA_FAMILY_H */
