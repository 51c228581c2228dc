/* problem_json.h - a space's problems and modes as JSON: the one description
 * of a problem the scripts read (`fasweep plan --json`'s "problems", `fasweep
 * problem --json`, and `geninst --check` before anything is
 * built: scripts/run_default_sweep.sh) instead of parsing a space
 * themselves. Built with store/json.h's adders (failures noted in b).
 */
#ifndef PROBLEM_JSON_H
#define PROBLEM_JSON_H

#include "../store/json.h"
#include "space.h"

/* The fields of one problem into o: its canonical text "problem"
 * (space_problem_format: the store's key field), batch, heads, kv_heads,
 * seq_len, head_dim, causal, dtype, flops (space_problem_flops: halved for
 * causal) and bytes (space_problem_bytes: the minimum DRAM traffic). */
void space_problem_json(json_b *b, struct cJSON *o, const space_problem *sp);

/* Every problem of s (space_problem_json), in the space's order, appended
 * to the array arr (plan --json's "problems"; geninst --check's, over
 * several spaces). */
void space_problems_json(json_b *b, struct cJSON *arr, const space *s);

/* The modes s measures (measure.modes, in order), appended to the array arr
 * as their names, each only when arr does not hold it yet (plan --json's
 * "modes"; geninst --check's, over several spaces: one space's modes as
 * they are). */
void space_modes_json(json_b *b, struct cJSON *arr, const space *s);

#endif /* PROBLEM_JSON_H */
