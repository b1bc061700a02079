/* The memo of fused kernels by key (src/core/dg_fused_memo.c): a key put
 * for a slot is found for that slot only, by equal bytes (not by hash
 * alone), among many keys of one bucket, and from several threads. */
#include <pthread.h>
#include <string.h>

#include "dg_fused_memo.h"
#include "harness.h"

/* A key whose bytes depend on i (its loops and one value's dtype). */
static void key_make(dg_fused_key *k, int i)
{
    memset(k, 0, sizeof(*k));
    k->nstep = 2;
    k->nval = 3;
    k->step[0].loop = i;
    k->step[1].loop = i / 7;
    k->val[2].dtype = (int8_t)(i % 14);
}

static void test_slots(void)
{
    dg_fused_key a, b;
    int x = 1, y = 2;
    key_make(&a, 100000);
    EXPECT(dg_fused_memo_find(&a, 5, 0) == NULL);
    dg_fused_memo_put(&a, 5, 0, &x);
    memcpy(&b, &a, sizeof b); /* an equal key, another copy */
    EXPECT(dg_fused_memo_find(&b, 5, 0) == &x);
    EXPECT(dg_fused_memo_find(&b, 5, 1) == NULL);
    dg_fused_memo_put(&b, 5, 1, &y);
    EXPECT(dg_fused_memo_find(&a, 5, 0) == &x && dg_fused_memo_find(&a, 5, 1) == &y);
    /* slots out of range: nothing remembered, nothing found */
    dg_fused_memo_put(&a, 5, -1, &y);
    dg_fused_memo_put(&a, 5, DG_FUSED_MEMO_SLOTS, &y);
    EXPECT(dg_fused_memo_find(&a, 5, -1) == NULL);
    EXPECT(dg_fused_memo_find(&a, 5, DG_FUSED_MEMO_SLOTS) == NULL);
}

static void test_equal_hash_other_key(void)
{
    dg_fused_key a, b;
    int x = 1;
    key_make(&a, 200000);
    key_make(&b, 200000);
    b.val[63].hi = 1; /* one byte apart, the same hash given */
    dg_fused_memo_put(&a, 77, 3, &x);
    EXPECT(dg_fused_memo_find(&b, 77, 3) == NULL);
    EXPECT(dg_fused_memo_find(&a, 78, 3) == NULL); /* another hash: another entry */
}

static void test_one_bucket(void)
{
    static int v[1000];
    dg_fused_key k;
    int i;
    for (i = 0; i < 1000; i++) {
        key_make(&k, 300000 + i);
        dg_fused_memo_put(&k, (uint64_t)i * 256, 7, &v[i]); /* all in one bucket */
    }
    for (i = 0; i < 1000; i++) {
        key_make(&k, 300000 + i);
        if (dg_fused_memo_find(&k, (uint64_t)i * 256, 7) != &v[i])
            failf("key %d not found", i);
    }
}

static int g_val[4][500];

static void *worker(void *arg)
{
    const int t = (int)(intptr_t)arg;
    dg_fused_key k;
    int i;
    for (i = 0; i < 500; i++) {
        key_make(&k, 400000 + 1000 * t + i);
        dg_fused_memo_put(&k, (uint64_t)(i % 13), t, &g_val[t][i]);
        key_make(&k, 400000 + 1000 * t + i / 2);
        (void)dg_fused_memo_find(&k, (uint64_t)(i / 2 % 13), t);
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[4];
    dg_fused_key k;
    int t, i;
    for (t = 0; t < 4; t++)
        EXPECT(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0);
    for (t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    for (t = 0; t < 4; t++)
        for (i = 0; i < 500; i++) {
            key_make(&k, 400000 + 1000 * t + i);
            if (dg_fused_memo_find(&k, (uint64_t)(i % 13), t) != &g_val[t][i])
                failf("thread %d's key %d not found", t, i);
        }
}

static const test_case g_tests[] = {
    {"slots", test_slots},
    {"equal_hash_other_key", test_equal_hash_other_key},
    {"one_bucket", test_one_bucket},
    {"threads", test_threads},
};

int main(int argc, char **argv)
{
    return run_tests(g_tests, sizeof g_tests / sizeof g_tests[0], argc, argv);
}
