"""Affine quantisation from Python against PyTorch's quantize_per_tensor /
quantize_per_channel (rounding half to even and clamping) and the NumPy
formulas of the format standard; block types through astype against the
gguf package's NumPy dequantisers. Exact: the same float32 divisions and
roundings on both sides."""

import numpy as np
import pytest

import tessel

torch = pytest.importorskip("torch")


def test_per_tensor_matches_torch(rng):
    x = (rng.standard_normal((4, 9)) * 3).astype(np.float32)
    x[0, :4] = [0.25, -0.75, 2.5, -2.5]  # ties: half to even
    for dtype, tdtype in ((tessel.int8, torch.qint8), (tessel.uint8, torch.quint8)):
        zero = 0 if dtype == tessel.int8 else 128
        q = tessel.quantize_affine(x, dtype, tessel.asarray(np.float32(0.5)),
                                   tessel.asarray(np.array(zero, np.int32)))
        ref = torch.quantize_per_tensor(torch.from_numpy(x), 0.5, zero, tdtype)
        np.testing.assert_array_equal(np.asarray(q), ref.int_repr().numpy())
        back = tessel.dequantize_affine(q, tessel.asarray(np.float32(0.5)),
                                        tessel.asarray(np.array(zero, np.int32)))
        np.testing.assert_array_equal(np.asarray(back), ref.dequantize().numpy())


def test_per_channel_matches_torch(rng):
    x = (rng.standard_normal((3, 5)) * 2).astype(np.float32)
    scales = np.array([0.1, 0.05, 0.2], np.float32)
    zeros = np.array([0, 3, -2], np.int32)
    q = tessel.quantize_affine(x, tessel.int8, scales, zeros, axis=0)
    ref = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(scales.astype(np.float64)),
                                     torch.from_numpy(zeros.astype(np.int64)), 0, torch.qint8)
    np.testing.assert_array_equal(np.asarray(q), ref.int_repr().numpy())


def test_per_group_and_choice_follow_the_formulas(rng):
    x = rng.standard_normal((2, 8)).astype(np.float32)
    scale, zero = tessel.choose_affine_quantization(x, tessel.int4, group_size=4)
    assert zero is None and scale.shape == (2, 2)
    # Symmetric, as PyTorch's MinMaxObserver: max|x| / ((qmax - qmin) / 2).
    s = np.abs(x).reshape(2, 2, 4).max(axis=-1) / 7.5
    np.testing.assert_allclose(np.asarray(scale), s, rtol=1e-7)
    q = tessel.quantize_affine(x, tessel.int4, scale, group_size=4)
    expected = np.clip(np.round(x / np.repeat(s, 4, axis=1).astype(np.float32)), -8, 7)
    np.testing.assert_array_equal(np.asarray(q.astype(tessel.int8)), expected)
    scale, zero = tessel.choose_affine_quantization(x, tessel.uint8, symmetric=False)
    assert zero is not None and zero.dtype.is_integral
    with pytest.raises(tessel.ShapeError):
        tessel.quantize_affine(x, tessel.int8, np.ones(3, np.float32), axis=1)
    with pytest.raises(tessel.DTypeError):
        tessel.quantize_affine(x, tessel.float16, np.float32(1.0))


def test_block_types_round_trip_through_astype(rng):
    gguf = pytest.importorskip("gguf")
    from gguf import quants

    x = rng.standard_normal((4, 256)).astype(np.float32)
    for dtype, qtype in ((tessel.q8_0, gguf.GGMLQuantizationType.Q8_0),
                         (tessel.q4_0, gguf.GGMLQuantizationType.Q4_0)):
        q = tessel.asarray(x).astype(dtype)
        assert q.dtype == dtype and q.shape == x.shape
        back = np.asarray(q.astype(tessel.float32))
        ref = quants.dequantize(quants.quantize(x, qtype), qtype)
        np.testing.assert_array_equal(back, ref)
