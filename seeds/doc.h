/* doc.h - the seeds documents of a ranking (schema "fasweep.seeds/1",
 * every key: docs/seeds.md and docs/seeds.schema.json).
 *
 * One document per group: schema, generated_at, fasweep_version, device,
 * problem (its text, and its numbers when the text parses), mode, counts
 * (ok, failed, variants_not_ranked), the best baseline, and the seeds
 * fastest first, each with its rank, tie_with_first, family, variant,
 * config (the family's axes) and paths, config_text, metrics, errors,
 * resources, cycles, clock, provenance, source (source.h), the
 * correctness gate it passed and the commands that re-score it (rescore:
 * each an argv and its shell line, shell.h). Unknown figures are null,
 * never 0 (store/json.h).
 */
#ifndef DOC_H
#define DOC_H

#include <stddef.h>

#include "rank.h"

struct cJSON;

/* The whole ranking as one JSON document, the `topk --json` form:
 * {"schema": "fasweep.topk/1", "groups": [one seeds document per group]},
 * each group's generated_at now; NULL when out of memory. */
struct cJSON *doc_json(const rank_result *r);

/* The seeds document of g (a seeds file's content), its sources told by
 * src (NULL: none) and generated_at the given text (doc_now); NULL when
 * out of memory. */
struct cJSON *doc_seeds(const rank_group *g, const rank_sources *src, const char *generated_at);

/* The time now as a document's generated_at (ISO 8601, UTC). */
void doc_now(char *buf, size_t n);

#endif /* DOC_H */
