"""NCCL's own all-to-all, through CuPy's NCCL binding: the ceiling that the
reshard goals are set against, measured beside dgarray whatever transfer
setting dgarray runs with (DGARRAY_TRANSFER=copy does not use NCCL)."""


def all_to_all_seconds(total, reps=5, warm=1):
    """Best seconds of an all-to-all of `total` bytes over every GPU (each
    holds total / ngpu and sends an equal block to every GPU, itself
    included), as grouped ncclSend / ncclRecv as nccl-tests runs it; None
    without CuPy's NCCL or with fewer than two GPUs."""
    try:
        import cupy as cp
        from cupy.cuda import nccl
    except Exception:  # noqa: BLE001 - no peer, no figure
        return None
    from _timing import best_of
    ngpu = cp.cuda.runtime.getDeviceCount()
    if ngpu < 2:
        return None
    comms = nccl.NcclCommunicator.initAll(list(range(ngpu)))
    per = total // ngpu
    blk = per // ngpu
    sb, rb, streams = [], [], []
    for d in range(ngpu):
        with cp.cuda.Device(d):
            sb.append(cp.ones(per // 4, cp.float32))
            rb.append(cp.empty(per // 4, cp.float32))
            streams.append(cp.cuda.Stream(non_blocking=True))

    def a2a():
        nccl.groupStart()
        for d in range(ngpu):
            for p in range(ngpu):
                comms[d].send(sb[d].data.ptr + p * blk, blk // 4, nccl.NCCL_FLOAT32, p,
                              streams[d].ptr)
                comms[d].recv(rb[d].data.ptr + p * blk, blk // 4, nccl.NCCL_FLOAT32, p,
                              streams[d].ptr)
        nccl.groupEnd()
        for s in streams:
            s.synchronize()
    t = best_of(a2a, reps, warm)
    del sb, rb
    for c in comms:
        c.destroy()
    cp.get_default_memory_pool().free_all_blocks()
    return t
