/* test_plan.c - the planner: shared-memory arithmetic, each reject rule and
 * its text, rule order, grid order and counts, and the compiled predicate.
 *
 * Run from the repository root (spaces/l4.json is read by relative path).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/mma/mma.h"
#include "kernels/wgmma/traits.h"
#include "grid/plan.h"
#include "grid/space.h"
#include "tests/unit/testspace.h"
#include "tests/unit/testutil.h"

static fa_config cfg(int d, int m, int n, int w, int s, int z)
{
    fa_config c = {d, {m, n, w, s, z}, FA_FAMILY_MMA, FA_DTYPE_FP16};
    return c;
}

static const char *reason_text(const fa_config *c, plan_reason r, long limit)
{
    static char buf[256];
    plan_point p;
    memset(&p, 0, sizeof p);
    p.cfg = *c;
    p.reason = r;
    p.smem_bytes = plan_smem_bytes(c);
    int n = plan_reject_reason(&p, limit, buf, sizeof buf);
    assert_int_equal(n, (int)strlen(buf));
    return buf;
}

/* ---- arithmetic and single rules ------------------------------------------------ */

static void test_smem_bytes(void **state)
{
    (void)state;
    /* Q 128x64 fp16 = 16384, plus 2 stages x (K + V) of 64x64 fp16 = 8192. */
    fa_config c = cfg(64, 128, 64, 4, 2, 0);
    assert_int_equal(fa_smem_bytes(&c), 16384 + 2 * 2 * 8192);
    assert_int_equal(plan_check(&c, 49152), PLAN_OK);
    assert_int_equal(plan_check(&c, 49151), PLAN_REJ_SMEM);
    /* D=128, M=64, N=64, one stage: 16384 + 2 x 16384. */
    c = cfg(128, 64, 64, 4, 1, 1);
    assert_int_equal(fa_smem_bytes(&c), 49152);
    assert_int_equal(plan_check(&c, 49152), PLAN_OK);
    assert_int_equal(plan_check(&c, 49151), PLAN_REJ_SMEM);
    /* Swizzle does not change the footprint. */
    c.axis[MMA_SWIZZLE] = 0;
    assert_int_equal(fa_smem_bytes(&c), 49152);
    /* The largest H100 point: 128x128 Q, 3 stages of 256-row K/V at D=128. */
    c = cfg(128, 128, 256, 8, 3, 1);
    assert_int_equal(fa_smem_bytes(&c), 32768 + 6 * 65536);
    assert_int_equal(plan_check(&c, 232448), PLAN_REJ_SMEM);
    c.axis[MMA_STAGES] = 1;
    assert_int_equal(fa_smem_bytes(&c), 32768 + 2 * 65536);
    assert_int_equal(plan_check(&c, 232448), PLAN_OK);
}

/* plan_check of c with no limit of shared memory is want. */
static void expect_rule(fa_config c, plan_reason want)
{
    assert_int_equal(plan_check(&c, 1L << 30), want);
}

static void test_rules(void **state)
{
    (void)state;
    expect_rule(cfg(96, 64, 64, 4, 1, 0), PLAN_REJ_HEAD_DIM);
    expect_rule(cfg(32, 64, 64, 4, 1, 0), PLAN_REJ_HEAD_DIM);
    expect_rule(cfg(512, 64, 64, 4, 1, 0), PLAN_REJ_HEAD_DIM);
    /* Head dim 256: one 16-row tile per warp and BLOCK_N up to 64 fit the registers. */
    expect_rule(cfg(256, 64, 64, 4, 1, 0), PLAN_OK);
    expect_rule(cfg(256, 128, 64, 4, 1, 0), PLAN_REJ_REGS); /* two tiles per warp */
    expect_rule(cfg(256, 64, 128, 4, 1, 0), PLAN_REJ_REGS); /* a 128-key S tile */
    expect_rule(cfg(128, 128, 128, 4, 1, 0), PLAN_OK);      /* the rule is for head dim 256 */

    /* Each warp owns whole 16-row tiles: block_m % (16 * warps). */
    expect_rule(cfg(64, 32, 64, 8, 1, 0), PLAN_REJ_WARP_ROWS);
    expect_rule(cfg(64, 64, 64, 8, 1, 0), PLAN_REJ_WARP_ROWS);
    expect_rule(cfg(64, 128, 64, 8, 1, 0), PLAN_OK);
    expect_rule(cfg(64, 48, 64, 1, 1, 0), PLAN_OK);            /* 3 tiles for one warp: fine */
    expect_rule(cfg(64, 48, 64, 2, 1, 0), PLAN_REJ_WARP_ROWS); /* 1.5 tiles per warp: not */
    expect_rule(cfg(64, 512, 64, 16, 1, 0), PLAN_OK);

    /* K/V 32x64 fp16 = 256 chunks, 16 warps = 512 threads: uneven. */
    expect_rule(cfg(64, 256, 32, 16, 1, 0), PLAN_REJ_CHUNKS);
    expect_rule(cfg(64, 256, 64, 16, 1, 0), PLAN_OK);        /* 512 chunks: one each */
    expect_rule(cfg(64, 128, 16, 8, 1, 0), PLAN_REJ_CHUNKS); /* 128 chunks, 256 threads */
    expect_rule(cfg(128, 128, 16, 8, 1, 0), PLAN_OK);        /* 256 chunks, 256 threads */
    expect_rule(cfg(64, 128, 48, 8, 1, 0), PLAN_REJ_CHUNKS); /* 384 chunks, 256 threads */

    /* Hand-built nonsense is rejected, never a division by zero. */
    expect_rule(cfg(64, 64, 64, 0, 1, 0), PLAN_REJ_WARP_ROWS);
    expect_rule(cfg(64, 0, 64, 4, 1, 0), PLAN_REJ_WARP_ROWS);
    expect_rule(cfg(64, 64, 0, 4, 1, 0), PLAN_REJ_CHUNKS);
}

static void test_rule_order(void **state)
{
    (void)state;
    /* Fails every rule: head_dim wins. */
    fa_config c = cfg(96, 32, 16, 16, 8, 0);
    assert_int_equal(plan_check(&c, 1), PLAN_REJ_HEAD_DIM);
    /* Fails warp rows, chunks and smem: warp rows wins. */
    c.head_dim = 64;
    assert_int_equal(plan_check(&c, 1), PLAN_REJ_WARP_ROWS);
    /* Fails chunks and smem: chunks wins. */
    c.axis[MMA_BLOCK_M] = 256;
    assert_int_equal(plan_check(&c, 1), PLAN_REJ_CHUNKS);
    /* Only smem left. */
    c.axis[MMA_BLOCK_N] = 64;
    assert_int_equal(plan_check(&c, 1), PLAN_REJ_SMEM);
    assert_int_equal(plan_check(&c, fa_smem_bytes(&c)), PLAN_OK);
}

static void test_reason_text(void **state)
{
    (void)state;
    fa_config c = cfg(64, 128, 64, 4, 3, 0); /* 16384 + 6 x 8192 */
    assert_string_equal(reason_text(&c, PLAN_REJ_SMEM, 49152),
                        "needs 65536 B of shared memory, the space allows 49152 B");
    c = cfg(64, 32, 64, 8, 1, 0);
    assert_string_equal(reason_text(&c, PLAN_REJ_WARP_ROWS, 49152),
                        "BLOCK_M 32 is not a multiple of 16 x NUM_WARPS (8 warps need 128 rows)");
    c = cfg(64, 256, 32, 16, 1, 0);
    assert_string_equal(
        reason_text(&c, PLAN_REJ_CHUNKS, 49152),
        "K/V tile of 32 x 64 fp16 is 256 cp.async chunks of 16 B, not a multiple of 512 threads");
    /* The Q tile is named when it is the one that does not split. */
    c = cfg(64, 16, 64, 8, 1, 0);
    assert_string_equal(
        reason_text(&c, PLAN_REJ_CHUNKS, 49152),
        "Q tile of 16 x 64 fp16 is 128 cp.async chunks of 16 B, not a multiple of 256 threads");
    c = cfg(96, 64, 64, 4, 1, 0);
    assert_string_equal(reason_text(&c, PLAN_REJ_HEAD_DIM, 49152),
                        "head_dim 96 unsupported (64, 128, 256)");
    c = cfg(64, 64, 64, 4, 1, 0);
    assert_string_equal(reason_text(&c, PLAN_REJ_NOT_COMPILED, 49152),
                        "not compiled into this binary (rebuild with this space in SPACES)");
    assert_string_equal(reason_text(&c, PLAN_OK, 49152), "");

    /* Truncation behaves like snprintf: returns the full length. */
    plan_point p;
    memset(&p, 0, sizeof p);
    p.cfg = cfg(96, 64, 64, 4, 1, 0);
    p.reason = PLAN_REJ_HEAD_DIM;
    char small[8];
    assert_int_equal(plan_reject_reason(&p, 1, small, sizeof small),
                     (int)strlen("head_dim 96 unsupported (64, 128, 256)"));
    assert_string_equal(small, "head_di");
}

static void test_reason_codes(void **state)
{
    (void)state;
    /* arch, tile, regs and pipeline came with the wgmma family. */
    static const char *const want[PLAN_REASON_COUNT] = {
        "ok",   "head_dim", "warp_rows", "chunks",   "smem",
        "arch", "tile",     "regs",      "pipeline", "not_compiled"};
    for (int r = 0; r < PLAN_REASON_COUNT; r++)
        assert_string_equal(plan_reason_code((plan_reason)r), want[r]);
    assert_string_equal(plan_reason_code(PLAN_REASON_COUNT), "unknown");
}

/* ---- the grid ----------------------------------------------------------------------- */

static void load_l4(space *s)
{
    char err[SPACE_ERR_LEN];
    if (space_load("spaces/l4.json", s, err, sizeof err) != 0) {
        print_error("%s (run from the repository root)\n", err);
        fail();
    }
}

/* A small hand-made space: two problems, 2 x 2 x 2 x 2 x 2 axes. */
static void small_space(space *s)
{
    static const space_problem problems[] = {{1, 2, 128, 64, 0, 2, 0}, {1, 2, 128, 128, 1, 2, 0}};
    ts_space(s, 49152, problems, 2);
    static const int vals[SPACE_AXIS_COUNT][2] = {{128, 64}, {32, 64}, {4, 2}, {2, 1}, {1, 0}};
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        ts_axis(s, a, vals[a], 2);
}

/* The plan of s, built with no filter (the build must succeed). */
static plan plan_of(const space *s)
{
    plan p;
    assert_int_equal(plan_build(s, NULL, NULL, &p), 0);
    return p;
}

static plan small_plan(space *s)
{
    small_space(s);
    return plan_of(s);
}

static plan l4_plan(space *s)
{
    load_l4(s);
    return plan_of(s);
}

static void test_order(void **state)
{
    (void)state;
    space s;
    plan p = small_plan(&s);
    assert_int_equal(p.n, 64);
    /* Problem-major, then BLOCK_M outermost ... SWIZZLE innermost, each
     * axis in file order (not sorted). */
    size_t k = 0;
    for (int pi = 0; pi < 2; pi++)
        for (int m = 0; m < 2; m++)
            for (int n = 0; n < 2; n++)
                for (int w = 0; w < 2; w++)
                    for (int st = 0; st < 2; st++)
                        for (int z = 0; z < 2; z++, k++) {
                            const plan_point *pt = &p.points[k];
                            fa_config want =
                                cfg(s.problems[pi].head_dim, s.axis[0][m], s.axis[1][n],
                                    s.axis[2][w], s.axis[3][st], s.axis[4][z]);
                            assert_int_equal(pt->problem, pi);
                            assert_int_equal(fa_config_cmp(&pt->cfg, &want), 0);
                            assert_int_equal(pt->smem_bytes, fa_smem_bytes(&want));
                            assert_int_equal(pt->reason, plan_check(&want, s.smem_limit));
                        }
    /* Spot checks written out by hand. */
    char buf[64];
    fa_config_format(&p.points[0].cfg, buf, sizeof buf);
    assert_string_equal(buf, "d64.m128.n32.w4.s2.z1");
    fa_config_format(&p.points[1].cfg, buf, sizeof buf);
    assert_string_equal(buf, "d64.m128.n32.w4.s2.z0");
    fa_config_format(&p.points[2].cfg, buf, sizeof buf);
    assert_string_equal(buf, "d64.m128.n32.w4.s1.z1");
    fa_config_format(&p.points[16].cfg, buf, sizeof buf);
    assert_string_equal(buf, "d64.m64.n32.w4.s2.z1");
    fa_config_format(&p.points[63].cfg, buf, sizeof buf);
    assert_string_equal(buf, "d128.m64.n64.w2.s1.z0");
    assert_int_equal(p.points[63].problem, 1);
    plan_free(&p);
    assert_null(p.points);
    assert_int_equal(p.n, 0);
}

/* Every point carries the space's family (mma, the default); a config of a
 * family the table lacks is refused, with a text that says so; the family
 * table and the config text agree. */
static void test_family(void **state)
{
    (void)state;
    space s;
    plan p = small_plan(&s);
    for (size_t i = 0; i < p.n; i++)
        assert_int_equal(p.points[i].cfg.family, s.family);
    assert_string_equal(fa_family_of(&p.points[0].cfg)->name, "mma");
    plan_free(&p);

    assert_int_equal(fa_family_count(), 2);
    assert_int_equal(fa_family_index("mma"), FA_FAMILY_DEFAULT);
    assert_int_equal(FA_FAMILY_MMA, FA_FAMILY_DEFAULT);
    assert_int_equal(fa_family_index("wgmma"), FA_FAMILY_WGMMA);
    assert_int_equal(fa_family_index("tcgen05"), -1);
    assert_string_equal(fa_family_names(), "mma, wgmma");
    const fa_family *f = fa_family_get(FA_FAMILY_MMA);
    assert_string_equal(f->header, "kernels/mma/flash_fwd.cuh");
    assert_string_equal(f->axes[0].name, "HEAD_DIM");
    assert_string_equal(f->axes[1].name, "BLOCK_M");
    assert_string_equal(f->axes[5].name, "SWIZZLE");

    fa_config c = cfg(64, 128, 64, 4, 2, 1), back;
    char buf[128];
    fa_config_instance(&c, buf, sizeof buf);
    assert_string_equal(buf, "FA_INSTANCE(64, 128, 64, 4, 2, 1)");
    fa_config_symbol(&c, buf, sizeof buf);
    assert_string_equal(buf, "fa_inst_d64_m128_n64_w4_s2_z1");
    /* The config text: plain for the default family, or qualified. */
    assert_int_equal(fa_config_parse("mma:d64.m128.n64.w4.s2.z1", &back), 0);
    assert_int_equal(fa_config_cmp(&back, &c), 0);
    assert_int_equal(fa_config_parse("d64.m128.n64.w4.s2.z1", &back), 0);
    assert_int_equal(fa_config_cmp(&back, &c), 0);
    /* Another family's text is not an mma one, and the other way round. */
    assert_int_equal(fa_config_parse("wgmma:d64.m128.n64.w4.s2.z1", &back), -1);
    assert_int_equal(fa_config_parse("d64.m128.n128.c2.s2.p2", &back), -1);
    assert_int_equal(fa_config_parse(":d64.m128.n64.w4.s2.z1", &back), -1);
    assert_int_equal(fa_config_parse("mma:", &back), -1);
    /* A value no axis allows is no config (eval's --config once said
     * "not compiled" for it); the one rule is fa_axis_value_why. */
    back = c;
    assert_int_equal(fa_config_parse("d64.m128.n64.w4.s2.z9", &back), -1);
    assert_int_equal(fa_config_cmp(&back, &c), 0); /* nothing written */
    assert_int_equal(fa_config_parse("d64.m128.n64.w0.s2.z1", &back), -1);
    const fa_axis *z = &f->axes[FA_CONFIG_SLOTS - 1];
    assert_string_equal(z->name, "SWIZZLE");
    assert_null(fa_axis_value_why(z, 1));
    assert_string_equal(fa_axis_value_why(z, 9), z->what);
    assert_string_equal(fa_axis_value_why(z, -1), z->what);
    fa_config bad = c;
    bad.axis[MMA_SWIZZLE] = 9;
    assert_int_equal(fa_config_value_bad(&bad), FA_CONFIG_SLOTS - 1);
    assert_int_equal(fa_config_value_bad(&c), 0);

    c.family = 7; /* no such family */
    assert_int_equal(plan_check(&c, 1L << 30), PLAN_REJ_NOT_COMPILED);
    assert_int_equal(plan_smem_bytes(&c), 0);
    assert_string_equal(reason_text(&c, PLAN_REJ_NOT_COMPILED, 1L << 30),
                        "family 7 unknown (known: mma, wgmma)");
    fa_config_format(&c, buf, sizeof buf);
    assert_string_equal(buf, "?");
}

static void check_counts(const plan *p)
{
    size_t sum = 0, recount[PLAN_REASON_COUNT] = {0};
    for (int r = 0; r < PLAN_REASON_COUNT; r++)
        sum += p->by_reason[r];
    assert_int_equal(sum, p->n);
    for (size_t i = 0; i < p->n; i++)
        recount[p->points[i].reason]++;
    assert_memory_equal(recount, p->by_reason, sizeof recount);
    assert_int_equal(p->n_accepted, p->by_reason[PLAN_OK]);
}

static void test_l4_counts(void **state)
{
    (void)state;
    space s;
    plan p = l4_plan(&s);
    /* 3 x 3 x 3 x 3 x 2 points. (BLOCK_M, warps) pairs that split: 32/2,
     * 64/2, 64/4, 128/2, 128/4, 128/8 = 6 of 9, so 3 x 18 = 54 warp_rows.
     * 256-chunk K/V tiles split over up to 256 threads: no chunk rejects.
     * Smem in units of 128 B is M + 2*S*N <= 384: of the 9 (N, S) pairs,
     * the same 3 fail for every M (N=64/S=3, N=128/S=2, N=128/S=3), so
     * 6 pairs x 3 x 2 = 36 smem; 6 x 6 x 2 = 72 accepted. */
    assert_int_equal(p.n, 162);
    assert_int_equal(p.by_reason[PLAN_OK], 72);
    assert_int_equal(p.by_reason[PLAN_REJ_WARP_ROWS], 54);
    assert_int_equal(p.by_reason[PLAN_REJ_SMEM], 36);
    assert_int_equal(p.by_reason[PLAN_REJ_CHUNKS], 0);
    assert_int_equal(p.by_reason[PLAN_REJ_HEAD_DIM], 0);
    assert_int_equal(p.by_reason[PLAN_REJ_NOT_COMPILED], 0);
    check_counts(&p);
    plan_free(&p);
}

static void test_head_dim_in_grid(void **state)
{
    (void)state;
    space s;
    small_space(&s);
    s.problems[1].head_dim = 96; /* only possible in a hand-made space */
    plan p = plan_of(&s);
    assert_int_equal(p.by_reason[PLAN_REJ_HEAD_DIM], 32);
    for (size_t i = 32; i < 64; i++)
        assert_int_equal(p.points[i].reason, PLAN_REJ_HEAD_DIM);
    check_counts(&p);
    plan_free(&p);
}

/* ---- the compiled predicate ------------------------------------------------------- */

typedef struct pred_ctx {
    long limit;
    int calls;
} pred_ctx;

/* Says only swizzled configs exist; fails the test if asked about a point
 * the static rules already reject. */
static int only_swizzled(const fa_config *c, void *ctx)
{
    pred_ctx *pc = ctx;
    pc->calls++;
    assert_int_equal(plan_check(c, pc->limit), PLAN_OK);
    return c->axis[MMA_SWIZZLE] == 1;
}

static void test_compiled(void **state)
{
    (void)state;
    space s;
    load_l4(&s);
    pred_ctx ctx = {s.smem_limit, 0};
    plan p;
    assert_int_equal(plan_build(&s, only_swizzled, &ctx, &p), 0);
    assert_int_equal(ctx.calls, 72); /* once per statically valid point */
    assert_int_equal(p.n, 162);
    assert_int_equal(p.n_accepted, 36);
    assert_int_equal(p.by_reason[PLAN_REJ_NOT_COMPILED], 36);
    /* Static reasons are unchanged by the predicate. */
    assert_int_equal(p.by_reason[PLAN_REJ_WARP_ROWS], 54);
    assert_int_equal(p.by_reason[PLAN_REJ_SMEM], 36);
    for (size_t i = 0; i < p.n; i++) {
        const plan_point *pt = &p.points[i];
        if (pt->reason == PLAN_OK)
            assert_int_equal(pt->cfg.axis[MMA_SWIZZLE], 1);
        if (pt->reason == PLAN_REJ_NOT_COMPILED) {
            assert_int_equal(pt->cfg.axis[MMA_SWIZZLE], 0);
            char buf[128];
            plan_reject_reason(pt, s.smem_limit, buf, sizeof buf);
            assert_string_equal(
                buf, "not compiled into this binary (rebuild with this space in SPACES)");
        }
    }
    check_counts(&p);
    plan_free(&p);
}

static void test_edge_spaces(void **state)
{
    (void)state;
    space s;
    small_space(&s);
    plan p;
    /* No problems: an empty plan, not an error. */
    s.n_problems = 0;
    assert_int_equal(plan_build(&s, NULL, NULL, &p), 0);
    assert_int_equal(p.n, 0);
    assert_int_equal(p.n_accepted, 0);
    plan_free(&p);
    /* A corrupt table is refused, and *out is left empty. */
    small_space(&s);
    s.axis_len[MMA_STAGES] = SPACE_MAX_AXIS + 1;
    memset(&p, 0x5a, sizeof p);
    assert_int_equal(plan_build(&s, NULL, NULL, &p), -1);
    assert_null(p.points);
    assert_int_equal(p.n, 0);
    small_space(&s);
    s.n_problems = -1;
    assert_int_equal(plan_build(&s, NULL, NULL, &p), -1);
    /* plan_free is safe twice and on NULL. */
    plan_free(&p);
    plan_free(&p);
    plan_free(NULL);
}

/* ---- the wgmma family ------------------------------------------------------------------ */

static fa_config wcfg(int d, int m, int n, int cw, int s, int p)
{
    fa_config c = {d, {m, n, cw, s, p}, FA_FAMILY_WGMMA, FA_DTYPE_FP16};
    return c;
}

/* Its description: config text both ways, registry entry, axes, arch. */
static void test_wgmma_family(void **state)
{
    (void)state;
    const fa_family *f = fa_family_get(FA_FAMILY_WGMMA);
    assert_string_equal(f->name, "wgmma");
    assert_string_equal(f->header, "kernels/wgmma/flash_fwd_wgmma.cuh");
    const char *names[] = {"HEAD_DIM", "BLOCK_M", "BLOCK_N", "CONSUMER_WG", "STAGES", "PIPELINE"};
    for (int i = 0; i < FA_CONFIG_SLOTS; i++)
        assert_string_equal(f->axes[i].name, names[i]);
    assert_int_equal(f->arch, 90);
    assert_string_equal(f->arch_name, "sm_90a");
    assert_int_equal(fa_family_get(FA_FAMILY_MMA)->arch, 0);

    fa_config c = wcfg(64, 128, 128, 2, 2, 2), back;
    char buf[128];
    fa_config_format(&c, buf, sizeof buf);
    assert_string_equal(buf, "d64.m128.n128.c2.s2.p2");
    assert_string_equal(buf, f->text_example);
    assert_int_equal(fa_config_parse("wgmma:d64.m128.n128.c2.s2.p2", &back), 0);
    assert_int_equal(fa_config_cmp(&back, &c), 0);
    assert_int_equal(back.family, FA_FAMILY_WGMMA);
    assert_int_equal(fa_config_parse("wgmma:d64.m128.n128.c2.s2.p02", &back), -1);
    assert_int_equal(fa_config_parse("wgmma:d64.m128.n128.c2.s2.p2 ", &back), -1);
    fa_config_instance(&c, buf, sizeof buf);
    assert_string_equal(buf, "FA_WG_INSTANCE(64, 128, 128, 2, 2, 2)");
    fa_config_symbol(&c, buf, sizeof buf);
    assert_string_equal(buf, "fa_wg_inst_d64_m128_n128_c2_s2_p2");
    /* The launch's shared memory: 1 KB alignment slack, Q, 2 x STAGES
     * K/V tiles, the epilogue's O tile (it fits), 2 + 4 x STAGES mbarriers. */
    assert_int_equal(plan_smem_bytes(&c), 1024 + 16384 + 4 * 16384 + 16384 + 8 * 10);
    /* Paths: P V under the softmax (1, 2, 4), ping-pong (2, 3, 4). */
    assert_int_equal(f->path(&c, 0), 1);
    assert_int_equal(f->path(&c, 1), 1);
    c.axis[WG_PIPELINE] = 3;
    assert_int_equal(f->path(&c, 0), 0);
    assert_int_equal(f->path(&c, 1), 1);
    c.axis[WG_PIPELINE] = 0;
    assert_int_equal(f->path(&c, 0) + f->path(&c, 1), 0);
}

/* Each rule, its reason and its text; the points NOTES.md measured pass. */
static void test_wgmma_rules(void **state)
{
    (void)state;
    const long H100 = 232448;
    static const int good[][6] = {{64, 192, 128, 3, 2, 3},  {64, 128, 128, 2, 3, 2},
                                  {64, 128, 128, 2, 2, 2},  {128, 128, 128, 2, 2, 2},
                                  {128, 128, 128, 2, 3, 2}, {64, 128, 160, 2, 2, 2},
                                  {64, 64, 64, 1, 2, 1},    {128, 128, 128, 2, 2, 4},
                                  {64, 64, 128, 2, 2, 5},   {64, 64, 64, 2, 4, 5}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        const int *g = good[i];
        fa_config c = wcfg(g[0], g[1], g[2], g[3], g[4], g[5]);
        assert_int_equal(plan_check(&c, H100), PLAN_OK);
        assert_true(fa_wg_valid(g[0], g[1], g[2], g[3], g[4], g[5]));
    }
    /* The config, the reason at the H100's limit, its text (NULL: not checked). The
     * spilling points are the two NOTES.md measured (184 and 192 B of local
     * memory), and the overlap at 3 consumers. */
    static const struct {
        int g0, g1, g2, g3, g4, g5; /* wcfg's arguments */
        plan_reason why;
        const char *text;
    } bad[] = {
        {96, 128, 128, 2, 2, 2, PLAN_REJ_HEAD_DIM,
         "head_dim 96 unsupported (64, 128, 256: whole 128-B TMA swizzle rows)"},
        {64, 192, 128, 2, 2, 2, PLAN_REJ_WARP_ROWS,
         "BLOCK_M 192 is not 64 x CONSUMER_WG (2 consumer warpgroups of 64 rows, 1 to 3)"},
        {64, 128, 112, 2, 2, 2, PLAN_REJ_TILE,
         "BLOCK_N 112 has no wgmma m64nNk16 wrapper (N = 64, 80, 96, 128, 160, 176, 192, 256)"},
        {64, 64, 128, 1, 2, 2, PLAN_REJ_PIPELINE,
         "PIPELINE 2 is a ping-pong between consumer warpgroups: needs CONSUMER_WG >= 2, got 1"},
        {64, 128, 128, 2, 1, 0, PLAN_REJ_PIPELINE,
         "STAGES 1: the TMA ring needs at least 2 stages"},
        /* the key split on an odd ring: a warpgroup a ring ahead waits on a stale phase */
        {64, 64, 128, 2, 3, 5, PLAN_REJ_PIPELINE,
         "PIPELINE 5 needs an even STAGES, got 3 (its 2 warpgroups alternate key tiles: with an "
         "odd ring both use every slot and one can wait on a slot's stale mbarrier phase)"},
        {128, 64, 64, 2, 3, 5, PLAN_REJ_PIPELINE, NULL},
        {64, 64, 128, 3, 2, 5, PLAN_REJ_PIPELINE,
         "PIPELINE 5 splits the keys between exactly 2 consumer warpgroups, got 3"},
        {64, 192, 128, 3, 2, 4, PLAN_REJ_REGS,
         "needs about 184 registers per consumer thread, the budget with 3 consumer warpgroups "
         "is 160 (it would spill)"},
        {128, 128, 176, 2, 2, 4, PLAN_REJ_REGS, NULL},
        {64, 192, 128, 3, 2, 2, PLAN_REJ_REGS, NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fa_config b = wcfg(bad[i].g0, bad[i].g1, bad[i].g2, bad[i].g3, bad[i].g4, bad[i].g5);
        assert_int_equal(plan_check(&b, H100), bad[i].why);
        if (bad[i].text)
            assert_string_equal(reason_text(&b, bad[i].why, H100), bad[i].text);
    }
    /* Shared memory: the space's limit, and never over the opt-in limit. */
    fa_config c = wcfg(128, 128, 128, 2, 3, 2);
    assert_int_equal(plan_smem_bytes(&c), 230512);
    assert_int_equal(plan_check(&c, 230512), PLAN_OK);
    assert_int_equal(plan_check(&c, 230511), PLAN_REJ_SMEM);
    assert_string_equal(reason_text(&c, PLAN_REJ_SMEM, 49152),
                        "needs 230512 B of shared memory, the space allows 49152 B");
    c = wcfg(128, 128, 128, 2, 4, 2);
    assert_int_equal(plan_check(&c, 1L << 30), PLAN_REJ_SMEM);
    assert_string_equal(reason_text(&c, PLAN_REJ_SMEM, 1L << 30),
                        "needs 296080 B of shared memory, over the 232448-B per-block opt-in "
                        "limit of sm_90");
}

/* A space with a wgmma grid beside its mma one (the file's "families"). */
static void two_family_space(space *s, int arch)
{
    small_space(s);
    s->arch = arch;
    s->smem_limit = 232448;
    s->n_extra = 1;
    space_grid *g = &s->extra[0];
    g->family = FA_FAMILY_WGMMA;
    const int vals[SPACE_AXIS_COUNT][2] = {{128, 192}, {128, 112}, {2, 3}, {2, 3}, {2, 3}};
    for (int a = 0; a < SPACE_AXIS_COUNT; a++) {
        g->axis_len[a] = 2;
        g->axis[a][0] = vals[a][0];
        g->axis[a][1] = vals[a][1];
    }
}

/* The planner walks the space's own grid, then the wgmma one: every point
 * with its family, the counts by reason add up. */
static void test_two_families(void **state)
{
    (void)state;
    space s;
    two_family_space(&s, 90);
    plan p = plan_of(&s);
    assert_int_equal(p.n, 64 + 64);
    for (size_t i = 0; i < p.n; i++)
        assert_int_equal(p.points[i].cfg.family, i < 64 ? FA_FAMILY_MMA : FA_FAMILY_WGMMA);
    char buf[64];
    fa_config_format(&p.points[64].cfg, buf, sizeof buf);
    assert_string_equal(buf, "d64.m128.n128.c2.s2.p2");
    assert_int_equal(p.points[64].problem, 0);
    fa_config_format(&p.points[127].cfg, buf, sizeof buf);
    assert_string_equal(buf, "d128.m192.n112.c3.s3.p3");
    assert_int_equal(p.points[127].problem, 1);
    /* Per problem, 32 wgmma points: the (M, CW) pairs 128/3 and 192/2
     * (warp_rows) 16 (that rule comes first); of the other 16, BLOCK_N 112
     * (tile) 8; at N = 128, 128/2 takes all 4 (S, P) at D = 64 and
     * D = 128 (at most 230512 B); 192/3 takes P = 3 (P = 2 needs 184 of
     * 160 registers) at D = 64 only (D = 128 needs 184 with P = 3). */
    size_t wg[PLAN_REASON_COUNT] = {0};
    for (size_t i = 64; i < p.n; i++)
        wg[p.points[i].reason]++;
    assert_int_equal(wg[PLAN_REJ_TILE], 16);
    assert_int_equal(wg[PLAN_REJ_WARP_ROWS], 32);
    assert_int_equal(wg[PLAN_OK], 4 + 2 + 4);
    assert_int_equal(wg[PLAN_REJ_REGS], 2 + 4);
    check_counts(&p);
    plan_free(&p);
}

/* On a target that is not sm_90, every wgmma point is refused, with why;
 * the mma points are planned as before. */
static void test_wgmma_arch(void **state)
{
    (void)state;
    space s;
    two_family_space(&s, 89);
    plan p = plan_of(&s);
    for (size_t i = 64; i < p.n; i++)
        assert_int_equal(p.points[i].reason, PLAN_REJ_ARCH);
    assert_int_equal(p.by_reason[PLAN_REJ_ARCH], 64);
    char buf[256];
    plan_reject_reason(&p.points[64], s.smem_limit, buf, sizeof buf);
    assert_string_equal(buf, "needs sm_90a (wgmma, TMA); target is sm_89");
    size_t mma_ok = 0;
    for (size_t i = 0; i < 64; i++)
        mma_ok += p.points[i].reason == PLAN_OK;
    assert_true(mma_ok > 0);
    check_counts(&p);
    plan_free(&p);
    /* A corrupt extra grid is refused like a corrupt own grid. */
    two_family_space(&s, 90);
    s.extra[0].family = 9;
    assert_int_equal(plan_build(&s, NULL, NULL, &p), -1);
    two_family_space(&s, 90);
    s.n_extra = SPACE_MAX_EXTRA + 1;
    assert_int_equal(plan_build(&s, NULL, NULL, &p), -1);
}

/* spaces/h100.json sweeps both families: its wgmma grid's counts. */
static void test_h100_wgmma(void **state)
{
    (void)state;
    space s;
    char err[SPACE_ERR_LEN];
    assert_int_equal(space_load("spaces/h100.json", &s, err, sizeof err), 0);
    plan p = plan_of(&s);
    size_t wg[PLAN_REASON_COUNT] = {0}, n_wg = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.points[i].cfg.family == FA_FAMILY_WGMMA) {
            wg[p.points[i].reason]++;
            n_wg++;
        }
    /* 3 problems (D = 64, 64, 128) x M 3 x N 1 x CW 2 x S 2 x P 3 (2, 3, 5):
     * rows (BLOCK_M = 64 x CW, or 64 for the key split P = 5) fail for 8
     * of the 12 (CW, S, P) of each M per problem: 3 x 3 x 8 = 72; the key
     * split with 3 warpgroups (64/3, P = 5, S 2 or 3) and on an odd ring
     * (64/2, P = 5, S 3) are the pipeline's: 3 per problem; 192/3 runs P = 3
     * only at D = 64 (P = 2 needs 184 of 160 registers; D = 128 needs 184
     * with either): regs 2 + 2 + 4; 128/2 all 4 (S, P) per problem, 192/3 2
     * per D = 64 problem, 64/2/P5 with S 2 1 per problem. */
    assert_int_equal(n_wg, 108);
    assert_int_equal(wg[PLAN_REJ_WARP_ROWS], 72);
    assert_int_equal(wg[PLAN_REJ_PIPELINE], 9);
    assert_int_equal(wg[PLAN_REJ_REGS], 2 + 2 + 4);
    assert_int_equal(wg[PLAN_OK], 16 + 3);
    check_counts(&p);
    plan_free(&p);
}

/* kernels/<name>/evolve.json, what scripts/evolve_code.py reads of a
 * family, names the same template, instance macro and kernel as the
 * family table (kernels/family.h): one rule, two readers. */
static void test_family_evolve_files(void **state)
{
    (void)state;
    for (int i = 0; i < fa_family_count(); i++) {
        const fa_family *f = fa_family_get(i);
        char path[128];
        snprintf(path, sizeof path, "kernels/%s/evolve.json", f->name);
        FILE *fp = fopen(path, "rb");
        if (!fp)
            fail_msg("%s: cannot open (every family declares its evolution data)", path);
        static char text[1 << 16];
        const size_t n = fread(text, 1, sizeof text - 1, fp);
        fclose(fp);
        text[n] = '\0';
        cJSON *j = cJSON_Parse(text);
        assert_non_null(j);
        const char *keys[4] = {"family", "template", "instance_macro", "kernel"};
        const char *want[4] = {f->name, f->header, f->instance_macro, f->kernel_name};
        for (int k = 0; k < 4; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, keys[k]);
            if (!cJSON_IsString(v) || strcmp(v->valuestring, want[k]) != 0)
                fail_msg("%s: %s is not \"%s\"", path, keys[k], want[k]);
        }
        cJSON_Delete(j);
    }
}

TU_TESTS(test_smem_bytes, test_rules, test_rule_order, test_reason_text, test_reason_codes,
         test_order, test_family, test_l4_counts, test_head_dim_in_grid, test_compiled,
         test_edge_spaces, test_wgmma_family, test_wgmma_rules, test_two_families, test_wgmma_arch,
         test_h100_wgmma, test_family_evolve_files)
