/* The memo of fused kernels by key (dg_fused_memo.h): a hash table of 256
 * buckets, never shrunk; a lookup hashes nothing (the caller brings the
 * hash) and compares one key (about 1 KiB, memcmp) per entry of equal hash. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dg_fused_memo.h"

typedef struct memo_entry {
    struct memo_entry *next;
    uint64_t hash;
    dg_fused_key key;
    void *value[DG_FUSED_MEMO_SLOTS];
} memo_entry;

#define MEMO_BUCKETS 256

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static memo_entry *g_bucket[MEMO_BUCKETS];

/* The entry of key in its bucket, or NULL [g_mu held]. */
static memo_entry *entry_of(const dg_fused_key *key, uint64_t hash)
{
    memo_entry *e;
    for (e = g_bucket[hash % MEMO_BUCKETS]; e; e = e->next)
        if (e->hash == hash && memcmp(&e->key, key, sizeof(*key)) == 0)
            return e;
    return NULL;
}

void *dg_fused_memo_find(const dg_fused_key *key, uint64_t hash, int slot)
{
    memo_entry *e;
    void *v = NULL;
    if (slot < 0 || slot >= DG_FUSED_MEMO_SLOTS)
        return NULL;
    pthread_mutex_lock(&g_mu);
    e = entry_of(key, hash);
    if (e)
        v = e->value[slot];
    pthread_mutex_unlock(&g_mu);
    return v;
}

void dg_fused_memo_put(const dg_fused_key *key, uint64_t hash, int slot, void *value)
{
    memo_entry *e;
    if (slot < 0 || slot >= DG_FUSED_MEMO_SLOTS)
        return;
    pthread_mutex_lock(&g_mu);
    e = entry_of(key, hash);
    if (!e) {
        e = (memo_entry *)calloc(1, sizeof(*e));
        if (e) {
            e->hash = hash;
            memcpy(&e->key, key, sizeof(*key));
            e->next = g_bucket[hash % MEMO_BUCKETS];
            g_bucket[hash % MEMO_BUCKETS] = e;
        }
    }
    if (e)
        e->value[slot] = value;
    pthread_mutex_unlock(&g_mu);
}
