"""Copies between host arrays and devices made in pieces (as long copies
are): every layout and region against NumPy, the progress lines of
dgarray.config.progress, and Ctrl-C between pieces, which stops the copy
with KeyboardInterrupt and leaves no memory behind and existing arrays
intact.  Pieces are made small here (_core._piece_bytes) so that small
arrays take many."""
import _thread
import signal
import sys
import threading

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for


def values(dtype, shape):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape) * 100
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("shape", [(37, 11), (1, 45, 7), (29, 3, 5), (2, 3, 41), (6,), (0, 4),
                                   ()], ids=str)
@pytest.mark.parametrize("dtype", ["i1", "f8", "c16"])
def test_pieces_match_numpy(dtype, shape, ndev, pieces, no_leak):
    """Pieces of one row or a few: every layout's chunks get exactly their
    elements, and get() of the whole array and of strided regions returns
    NumPy's values."""
    x = values(dtype, shape)
    pieces(3 * x.itemsize * (x.size // shape[0] if shape and shape[0] else 1))
    for name, m in maps_for(x.shape, ndev):
        d = dg.asarray(x) if m is None else dg.distributed_array(x, m)
        np.testing.assert_array_equal(d.get(), x, err_msg=name)
        if x.ndim >= 2 and x.size:
            np.testing.assert_array_equal(d[1::3, ::-2].get(), x[1::3, ::-2], err_msg=name)
        del d
    # a host array that is not contiguous
    y = np.asfortranarray(x)[::-1]
    np.testing.assert_array_equal(dg.asarray(y).get(), y)


def test_progress_lines(ndev, pieces, progress, capsys):
    """"always": a line per piece on sys.stderr, rewritten in place and ended
    by one with "done"; False and True (a copy well under a second): none."""
    x = values("f8", (64, 128))
    m = {d: slice(16 * d, 16 * (d + 1)) for d in range(ndev)}
    m[ndev - 1] = slice(16 * (ndev - 1), None)
    pieces(8 * 128)
    dg.config.progress = "always"
    d = dg.distributed_array(x, m)
    y = d.get()
    err = capsys.readouterr().err
    np.testing.assert_array_equal(y, x)
    for what in (f"host array to {ndev} device{'s' if ndev > 1 else ''}",
                 "devices to host array"):
        lines = [s for s in err.split("\r") if s.startswith(f"dgarray: {what}:")]
        assert len(lines) >= 10, err
        assert "(100%)" in lines[-1] and lines[-1].endswith(", done\n"), lines[-1]
        assert lines[0].endswith("GB/s"), lines[0]
    for setting in (False, True):
        dg.config.progress = setting
        np.testing.assert_array_equal(dg.distributed_array(x, m).get(), x)
        assert capsys.readouterr().err == ""


@pytest.mark.parametrize("shape", [(2, 4096), (3, 2, 2048)], ids=str)
def test_parts_cut_the_longest_axis(shape, pieces, progress, capsys):
    """Leading axes shorter than the number of parts: each part is still
    about a piece (the slabs cut the longest axis), one line per part."""
    x = values("f4", shape)
    pieces(x.nbytes // 16)
    dg.config.progress = "always"
    d = dg.distributed_array(x, {0: slice(None)})
    lines = capsys.readouterr().err.split("\r")[1:]
    assert len(lines) == 16, lines
    assert all(f"({100 * k // 16:3d}%)" in lines[k - 1] for k in range(1, 17)), lines
    dg.config.progress = False
    np.testing.assert_array_equal(d.get(), x)


class _FailingStderr:
    def __init__(self, exc):
        self.exc = exc

    def write(self, s):
        raise self.exc

    def flush(self):
        pass


def test_progress_stream_errors(pieces, progress, monkeypatch, no_leak):
    """A stream that fails to write (ValueError: closed) does not fail the
    copy; SystemExit from it (a signal handler's sys.exit) is not dropped."""
    x = values("f8", (40, 8))
    pieces(8 * 8)
    dg.config.progress = "always"
    monkeypatch.setattr(sys, "stderr", _FailingStderr(ValueError("closed")))
    np.testing.assert_array_equal(dg.asarray(x).get(), x)
    monkeypatch.setattr(sys, "stderr", _FailingStderr(SystemExit(3)))
    with pytest.raises(SystemExit):
        dg.asarray(x)


def test_progress_setting(progress):
    dg.config.progress = "always"
    assert dg.config.progress == "always" and "progress='always'" in repr(dg.config)
    dg.config.progress = 0
    assert dg.config.progress is False
    with pytest.raises(ValueError, match='True, False or "always"'):
        dg.config.progress = "sometimes"
    assert dg.config.progress is False


class _InterruptOnWrite:
    """A stderr whose first progress line interrupts the main thread."""

    def __init__(self):
        self.text = []

    def write(self, s):
        self.text.append(s)
        if len(self.text) == 1:
            _thread.interrupt_main()
        return len(s)

    def flush(self):
        pass


def test_ctrl_c_between_pieces(pieces, progress, no_leak, monkeypatch):
    """The first progress line sends the interrupt: the copy stops at the
    end of that piece with KeyboardInterrupt and an "interrupted" line; the
    array being made is gone (no device memory left), and an array being
    read is unchanged and readable again."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        x = values("f8", (200, 64))
        pieces(8 * 64)
        for make in (lambda: dg.asarray(x), lambda: a.get()):
            dg.config.progress = False
            a = dg.asarray(x)
            dg.config.progress = "always"
            err = _InterruptOnWrite()
            monkeypatch.setattr(sys, "stderr", err)
            with pytest.raises(KeyboardInterrupt):
                make()
            monkeypatch.undo()
            text = "".join(err.text)
            assert text.endswith(", interrupted\n") and "(100%)" not in text, text
            dg.config.progress = False
            np.testing.assert_array_equal(a.get(), x)
            del a
    finally:
        signal.signal(signal.SIGINT, old)
