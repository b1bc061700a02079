/* C unit tests of the two layers under every array operation, on the CPU
 * backend with 1 and 4 virtual devices:
 *   - the enqueue helper (src/core/dg_enqueue.c): what a piece of work
 *     records about the memory it reads and writes, alone, in a group, and
 *     after it failed;
 *   - the dispatch file (src/core/dg_backend.c): the default each wrapper
 *     gives when the backend leaves an optional slot NULL, and operations
 *     that still give NumPy's values on such a backend.
 *
 * Usage: test_enqueue [seed]   (prints "N passed, M failed") */
#include "harness.h"
#include "core_fixture.h"
#include "dg_enqueue.h"
#include "dg_fft_run.h"
#include "dg_ufunc.h"

/* The slot of (dev, stream) in a dg_mem's records. */
static int slot(int dev, int stream)
{
    return dev * DG_NSTREAMS + stream;
}

/* How many slots of m record a write / a read. */
static int nwrites(const dg_mem *m)
{
    int i, n = 0;
    for (i = 0; i < m->nslots; i++)
        n += m->writes[i].seq != 0;
    return n;
}

static int nreads(const dg_mem *m)
{
    int i, n = 0;
    for (i = 0; i < m->nslots; i++)
        n += m->reads[i].seq != 0;
    return n;
}

/* A fill of the n doubles at dst with v. */
static dg_fill_desc fill_of(void *dst, int64_t n, double v)
{
    dg_fill_desc f;
    memset(&f, 0, sizeof f);
    f.kind = DG_FILL_CONST;
    f.dtype = DG_FLOAT64;
    f.ndim = 1;
    f.shape[0] = n;
    f.dst = (char *)dst;
    f.strides[0] = 8;
    f.gstep[0] = 1;
    f.gshape[0] = n;
    memcpy(f.value, &v, sizeof v);
    return f;
}

/* A write, then a read on another device, then a write again: each access
 * recorded at the position after its work; a write forgets what came
 * before it, which it waited for. */
static void test_single_records(void)
{
    const int d1 = g_be->ndevices - 1;
    dg_buffer *a = NULL, *b = NULL;
    dg_fill_desc f;
    dg_copy_desc cp;
    dg_access acc[2];
    double got[16];
    int i;
    CHECK_OK(dg_buffer_new(g_be, 0, 128, &a, err));
    CHECK_OK(dg_buffer_new(g_be, d1, 128, &b, err));
    if (!a || !b)
        return;
    /* the allocation is the first write, on the compute stream (none while
     * nothing was ever enqueued there) */
    EXPECT(nwrites(a->mem) == (a->mem->writes[slot(0, DG_STREAM_COMPUTE)].seq != 0));
    f = fill_of(a->ptr, 16, 2.5);
    acc[0] = dg_write(a);
    CHECK_OK(dg_enqueue(g_be, 0, DG_STREAM_COMPUTE, acc, 1, dg_work_fill(&f), err));
    EXPECT(nwrites(a->mem) == 1);
    EXPECT(a->mem->writes[slot(0, DG_STREAM_COMPUTE)].seq ==
           dg_be_pos(g_be, 0, DG_STREAM_COMPUTE).seq);
    /* b = a, on d1's compute stream reading a in place */
    cp = dg_copy_bytes(0, a->ptr, d1, b->ptr, 128);
    acc[0] = dg_read(a);
    acc[1] = dg_write(b);
    CHECK_OK(dg_enqueue(g_be, d1, DG_STREAM_COMPUTE, acc, 2, dg_work_copy(&cp), err));
    EXPECT(a->mem->reads[slot(d1, DG_STREAM_COMPUTE)].seq ==
           dg_be_pos(g_be, d1, DG_STREAM_COMPUTE).seq);
    EXPECT(b->mem->writes[slot(d1, DG_STREAM_COMPUTE)].seq ==
           dg_be_pos(g_be, d1, DG_STREAM_COMPUTE).seq && nwrites(b->mem) == 1);
    /* a written again: the read is forgotten, the new write alone is kept */
    f = fill_of(a->ptr, 16, -1.0);
    acc[0] = dg_write(a);
    CHECK_OK(dg_enqueue(g_be, 0, DG_STREAM_COMPUTE, acc, 1, dg_work_fill(&f), err));
    EXPECT(nreads(a->mem) == 0 && nwrites(a->mem) == 1);
    CHECK_OK(dg_buffer_sync(g_be, b, err));
    memcpy(got, b->ptr, sizeof got); /* host memory on the CPU backend */
    for (i = 0; i < 16; i++)
        EXPECT(got[i] == 2.5);
    dg_buffer_decref(g_be, a);
    dg_buffer_decref(g_be, b);
    expect_no_memory();
}

/* What a group of fills enqueues: one half of a buffer from each of two
 * devices. */
typedef struct halves {
    dg_fill_desc f[2];
    int dev[2];
} halves;

static dg_status fill_halves(dg_backend_i *be, void *ctx, dg_error *err)
{
    const halves *h = (const halves *)ctx;
    DG_CHECK(dg_be_fill(be, h->dev[0], DG_STREAM_COMPUTE, &h->f[0], err));
    return dg_be_fill(be, h->dev[1], DG_STREAM_COMPUTE, &h->f[1], err);
}

/* Part writes of one buffer from two devices in a group: both recorded (a
 * reader waits for both); a later whole write keeps only itself. */
static void test_group_part_writes(void)
{
    const int d1 = g_be->ndevices - 1;
    dg_buffer *a = NULL;
    dg_access acc[2];
    halves h;
    dg_fill_desc f;
    double got[16];
    int i;
    CHECK_OK(dg_buffer_new(g_be, 0, 128, &a, err));
    if (!a)
        return;
    h.dev[0] = 0;
    h.dev[1] = d1;
    h.f[0] = fill_of(a->ptr, 8, 1.0);
    h.f[1] = fill_of((char *)a->ptr + 64, 8, 2.0);
    acc[0] = dg_acc_on(a, DG_ACC_WRITE_PART, 0, DG_STREAM_COMPUTE);
    acc[1] = dg_acc_on(a, DG_ACC_WRITE_PART, d1, DG_STREAM_COMPUTE);
    CHECK_OK(dg_enqueue_group(g_be, acc, 2, fill_halves, &h, err));
    EXPECT(nwrites(a->mem) == (d1 == 0 ? 1 : 2));
    EXPECT(a->mem->writes[slot(d1, DG_STREAM_COMPUTE)].seq ==
           dg_be_pos(g_be, d1, DG_STREAM_COMPUTE).seq);
    EXPECT(dg_mem_read_waits(a->mem, 0, DG_STREAM_TRANSFER));
    CHECK_OK(dg_buffer_sync(g_be, a, err));
    memcpy(got, a->ptr, sizeof got);
    for (i = 0; i < 16; i++)
        EXPECT(got[i] == (i < 8 ? 1.0 : 2.0));
    f = fill_of(a->ptr, 16, 0.0);
    acc[0] = dg_write(a);
    CHECK_OK(dg_enqueue(g_be, 0, DG_STREAM_COMPUTE, acc, 1, dg_work_fill(&f), err));
    EXPECT(nwrites(a->mem) == 1 && !dg_mem_read_waits(a->mem, 0, DG_STREAM_COMPUTE));
    dg_buffer_decref(g_be, a);
    expect_no_memory();
}

static dg_status fail_work(dg_backend_i *be, int dev, int stream, void *ctx, dg_error *err)
{
    (void)be;
    (void)stream;
    (void)ctx;
    return dg_error_set(err, DG_ERR_DEVICE, dev, "work that fails");
}

/* Work that fails: its error comes back, and its write is recorded as a
 * part write at the position after it (the earlier write on another device
 * is not forgotten). */
static void test_failed_work(void)
{
    const int d1 = g_be->ndevices - 1;
    dg_buffer *a = NULL;
    dg_access acc;
    dg_fill_desc f;
    dg_error e = DG_ERROR_INIT;
    dg_work w;
    dg_pos p;
    CHECK_OK(dg_buffer_new(g_be, 0, 128, &a, err));
    if (!a)
        return;
    f = fill_of(a->ptr, 16, 3.0);
    acc = dg_write(a);
    CHECK_OK(dg_enqueue(g_be, d1, DG_STREAM_COMPUTE, &acc, 1, dg_work_fill(&f), err));
    w.run = fail_work;
    w.ctx = NULL;
    EXPECT(dg_enqueue(g_be, 0, DG_STREAM_TRANSFER, &acc, 1, w, &e) == DG_ERR_DEVICE);
    EXPECT(e.code == DG_ERR_DEVICE && strcmp(e.msg, "work that fails") == 0);
    p = dg_be_pos(g_be, 0, DG_STREAM_TRANSFER);
    EXPECT(p.seq == 0 || a->mem->writes[slot(p.dev, p.stream)].seq == p.seq);
    EXPECT(a->mem->writes[slot(d1, DG_STREAM_COMPUTE)].seq != 0);
    dg_buffer_decref(g_be, a);
    expect_no_memory();
}

/* A copy of the backend's table with every optional slot NULL (sharing its
 * implementation). */
static dg_backend_i bare_of(const dg_backend_i *be)
{
    dg_backend_i b = *be;
    b.reduce_parts = NULL;
    b.exchange = NULL;
    b.allreduce = NULL;
    b.can_access = NULL;
    b.sync_for = NULL;
    b.gemm = NULL;
    b.select = NULL;
    b.rows = NULL;
    b.route = NULL;
    b.sort = NULL;
    b.bytes_held = NULL;
    b.trim = NULL;
    b.reduce = NULL;
    b.scan = NULL;
    b.dense = NULL;
    b.fft = NULL;
    b.join = NULL;
    b.transport = NULL;
    b.gemm_wide = NULL;
    b.fused = NULL;
    b.search = NULL;
    b.count = NULL;
    b.watch = NULL;
    b.mark = NULL;
    return b;
}

/* Each wrapper's default for a slot the backend left NULL. */
static void test_dispatch_defaults(void)
{
    dg_backend_i bare = bare_of(g_be);
    dg_error e = DG_ERROR_INIT;
    dg_reduce_desc rd;
    dg_gemm_desc gd;
    dg_sort_desc sd;
    dg_dense_desc dd;
    dg_fft_desc fd;
    dg_search_desc qd;
    dg_count_desc cd;
    int64_t rows = 0;
    int done = 0, s;
    void *p = NULL;
    for (s = 0; s < DG_NSLOTS_OPTIONAL; s++) {
        EXPECT(!dg_be_has(&bare, (dg_be_slot)s));
        EXPECT(dg_be_has(g_be, (dg_be_slot)s) ==
               (s != DG_SLOT_BYTES_HELD && s != DG_SLOT_TRIM &&
                s != DG_SLOT_WATCH && /* the CPU backend's (its MPI waits are bounded) */
                s != DG_SLOT_MARK));  /* its waits wait for positions exactly */
    }
    EXPECT(dg_be_can_access(&bare, 0, g_be->ndevices - 1) == 0);
    EXPECT(dg_be_gemm_wide(&bare, DG_FLOAT64) == 0);
    CHECK_OK(dg_be_sync_for(&bare, dg_be_pos(&bare, 0, DG_STREAM_COMPUTE), 0, &done, err));
    EXPECT(done == 1);
    memset(&rd, 0, sizeof rd);
    CHECK_OK(dg_be_reduce_parts(&bare, 0, &rd, &rows, err));
    EXPECT(rows == 1);
    CHECK_OK(dg_be_alloc(&bare, 0, 4096, &p, err));
    EXPECT(dg_be_bytes_held(&bare, 0) == dg_be_bytes_in_use(&bare, 0));
    EXPECT(dg_be_bytes_in_use(&bare, 0) >= 4096);
    dg_be_release(&bare, 0, p);
    CHECK_OK(dg_be_trim(&bare, 0, err));
    CHECK_OK(dg_be_watch(&bare, 1.0, err)); /* nothing to watch */
    CHECK_OK(dg_be_mark(&bare, dg_be_pos(&bare, 0, DG_STREAM_COMPUTE), err));
    EXPECT(dg_be_transport(&bare, NULL, 0, &e) == DG_ERR_NOTIMPL);
    EXPECT(strcmp(e.msg, "the cpu backend cannot run as one process of several") == 0);
    dg_error_clear(&e);
    memset(&gd, 0, sizeof gd);
    EXPECT(dg_be_gemm(&bare, 0, DG_STREAM_COMPUTE, &gd, &e) == DG_ERR_NOTIMPL);
    EXPECT(strcmp(e.msg, "the cpu backend has no matrix products") == 0);
    dg_error_clear(&e);
    memset(&sd, 0, sizeof sd);
    EXPECT(dg_be_sort(&bare, 0, DG_STREAM_COMPUTE, &sd, &e) == DG_ERR_NOTIMPL);
    EXPECT(strcmp(e.msg, "the cpu backend cannot sort") == 0);
    dg_error_clear(&e);
    EXPECT(dg_be_reduce(&bare, 0, DG_STREAM_COMPUTE, &rd, &e) == DG_ERR_NOTIMPL);
    dg_error_clear(&e);
    memset(&dd, 0, sizeof dd);
    EXPECT(dg_be_dense(&bare, 0, DG_STREAM_COMPUTE, &dd, &e) == DG_ERR_NOTIMPL);
    EXPECT(strcmp(e.msg, "the cpu backend has no dense linear algebra") == 0);
    dg_error_clear(&e);
    memset(&fd, 0, sizeof fd);
    EXPECT(dg_be_fft(&bare, 0, DG_STREAM_COMPUTE, &fd, &e) == DG_ERR_NOTIMPL);
    EXPECT(strcmp(e.msg, "the cpu backend has no FFT") == 0);
    dg_error_clear(&e);
    {
        dg_fused_desc *zd = (dg_fused_desc *)calloc(1, sizeof *zd);
        EXPECT(zd != NULL);
        if (zd) {
            EXPECT(dg_be_fused(&bare, 0, DG_STREAM_COMPUTE, zd, &e) == DG_ERR_NOTIMPL);
            EXPECT(strcmp(e.msg, "the cpu backend cannot run fused elementwise chains") == 0);
            dg_error_clear(&e);
            free(zd);
        }
    }
    memset(&qd, 0, sizeof qd);
    EXPECT(dg_be_search(&bare, 0, DG_STREAM_COMPUTE, &qd, &e) == DG_ERR_NOTIMPL);
    EXPECT(strcmp(e.msg, "the cpu backend has no sorted searches") == 0);
    dg_error_clear(&e);
    memset(&cd, 0, sizeof cd);
    EXPECT(dg_be_count(&bare, 0, DG_STREAM_COMPUTE, &cd, &e) == DG_ERR_NOTIMPL);
    EXPECT(strcmp(e.msg, "the cpu backend has no bin counts") == 0);
    dg_error_clear(&e);
    EXPECT(dg_be_need(&bare, DG_SLOT_SELECT, &e) == DG_ERR_NOTIMPL &&
           strcmp(e.msg, "the cpu backend cannot compact arrays") == 0);
    dg_error_clear(&e);
    EXPECT(dg_be_need(g_be, DG_SLOT_SELECT, &e) == DG_OK && e.code == DG_OK);
    expect_no_memory();
}

/* dg_be_exchange without the slot: the bytes arrive, and both transfer
 * streams' positions afterwards cover the transfer. */
static void test_exchange_fallback(void)
{
    dg_backend_i bare = bare_of(g_be);
    const int n = g_be->ndevices;
    unsigned char *src[4] = {NULL}, *dst[4] = {NULL};
    dg_xfer x[4];
    int i, j, ok = 1;
    if (n < 2)
        return; /* no transfer between devices */
    for (i = 0; i < n; i++) {
        CHECK_OK(dg_be_alloc(&bare, i, 1000, (void **)&src[i], err));
        CHECK_OK(dg_be_alloc(&bare, i, 1000, (void **)&dst[i], err));
    }
    CHECK_OK(dg_be_sync_all(&bare, err));
    for (i = 0; i < n; i++) {
        for (j = 0; j < 1000; j++)
            src[i][j] = (unsigned char)(i * 31 + j);
        x[i].src_dev = i;
        x[i].src = src[i];
        x[i].dst_dev = (i + 1) % n;
        x[i].dst = dst[(i + 1) % n];
        x[i].nbytes = 1000;
    }
    CHECK_OK(dg_be_exchange(&bare, x, n, err));
    for (i = 0; i < n; i++) {
        CHECK_OK(dg_be_sync(&bare, dg_be_pos(&bare, i, DG_STREAM_TRANSFER), err));
        for (j = 0; j < 1000; j++)
            ok &= dst[(i + 1) % n][j] == (unsigned char)(i * 31 + j);
    }
    EXPECT(ok);
    for (i = 0; i < n; i++) {
        dg_be_release(&bare, i, src[i]);
        dg_be_release(&bare, i, dst[i]);
    }
    expect_no_memory();
}

/* On a backend without its optional slots, data moves between devices by
 * peer copies (no exchange group), partial sums are combined by loops (no
 * all-reduce) and a sum is reduced whole: NumPy's values still; without
 * reduce or fft, NotImplemented. */
static void test_ops_on_bare_backend(void)
{
    static const int64_t shape[1] = {1000};
    dg_backend_i *real = g_be, bare = bare_of(g_be);
    dg_plan_chunk la[2], lb[2], both[2];
    double x[1000], half[1000], got[1000], want = 0, v = 0;
    dg_array *a, *b = NULL, *t = NULL, *rep = NULL, *s = NULL, *r = NULL;
    dg_reduce_call rc;
    dg_fft_call fc;
    dg_error e = DG_ERROR_INIT;
    const int dts[3] = {DG_FLOAT64, DG_FLOAT64, DG_FLOAT64};
    int64_t hs[1] = {8};
    int i;
    for (i = 0; i < 1000; i++) {
        x[i] = (double)(i % 17) - 8.0;
        half[i] = x[i] / 2;
        want += x[i];
    }
    g_be = &bare; /* the arrays keep their backend */
    la[0] = rows_chunk(0, 1, shape, 0, 700);
    la[1] = rows_chunk(1, 1, shape, 700, 1000);
    lb[0] = rows_chunk(1, 1, shape, 0, 300);
    lb[1] = rows_chunk(0, 1, shape, 300, 1000);
    a = array_from(DG_FLOAT64, 1, shape, la, 2, x);
    CHECK_OK(dg_array_reshard(a, lb, 2, &b, err));
    if (b) {
        array_to(b, got);
        EXPECT(memcmp(got, x, sizeof got) == 0);
    }
    /* two chunks of partial sums, each holding x / 2 */
    both[0] = rows_chunk(0, 1, shape, 0, 1000);
    both[1] = rows_chunk(1, 1, shape, 0, 1000);
    CHECK_OK(dg_array_empty(g_be, DG_FLOAT64, 1, shape, both, 2, DG_MODE_SUM, &t, err));
    if (t)
        CHECK_OK(dg_array_scatter(t, (const char *)half, hs, err));
    if (t)
        CHECK_OK(dg_array_change_mode(t, DG_MODE_REPLICA, &rep, err));
    if (rep) {
        array_to(rep, got);
        EXPECT(memcmp(got, x, sizeof got) == 0);
    }
    memset(&rc, 0, sizeof rc);
    rc.kind = DG_RED_LOOP;
    rc.loop = dg_loop_find(DG_UF_add, dts);
    rc.red[0] = 1;
    bare.reduce = real->reduce;
    if (b)
        CHECK_OK(dg_array_reduce(b, &rc, &s, NULL, err));
    if (s) {
        array_to(s, &v);
        EXPECT(v == want);
    }
    bare.reduce = NULL;
    EXPECT(dg_array_reduce(a, &rc, &r, NULL, &e) == DG_ERR_NOTIMPL && r == NULL);
    dg_error_clear(&e);
    /* without fft, the up-front check's message and no result */
    memset(&fc, 0, sizeof fc);
    fc.kind = DG_FFT_R2C;
    fc.forward = 1;
    fc.scale = 1.0;
    fc.rank = 1;
    fc.n[0] = shape[0];
    EXPECT(dg_array_fft(a, &fc, &r, &e) == DG_ERR_NOTIMPL && r == NULL &&
           strcmp(e.msg, "the cpu backend has no FFT") == 0);
    dg_error_clear(&e);
    dg_array_decref(s);
    dg_array_decref(rep);
    dg_array_decref(t);
    dg_array_decref(b);
    dg_array_decref(a);
    g_be = real;
    expect_no_memory();
}

static const test_case g_tests[] = {
    {"single_records", test_single_records},
    {"group_part_writes", test_group_part_writes},
    {"failed_work", test_failed_work},
    {"dispatch_defaults", test_dispatch_defaults},
    {"exchange_fallback", test_exchange_fallback},
    {"ops_on_bare_backend", test_ops_on_bare_backend},
};

int main(int argc, char **argv)
{
    return run_tests_on_devices(g_tests, sizeof g_tests / sizeof g_tests[0], argc, argv);
}
