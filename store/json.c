/* json.c - JSON building with one out-of-memory flag (contract: json.h). */
#include "json.h"

#include <math.h>

#include <cJSON.h>

#include "text.h"

cJSON *json_check(json_b *b, cJSON *item)
{
    if (!item)
        b->ok = 0;
    return item;
}

void json_add(json_b *b, cJSON *o, const char *key, cJSON *item)
{
    if (!item || !o || !cJSON_AddItemToObject(o, key, item)) {
        cJSON_Delete(item);
        b->ok = 0;
    }
}

void json_push(json_b *b, cJSON *arr, cJSON *item)
{
    if (!item || !arr || !cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        b->ok = 0;
    }
}

cJSON *json_obj(json_b *b, cJSON *parent, const char *key)
{
    cJSON *o = parent ? cJSON_AddObjectToObject(parent, key) : NULL;
    return json_check(b, o);
}

cJSON *json_arr(json_b *b, cJSON *parent, const char *key)
{
    cJSON *a = parent ? cJSON_AddArrayToObject(parent, key) : NULL;
    return json_check(b, a);
}

void json_str(json_b *b, cJSON *o, const char *key, const char *v)
{
    json_add(b, o, key, cJSON_CreateString(v ? v : ""));
}

void json_num(json_b *b, cJSON *o, const char *key, double v)
{
    json_add(b, o, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

void json_float(json_b *b, cJSON *o, const char *key, double v)
{
    char buf[40];
    if (!isfinite(v)) {
        json_add(b, o, key, cJSON_CreateNull());
        return;
    }
    text_float(v, buf, sizeof buf);
    json_add(b, o, key, cJSON_CreateRaw(buf));
}

void json_int_or_null(json_b *b, cJSON *o, const char *key, int v, int unknown)
{
    json_add(b, o, key, v == unknown ? cJSON_CreateNull() : cJSON_CreateNumber(v));
}

void json_null(json_b *b, cJSON *o, const char *key)
{
    json_add(b, o, key, cJSON_CreateNull());
}

void json_bool(json_b *b, cJSON *o, const char *key, int v)
{
    json_add(b, o, key, cJSON_CreateBool(v));
}

void json_tri(json_b *b, cJSON *o, const char *key, int v)
{
    json_add(b, o, key, v == 0 || v == 1 ? cJSON_CreateBool(v) : cJSON_CreateNull());
}

cJSON *json_done(json_b *b, cJSON *doc)
{
    if (b->ok && doc)
        return doc;
    cJSON_Delete(doc);
    b->ok = 0;
    return NULL;
}
