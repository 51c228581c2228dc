/* task.c - records' start and provenance, FASWEEP_INJECT (contract: task.h). */
#include "task.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../kernels/family.h"
#include "../store/text.h"

#ifndef FASWEEP_VERSION
#define FASWEEP_VERSION "unknown"
#endif

void task_record_init(record *r, const task_device *dev, const space_problem *p, const fa_config *c,
                      const char *mode)
{
    memset(r, 0, sizeof *r);
    text_copy_utf8(r->device, sizeof r->device, dev->name);
    space_problem_format(p, r->problem, sizeof r->problem);
    text_copy_utf8(r->build, sizeof r->build, dev->build);
    /* The family through the table: the engine names none itself. */
    const fa_family *f = fa_family_of(c);
    text_copy_utf8(r->family, sizeof r->family, f ? f->name : "?");
    fa_config_format(c, r->config, sizeof r->config);
    text_copy_utf8(r->mode, sizeof r->mode, mode);
    r->kind = RECORD_KIND_KERNEL;
    r->status = RECORD_ST_CRASHED;
    r->time.noise = NAN;
    r->time.ci_lo_us = r->time.ci_hi_us = NAN;
    r->rel_l2 = r->max_abs = NAN;
    r->cta_cycles_mean = r->cta_cycles_max = r->waves = r->sm_imbalance = NAN;
    text_copy_utf8(r->gpu_uuid, sizeof r->gpu_uuid, dev->uuid);
    r->cc = dev->cc;
    r->sm_count = dev->sm_count;
    text_copy_utf8(r->driver, sizeof r->driver, dev->driver);
    text_copy_utf8(r->runtime, sizeof r->runtime, dev->runtime);
    r->sm_clock_mhz = r->mem_clock_mhz = -1;
    r->throttled = -1;
    r->clock.min_mhz = r->clock.median_mhz = r->clock.max_mhz = r->clock.ref_mhz = -1;
    r->clock.below = -1;
}

void task_record_variant(record *r, const task_variant *v)
{
    if (!v->build[0])
        return;
    text_copy_utf8(r->build, sizeof r->build, v->build);
    text_copy_utf8(r->kernel_path, sizeof r->kernel_path, v->path);
    text_copy_utf8(r->kernel_hash, sizeof r->kernel_hash, v->hash);
}

void task_provenance(record *r, const char *host, const char *space_name, const char *space_hash)
{
    text_copy_utf8(r->host, sizeof r->host, host);
    text_copy_utf8(r->space_name, sizeof r->space_name, space_name);
    text_copy_utf8(r->space_hash, sizeof r->space_hash, space_hash);
    text_copy_utf8(r->version, sizeof r->version, FASWEEP_VERSION);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r->timestamp = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int task_inject_parse(const char *text, task_inject_rule *rules, char *err, size_t errlen)
{
    if (!text || !*text)
        return 0;
    char buf[1024];
    if (strlen(text) >= sizeof buf) {
        snprintf(err, errlen, "FASWEEP_INJECT is longer than %zu bytes; unset it or shorten it",
                 sizeof buf - 1);
        return -1;
    }
    strcpy(buf, text);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        task_inject kind = TASK_INJECT_NONE;
        if (colon && colon - tok == 5 && strncmp(tok, "fault", 5) == 0)
            kind = TASK_INJECT_FAULT;
        else if (colon && colon - tok == 4 && strncmp(tok, "hang", 4) == 0)
            kind = TASK_INJECT_HANG;
        fa_config cfg;
        if (kind == TASK_INJECT_NONE || fa_config_parse(colon + 1, &cfg) != 0) {
            snprintf(err, errlen,
                     "FASWEEP_INJECT: '%s' is not fault:CONFIG or hang:CONFIG (CONFIG as "
                     "`fasweep list` prints it, e.g. d64.m64.n64.w4.s1.z0); fix or unset it",
                     tok);
            return -1;
        }
        if (n == TASK_MAX_INJECT) {
            snprintf(err, errlen, "FASWEEP_INJECT names more than %d configs", TASK_MAX_INJECT);
            return -1;
        }
        rules[n].cfg = cfg;
        rules[n++].kind = kind;
    }
    return n;
}

task_inject task_inject_for(const task_inject_rule *rules, int n, const fa_config *c)
{
    for (int i = 0; i < n; i++)
        if (fa_config_cmp(&rules[i].cfg, c) == 0)
            return rules[i].kind;
    return TASK_INJECT_NONE;
}

const char *const task_checks[] = {"stream", "gate",  "repeat", "tails", "magnitude",
                                   "inputs", "timed", "floor",  NULL};

const char *task_check_of(const char *error)
{
    for (int i = 0; error && task_checks[i]; i++) {
        const size_t n = strlen(task_checks[i]);
        if (strncmp(error, task_checks[i], n) == 0 && error[n] == ':')
            return task_checks[i];
    }
    return NULL;
}
