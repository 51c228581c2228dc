/* testrec.h - records for the unit tests: a record with every field set,
 * a small valid one, and a field-by-field comparison. Include after
 * <cmocka.h> and "store/record.h". */
#ifndef TESTREC_H
#define TESTREC_H

#include <cJSON.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A record with every field set to a value that is not its default, so a
 * field the encoder or decoder drops shows up as a difference. */
static inline void fill_full(record *r)
{
    memset(r, 0, sizeof *r);
    /* Key fields at their longest (size - 1). */
    memset(r->device, 'D', sizeof r->device - 1);
    memcpy(r->device, "NVIDIA ", 7);
    snprintf(r->problem, sizeof r->problem, "b4.h8.s512.d64.nc");
    snprintf(r->build, sizeof r->build, "3f9a0c1d2e4b5a69");
    snprintf(r->config, sizeof r->config, "d64.m128.n64.w4.s2.z1");
    snprintf(r->mode, sizeof r->mode, "cold");
    r->kind = RECORD_KIND_BASELINE;
    r->status = RECORD_ST_WRONG;
    snprintf(r->error, sizeof r->error, "rel_l2 \"too\" big,\tsee\\log\nline 2 \xc2\xb5s");
    r->time.median_us = 0.1 + 0.2; /* 0.30000000000000004: cJSON's printer drops the bit */
    r->time.min_us = 1.0 / 3.0;
    r->time.mean_us = 123456789.123456789;
    r->time.stdev_us = 4.9e-324; /* the smallest subnormal */
    r->time.cv = DBL_MAX;
    r->time.noise = 0.0078125;
    r->time.samples = 397;
    r->time.launches = 50;
    r->time.ci_lo_us = 0.25;
    r->time.ci_hi_us = 0.375 + 1e-17;
    r->time.round.n = 2;
    r->time.round.us[0] = 0.1 + 0.2;
    r->time.round.us[1] = 1e-300;
    r->clock.min_mhz = 1845;
    r->clock.median_mhz = 1860;
    r->clock.max_mhz = 1980;
    r->clock.ref_mhz = 1875;
    r->clock.blocks = 31;
    r->clock.discarded = 4;
    r->clock.below = 1;
    r->tflops = 312.75;
    r->gbps = 1e-300;
    r->rel_l2 = 2.5e-4;
    r->max_abs = 0.03125;
    r->regs = 168;
    r->smem_static = 4096;
    r->smem_dynamic = 9007199254740992L; /* 2^53 */
    r->local_bytes = 16;
    r->max_blocks_per_sm = 2;
    r->cta_cycles_mean = 81234.5;
    r->cta_cycles_max = 99999.25;
    r->waves = 1.0 + DBL_EPSILON;
    r->sm_imbalance = 1.0625;
    snprintf(r->gpu_uuid, sizeof r->gpu_uuid, "GPU-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901");
    r->cc = 90;
    r->sm_count = 132;
    snprintf(r->driver, sizeof r->driver, "550.54.15");
    snprintf(r->runtime, sizeof r->runtime, "12.4");
    r->sm_clock_mhz = 1980;
    r->mem_clock_mhz = 2619;
    r->throttle_reasons = 0xffffffffffffffffULL; /* not a double */
    r->throttled = 1;
    snprintf(r->host, sizeof r->host, "node-17.cluster");
    snprintf(r->space_name, sizeof r->space_name, "h100");
    snprintf(r->space_hash, sizeof r->space_hash, "0123456789abcdef");
    snprintf(r->version, sizeof r->version, "0.1.0");
    r->timestamp = 1717171717.123456;
}

/* A small valid record: device/problem/config vary with the arguments. A
 * baseline, so config is a free name (a kernel record's config must be a
 * config of its family, by its planner's rules: store/record.h). */
static inline void fill_simple(record *r, const char *device, const char *problem,
                               const char *config)
{
    memset(r, 0, sizeof *r);
    snprintf(r->device, sizeof r->device, "%s", device);
    snprintf(r->problem, sizeof r->problem, "%s", problem);
    snprintf(r->build, sizeof r->build, "b0");
    snprintf(r->config, sizeof r->config, "%s", config);
    snprintf(r->mode, sizeof r->mode, "hot");
    r->kind = RECORD_KIND_BASELINE;
    r->status = RECORD_ST_OK;
    r->time.median_us = 10.5;
    r->time.noise = 0.01;
    r->time.samples = 20;
    r->sm_clock_mhz = r->mem_clock_mhz = r->throttled = -1;
}

/* Same bits, or both NaN. */
static inline int same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

#define EQ_STR(f) assert_string_equal(a->f, b->f)
#define EQ_INT(f) assert_int_equal(a->f, b->f)
#define EQ_DBL(f)                                                                                  \
    do {                                                                                           \
        if (!same_double(a->f, b->f)) {                                                            \
            print_error("%s: %.17g != %.17g\n", #f, a->f, b->f);                                   \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

static inline void assert_record_equal(const record *a, const record *b)
{
    EQ_STR(device);
    EQ_STR(problem);
    EQ_STR(build);
    assert_string_equal(record_family(a), record_family(b)); /* "" reads back as "mma" */
    EQ_STR(config);
    EQ_STR(mode);
    EQ_INT(kind);
    EQ_INT(status);
    EQ_STR(error);
    EQ_DBL(time.median_us);
    EQ_DBL(time.min_us);
    EQ_DBL(time.mean_us);
    EQ_DBL(time.stdev_us);
    EQ_DBL(time.cv);
    EQ_DBL(time.noise);
    EQ_INT(time.samples);
    EQ_INT(time.launches);
    EQ_DBL(time.ci_lo_us);
    EQ_DBL(time.ci_hi_us);
    EQ_INT(time.round.n);
    for (int i = 0; i < a->time.round.n; i++)
        EQ_DBL(time.round.us[i]);
    EQ_INT(clock.min_mhz);
    EQ_INT(clock.median_mhz);
    EQ_INT(clock.max_mhz);
    EQ_INT(clock.ref_mhz);
    EQ_INT(clock.blocks);
    EQ_INT(clock.discarded);
    EQ_INT(clock.below);
    EQ_DBL(tflops);
    EQ_DBL(gbps);
    EQ_DBL(rel_l2);
    EQ_DBL(max_abs);
    EQ_INT(regs);
    EQ_INT(smem_static);
    EQ_INT(local_bytes);
    EQ_INT(max_blocks_per_sm);
    assert_true(a->smem_dynamic == b->smem_dynamic);
    EQ_DBL(cta_cycles_mean);
    EQ_DBL(cta_cycles_max);
    EQ_DBL(waves);
    EQ_DBL(sm_imbalance);
    EQ_STR(gpu_uuid);
    EQ_INT(cc);
    EQ_INT(sm_count);
    EQ_STR(driver);
    EQ_STR(runtime);
    EQ_INT(sm_clock_mhz);
    EQ_INT(mem_clock_mhz);
    assert_true(a->throttle_reasons == b->throttle_reasons);
    EQ_INT(throttled);
    EQ_STR(host);
    EQ_STR(space_name);
    EQ_STR(space_hash);
    EQ_STR(version);
    EQ_DBL(timestamp);
}

/* The record's JSON text, via cJSON's printer (caller frees). */
static inline char *json_text(const record *r)
{
    cJSON *j = record_to_json(r);
    assert_non_null(j);
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    assert_non_null(t);
    return t;
}

#endif /* TESTREC_H */
