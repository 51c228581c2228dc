/* teststore.h - raw LMDB access and a fresh directory per test, for the
 * store's unit tests. Include after <cmocka.h>. */
#ifndef TESTSTORE_H
#define TESTSTORE_H

#include <lmdb.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/testutil.h"

/* Writes key=val into a named database of the store at dir with raw LMDB,
 * as a damaged or future store would have it. */
static inline void raw_put(const char *dir, const char *db, const char *key, const char *val)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 2), 0);
    assert_int_equal(mdb_env_open(env, dir, 0, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, db, MDB_CREATE, &dbi), 0);
    MDB_val k = {strlen(key), (void *)key}, v = {strlen(val), (void *)val};
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

/* The value of key in a named database, read with raw LMDB (caller frees;
 * NULL when absent). */
static inline char *raw_get(const char *dir, const char *db, const char *key)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    char *out = NULL;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 2), 0);
    assert_int_equal(mdb_env_open(env, dir, MDB_RDONLY, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, db, 0, &dbi), 0);
    MDB_val k = {strlen(key), (void *)key}, v;
    if (mdb_get(txn, dbi, &k, &v) == 0)
        out = strndup(v.mv_data, v.mv_size);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return out;
}

static inline int setup_dir(void **state)
{
    char *dir = malloc(512);
    if (!dir || !tu_tmpdir(dir, 512)) {
        free(dir);
        return -1;
    }
    *state = dir;
    return 0;
}

static inline int teardown_dir(void **state)
{
    tu_rmtree(*state);
    free(*state);
    unsetenv("FASWEEP_STORE_MAPSIZE");
    return 0;
}

/* A test that gets a fresh directory (*state) and loses it afterwards. */
#define STORE_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup_dir, teardown_dir)

#endif /* TESTSTORE_H */
