"""Zero-copy exchange with NumPy and PyTorch: DLPack both ways (versioned
and legacy capsules), the buffer protocol and __array__; mutations seen on
both sides; lifetimes safe in every deletion order."""

import ctypes
import gc
import sys

import ml_dtypes
import numpy as np
import pytest
import torch

import tessel


def test_numpy_to_tessel_shares_memory():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = tessel.from_dlpack(a)
    a[1, 2] = -7
    assert t[1, 2].item() == -7
    t[0, 0] = 99
    assert a[0, 0] == 99
    assert t.strides == (4, 1)


def test_strided_numpy_view_keeps_strides():
    a = np.arange(24, dtype=np.int64).reshape(4, 6)[::2, 1::2]
    t = tessel.from_dlpack(a)
    assert t.shape == (2, 3) and t.strides == (12, 2)
    np.testing.assert_array_equal(np.asarray(t), a)


def test_tessel_to_numpy_shares_memory():
    t = tessel.arange(6, dtype=tessel.float64).reshape(2, 3)
    a = np.asarray(t)
    assert a.ctypes.data == np.asarray(t).ctypes.data
    t[1, 1] = 0.5
    assert a[1, 1] == 0.5
    a[0, 0] = 3
    assert t[0, 0].item() == 3
    transposed = np.asarray(t.T)
    assert transposed.strides == (8, 24)
    np.testing.assert_array_equal(transposed, a.T)


def test_numpy_from_dlpack_of_tessel():
    t = tessel.arange(5, dtype=tessel.int32)
    a = np.from_dlpack(t)
    t[0] = 17
    assert a[0] == 17


def test_torch_both_ways():
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = tessel.from_dlpack(x)
    x[0, 1] = 5
    assert t[0, 1].item() == 5
    y = torch.from_dlpack(t)
    y[1, 2] = -1
    assert t[1, 2].item() == -1 and x[1, 2].item() == -1
    b = tessel.asarray([1.0, 2.0]).astype(tessel.bfloat16)
    assert torch.from_dlpack(b).dtype == torch.bfloat16


def test_dlpack_versions():
    t = tessel.ones(3)
    assert t.__dlpack_device__() == (1, 0)
    legacy = t.__dlpack__()
    assert "dltensor" in repr(legacy) and "versioned" not in repr(legacy)
    versioned = t.__dlpack__(max_version=(1, 1))
    assert "dltensor_versioned" in repr(versioned)
    old = t.__dlpack__(max_version=(0, 8))
    assert "versioned" not in repr(old)
    assert tessel.from_dlpack(versioned).tolist() == [1, 1, 1]
    assert tessel.from_dlpack(legacy).tolist() == [1, 1, 1]


def test_consumed_capsule_is_refused():
    capsule = tessel.ones(2).__dlpack__(max_version=(1, 0))
    tessel.from_dlpack(capsule)
    with pytest.raises(tessel.FormatError) as e:
        tessel.from_dlpack(capsule)
    assert e.value.code == "E3001"


def test_unsupported_device_requests():
    t = tessel.ones(2)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError):
        t.__dlpack__(stream=1)
    with pytest.raises(tessel.DeviceError):
        tessel.from_dlpack(np.ones(2), device="cuda")
    with pytest.raises(tessel.DTypeError):
        tessel.from_dlpack(object())


def test_copy_flags():
    a = np.zeros(3, np.float32)
    t = tessel.from_dlpack(a, copy=True)
    a[0] = 1
    assert t[0].item() == 0
    c = tessel.ones(2).__dlpack__(max_version=(1, 0), copy=True)
    assert tessel.from_dlpack(c).tolist() == [1, 1]


def test_lifetimes_in_every_deletion_order():
    # The producer goes first: the consumer keeps its memory.
    a = np.arange(1000, dtype=np.float64)
    base_refs = sys.getrefcount(a)
    t = tessel.from_dlpack(a)
    assert sys.getrefcount(a) > base_refs
    del t
    gc.collect()
    assert sys.getrefcount(a) == base_refs  # the DLPack deleter ran
    t = tessel.from_dlpack(a)
    del a
    gc.collect()
    assert t[999].item() == 999
    # tessel -> NumPy, tessel tensor deleted first.
    t = tessel.arange(100, dtype=tessel.int64)
    n = np.asarray(t)
    del t
    gc.collect()
    assert n[99] == 99
    # A memoryview outliving its tensor.
    t = tessel.arange(10, dtype=tessel.int16)
    m = memoryview(t)
    del t
    gc.collect()
    assert m[9] == 9
    m.release()
    # An unconsumed capsule frees its tensor when collected.
    capsule = tessel.ones(1 << 16).__dlpack__(max_version=(1, 0))
    del capsule
    gc.collect()


def test_buffer_protocol():
    t = tessel.arange(6, dtype=tessel.float32).reshape(2, 3)
    m = memoryview(t)
    assert m.format == "f" and m.shape == (2, 3) and m.strides == (12, 4)
    assert not m.readonly
    m.release()
    mt = memoryview(t.T)
    assert mt.strides == (4, 12) and not mt.c_contiguous
    mt.release()
    # bytes() reads the strided buffer in C order; a consumer that takes no
    # strides (ctypes) is refused a strided view instead of misreading it.
    assert bytes(t.T) == np.arange(6, dtype=np.float32).reshape(2, 3).T.tobytes()
    with pytest.raises((BufferError, TypeError)):
        (ctypes.c_float * 6).from_buffer(t.T)
    view = (ctypes.c_float * 6).from_buffer(t)
    view[0] = 9.0
    assert t[0, 0].item() == 9.0
    assert memoryview(tessel.zeros(0)).nbytes == 0
    with pytest.raises(BufferError):
        memoryview(tessel.ones(2, dtype=tessel.bfloat16))


def test_numpy_reads_bfloat16_and_float8_through_ml_dtypes():
    t = tessel.asarray([1.0, -2.5, 0.15625]).astype(tessel.bfloat16)
    a = np.asarray(t)
    assert a.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(a.astype(np.float32), [1.0, -2.5, 0.15625])
    f8 = np.asarray(tessel.asarray([0.5, 448.0]).astype(tessel.float8_e4m3fn))
    assert f8.dtype == ml_dtypes.float8_e4m3fn
    with pytest.raises(tessel.DTypeError):
        np.asarray(tessel.zeros(32).astype(tessel.q8_0))


def test_read_only_numpy_is_copied():
    a = np.arange(4, dtype=np.int32)
    a.flags.writeable = False
    t = tessel.asarray(a)
    t[0] = 9
    assert a[0] == 0


def test_array_dtype_and_copy_arguments():
    t = tessel.arange(3, dtype=tessel.int32)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    c = t.__array__(copy=True)
    c[0] = 5
    assert t[0].item() == 0
