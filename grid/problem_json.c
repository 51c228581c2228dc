/* problem_json.c - a space's problems and modes as JSON (contract: problem_json.h). */
#include "problem_json.h"

#include <cJSON.h>
#include <string.h>

void space_problem_json(json_b *b, cJSON *o, const space_problem *sp)
{
    char text[SPACE_PROBLEM_TEXT_MAX];
    space_problem_format(sp, text, sizeof text);
    json_str(b, o, "problem", text);
    const char *const keys[] = {"batch", "heads", "kv_heads", "seq_len", "head_dim"};
    const int v[] = {sp->batch, sp->heads, sp->kv_heads, sp->seq_len, sp->head_dim};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        json_num(b, o, keys[i], v[i]);
    json_bool(b, o, "causal", sp->causal);
    json_str(b, o, "dtype", space_dtype_name(sp->dtype));
    json_num(b, o, "flops", space_problem_flops(sp));
    json_num(b, o, "bytes", space_problem_bytes(sp));
}

void space_problems_json(json_b *b, cJSON *arr, const space *s)
{
    for (int i = 0; b->ok && i < s->n_problems; i++) {
        cJSON *o = json_check(b, cJSON_CreateObject());
        space_problem_json(b, o, &s->problems[i]);
        json_push(b, arr, o);
    }
}

void space_modes_json(json_b *b, cJSON *arr, const space *s)
{
    for (int i = 0; b->ok && i < s->measure.n_modes; i++) {
        int seen = 0;
        const cJSON *m;
        cJSON_ArrayForEach(m, arr) seen |=
            cJSON_IsString(m) && !strcmp(m->valuestring, s->measure.modes[i]);
        if (!seen)
            json_push(b, arr, json_check(b, cJSON_CreateString(s->measure.modes[i])));
    }
}
