/* fa_config.h - one point of a kernel family's tuning space: which family,
 * and the values of its axes. Family-neutral: what a family's axes mean,
 * which points can exist and how a point is written as text is the
 * family's (kernels/family.h: the table; kernels/<family>/: its traits).
 *
 * One vocabulary everywhere: the space file's axis names, which are the
 * family's. A config holds what the problem fixes (HEAD_DIM, the dtype),
 * the family, and the family's axes as unnamed values (axis[]); the family
 * table names them (fa_family.axes) and only the family's own code reads
 * them, by its own index names (MMA_BLOCK_M, WG_PIPELINE, ...). The config
 * text of an mma point is "d64.m128.n64.w4.s2.z1" (a store key's config
 * field); each family has its own text, and a bf16 point's text ends in
 * ".bf16".
 *
 * This header is shared by the C host code (planner, registry, driver) and
 * by the CUDA templates. Everything here is pure: no CUDA, no allocation,
 * no globals.
 */
#ifndef FA_CONFIG_H
#define FA_CONFIG_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define FA_HD __host__ __device__
#else
#define FA_HD
#endif
/* Pure functions of the axes: constexpr for the template, inline for C. */
#ifdef __cplusplus
#define FA_PURE constexpr FA_HD inline
#else
#define FA_PURE static inline
#endif

/* The element types a problem may hold (its "dtype"); 0 is the default. */
#define FA_DTYPE_FP16 0
#define FA_DTYPE_BF16 1
#define FA_DTYPE_COUNT 2

/* Tunable axes a family may have (its table names each one). */
#define FA_CONFIG_AXES 5
/* The slots of a config, in order: head_dim, then the axes (family and
 * dtype not counted). */
#define FA_CONFIG_SLOTS (1 + FA_CONFIG_AXES)

/* One point: what the problem fixes (head_dim, dtype), the family, and the
 * family's tunable axes. axis[] has no meaning of its own: axis[i] is the
 * i-th axis of the family's table (fa_family.axes[1 + i]: "BLOCK_M" for
 * mma and wgmma, "NUM_WARPS" or "CONSUMER_WG", ...), and only the family's
 * code reads it, by its own names (kernels/<family>/: MMA_*, WG_* indices).
 * A zero initialiser is fp16 of the default family, mma (family 0). */
typedef struct fa_config {
    int head_dim;             /* HEAD_DIM: the problem's */
    int axis[FA_CONFIG_AXES]; /* the family's axes, in its table's order */
    int family;               /* index into the family table (kernels/family.h); 0 = mma */
    int dtype;                /* FA_DTYPE_*: the problem's element type */
} fa_config;

/* Slot i of c (0: head_dim, 1 + k: axis[k]), all of them into v, and a setter. */
FA_PURE int fa_config_slot(const fa_config *c, int i)
{
    return i == 0 ? c->head_dim : c->axis[i - 1];
}
static inline FA_HD void fa_config_slots(const fa_config *c, int v[FA_CONFIG_SLOTS])
{
    for (int i = 0; i < FA_CONFIG_SLOTS; i++)
        v[i] = fa_config_slot(c, i);
}
static inline FA_HD void fa_config_set_slot(fa_config *c, int i, int v)
{
    if (i == 0)
        c->head_dim = v;
    else
        c->axis[i - 1] = v;
}

/* Canonical short text of a config: each slot's tag (fa_family.axes[].tag)
 * and value, joined by '.', then ".bf16" for bf16, e.g.
 * "d64.m128.n64.w4.s2.z1" for mma; the family is not part of it (a record
 * keeps it in key.family). Writes at most `n` bytes including the NUL;
 * returns what snprintf returns (a config of no known family writes "?"). */
int fa_config_format(const fa_config *c, char *buf, unsigned long n);

/* "fp16", "bf16": the dtype's name in spaces, problem texts and seeds; NULL
 * out of range. */
const char *fa_dtype_name(int dtype);

/* Parses a config text: "FAMILY:TEXT" (e.g. "mma:d64.m128.n64.w4.s2.z1"),
 * or TEXT alone for the default family, mma. TEXT must be exactly what the
 * family's format writes, each axis value one its family allows
 * (fa_config_value_bad, kernels/family.h: eval's --config and the inject
 * specs take no value a space could not name). Returns 0 on success, -1
 * otherwise (unknown family, not that form, or a value no axis allows;
 * nothing is written to *c then). */
int fa_config_parse(const char *s, fa_config *c);

/* Parses TEXT (no "FAMILY:" prefix) as a config of family `family` (an
 * index, kernels/family.h). 0 or -1 as fa_config_parse. */
int fa_config_parse_in(int family, const char *s, fa_config *c);

/* Total order on configs (family, dtype, then the slots in order); returns <0, 0, >0 like strcmp.
 * The registry is sorted by it, so it is keyed by family + config. (Inline: the kernel library's
 * registry needs it and links nothing of the host code.) */
static inline int fa_config_cmp(const fa_config *a, const fa_config *b)
{
    if (a->family != b->family)
        return a->family < b->family ? -1 : 1;
    if (a->dtype != b->dtype)
        return a->dtype < b->dtype ? -1 : 1;
    for (int i = 0; i < FA_CONFIG_SLOTS; i++)
        if (fa_config_slot(a, i) != fa_config_slot(b, i))
            return fa_config_slot(a, i) < fa_config_slot(b, i) ? -1 : 1;
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif /* FA_CONFIG_H */
