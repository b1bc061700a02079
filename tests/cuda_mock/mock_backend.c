/* The stand-ins of mock_backend.h. */
#include <stdlib.h>
#include <string.h>

#include "mock_backend.h"

int mock_bumps;

int64_t mock_rnd(int64_t n)
{
    static uint64_t x = 0x9E3779B97F4A7C15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (int64_t)(x % (uint64_t)n);
}

cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaSetDevice(int device) { (void)device; return cudaSuccess; }

dg_status cu_fail(dg_error *err, cudaError_t e, int dev, size_t bytes, const char *what)
{
    (void)bytes;
    return dg_error_set(err, DG_ERR_DEVICE, dev, "%s failed (%d)", what, (int)e);
}
int cu_error_sticky(cudaError_t e) { (void)e; return 0; }
cudaError_t cu_sticky_error(void) { return cudaSuccess; }
dg_status cu_set_device(cu_be *b, int dev, dg_error *err)
{
    (void)b, (void)dev, (void)err;
    return DG_OK;
}
dg_status cu_check_stream(cu_be *b, int dev, int stream, const char *op, dg_error *err)
{
    (void)b, (void)stream, (void)op;
    return dev == 0 ? DG_OK : dg_error_set(err, DG_ERR_INTERNAL, dev, "no such device");
}
void cu_bump(cu_be *b, int dev, int stream)
{
    (void)b, (void)dev, (void)stream;
    mock_bumps++;
}

static dg_status mock_alloc(dg_backend_i *be, int dev, size_t n, void **p, dg_error *err)
{
    (void)be;
    *p = aligned_alloc(256, (n + 255) / 256 * 256);
    return *p ? DG_OK : dg_error_set(err, DG_ERR_DEVICE_NOMEM, dev, "out of memory");
}
static void mock_release(dg_backend_i *be, int dev, void *p)
{
    (void)be, (void)dev;
    free(p);
}

void mock_backend_init(cu_be *b, cu_dev *dev)
{
    memset(dev, 0, sizeof *dev);
    memset(b, 0, sizeof *b);
    b->ndev = 1;
    b->devs = dev;
    b->iface.impl = b;
    b->iface.ndevices = 1;
    b->iface.alloc = mock_alloc;
    b->iface.release = mock_release;
}
