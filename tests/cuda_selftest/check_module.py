"""Checks the extension module dgarray._cuda on its own (no dgarray core):
device_count(), and a backend made and destroyed through the capsule.

    python3 tests/cuda_selftest/check_module.py    (after build_ext --inplace)

Without a GPU the backend must fail cleanly (DG_ERR_DEVICE) and device_count()
must be 0; with GPUs it must start on all of them and stop again."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import dgarray._cuda as cuda  # noqa: E402


class DgError(ctypes.Structure):
    """dg_error of src/core/dg_status.h."""
    _fields_ = [("code", ctypes.c_int), ("device", ctypes.c_int),
                ("backend_code", ctypes.c_long), ("bytes", ctypes.c_size_t),
                ("msg", ctypes.c_char * 512)]


def main():
    n = cuda.device_count()
    print("device_count:", n, "runtime:", cuda.runtime_version())
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    create = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                              ctypes.POINTER(DgError))(
        get(cuda.backend_create, b"dgarray._cuda.backend_create"))
    be = ctypes.c_void_p()
    err = DgError(0, -1, 0, 0, b"")
    st = create(0, ctypes.byref(be), ctypes.byref(err))
    if n == 0:
        assert st == 6 and err.code == 6, (st, err.msg)  # DG_ERR_DEVICE
        print("no GPU: backend_create failed cleanly:", err.msg.decode())
        return
    assert st == 0, (st, err.msg)
    # dg_backend_i: int version; const char *name; int ndevices; ... destroy last
    class Head(ctypes.Structure):
        _fields_ = [("version", ctypes.c_int), ("name", ctypes.c_char_p),
                    ("ndevices", ctypes.c_int)]
    head = Head.from_address(be.value)
    print("backend:", head.name.decode(), "devices:", head.ndevices)
    assert head.ndevices == n
    # destroy is the last slot of the table: 3 slots after the 3 optional ones
    ptr = ctypes.sizeof(ctypes.c_void_p)
    nslots_before_destroy = 4 + 11 + 3  # version..impl (4 words), 11 slots, 3 optional
    destroy_addr = ctypes.c_void_p.from_address(be.value + ptr * nslots_before_destroy).value
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(destroy_addr)(be)
    print("backend destroyed")


if __name__ == "__main__":
    main()
