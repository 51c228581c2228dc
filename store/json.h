/* json.h - the one way the project builds JSON output (seeds, topk --json,
 * the tuner formats, `fasweep eval --json`): cJSON adders that remember the
 * first allocation failure in one place (json_b.ok), so a builder reads as
 * the document it builds and its caller checks once, at the end
 * (json_done), and prints either the whole document or one error, never a
 * partial one.
 *
 * The null rule, the same for every output: a quantity that is unknown is
 * JSON null, never -1 or 0. A double is unknown when it is not finite
 * (NaN: no number); an int is unknown when it equals the sentinel its
 * field documents (json_int_or_null: e.g. -1 for the clock MHz in
 * store/record.h). A known 0 stays 0.
 */
#ifndef STORE_JSON_H
#define STORE_JSON_H

struct cJSON;

typedef struct json_b {
    int ok; /* 1 until an allocation failed (start with JSON_B_INIT) */
} json_b;
#define JSON_B_INIT                                                                                \
    {                                                                                              \
        1                                                                                          \
    }

/* ITEM, noting a NULL one (out of memory) in b. */
struct cJSON *json_check(json_b *b, struct cJSON *item);
/* Adds ITEM under KEY to O; a NULL ITEM or O, or a failed add (ITEM
 * freed), marks b failed. */
void json_add(json_b *b, struct cJSON *o, const char *key, struct cJSON *item);
/* Appends ITEM to the array ARR; the same failure rule. */
void json_push(json_b *b, struct cJSON *arr, struct cJSON *item);
/* A new object / array under KEY of PARENT (NULL on failure, noted). */
struct cJSON *json_obj(json_b *b, struct cJSON *parent, const char *key);
struct cJSON *json_arr(json_b *b, struct cJSON *parent, const char *key);

void json_str(json_b *b, struct cJSON *o, const char *key, const char *v);
/* A number; null when v is not finite (unknown). */
void json_num(json_b *b, struct cJSON *o, const char *key, double v);
/* A number that stays a float in the text ("1.0", text_float); null when
 * not finite. */
void json_float(json_b *b, struct cJSON *o, const char *key, double v);
/* An int; null when v == unknown (the field's documented sentinel). */
void json_int_or_null(json_b *b, struct cJSON *o, const char *key, int v, int unknown);
void json_null(json_b *b, struct cJSON *o, const char *key);
void json_bool(json_b *b, struct cJSON *o, const char *key, int v);
/* A yes/no/unknown: true for 1, false for 0, null for anything else (-1). */
void json_tri(json_b *b, struct cJSON *o, const char *key, int v);

/* DOC when nothing failed, else NULL with DOC freed. */
struct cJSON *json_done(json_b *b, struct cJSON *doc);

#endif /* STORE_JSON_H */
