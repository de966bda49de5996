"""File I/O from Python against the reference readers and writers:
safetensors (the `safetensors` package), GGUF (the `gguf` package), .npy
(NumPy) and the JSON descriptor."""

import json

import gguf
import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import tessel


def test_safetensors_both_ways(tmp_path, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.integers(-5, 5, (7,)).astype(np.int64)
    path = tmp_path / "x.safetensors"
    tessel.save_safetensors(path, {"a": tessel.asarray(a), "b": b}, metadata={"k": "v"})
    back = load_file(str(path))
    np.testing.assert_array_equal(back["a"], a)
    np.testing.assert_array_equal(back["b"], b)
    assert tessel.load_safetensors_metadata(path) == {"k": "v"}

    other = tmp_path / "y.safetensors"
    save_file({"w": a, "h": a.astype(np.float16)}, str(other))
    loaded = tessel.load_safetensors(other)
    assert sorted(loaded) == ["h", "w"]
    np.testing.assert_array_equal(np.asarray(loaded["w"]), a)
    assert loaded["h"].dtype == tessel.float16
    with pytest.raises(tessel.IoError) as e:
        loaded["w"][0, 0] = 1.0  # mapped read-only
    assert e.value.code == "E3002"
    writable = tessel.load_safetensors(other, writable=True)
    writable["w"][0, 0] = 1.0
    np.testing.assert_array_equal(load_file(str(other))["w"], a)  # copy-on-write


def test_safetensors_errors(tmp_path):
    with pytest.raises(tessel.IoError):
        tessel.load_safetensors(tmp_path / "missing.safetensors")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{bad}")
    with pytest.raises(tessel.FormatError) as e:
        tessel.load_safetensors(bad)
    assert e.value.code == "E3001"
    with pytest.raises(TypeError):
        tessel.save_safetensors(tmp_path / "x.safetensors", [tessel.ones(2)])


def test_gguf_both_ways(tmp_path, rng):
    a = rng.standard_normal((4, 8)).astype(np.float32)
    path = tmp_path / "x.gguf"
    tessel.save_gguf(path, {"w": tessel.asarray(a)},
                     {"general.architecture": "llama", "llama.block_count": 2,
                      "scale": 0.5, "flag": True, "ids": [1, 2, 3]})
    reader = gguf.GGUFReader(str(path))
    tensor = reader.tensors[0]
    assert tensor.name == "w"
    np.testing.assert_array_equal(np.asarray(tensor.data).reshape(4, 8), a)
    fields = reader.fields
    assert fields["llama.block_count"].types == [gguf.GGUFValueType.INT32]
    assert fields["scale"].types == [gguf.GGUFValueType.FLOAT32]

    tensors, metadata = tessel.load_gguf(path)
    np.testing.assert_array_equal(np.asarray(tensors["w"]), a)
    assert metadata["general.architecture"] == "llama"
    assert metadata["llama.block_count"] == 2 and metadata["flag"] is True
    assert metadata["ids"] == [1, 2, 3] and metadata["scale"] == 0.5

    # A file the gguf package writes, with a block-quantised tensor.
    other = tmp_path / "q.gguf"
    writer = gguf.GGUFWriter(str(other), "llama")
    a = rng.standard_normal((4, 64)).astype(np.float32)  # whole Q8_0 blocks
    q = gguf.quants.quantize(a, gguf.GGMLQuantizationType.Q8_0)
    writer.add_tensor("q", q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tensors, metadata = tessel.load_gguf(other)
    assert tensors["q"].dtype == tessel.q8_0 and tensors["q"].shape == (4, 64)
    expected = gguf.quants.dequantize(q, gguf.GGMLQuantizationType.Q8_0)
    np.testing.assert_array_equal(np.asarray(tensors["q"].astype(tessel.float32)), expected)
    assert metadata["general.architecture"] == "llama"


def test_npy_both_ways(tmp_path, rng):
    a = rng.standard_normal((2, 3, 4))
    path = tmp_path / "a.npy"
    tessel.save_npy(path, tessel.asarray(a).transpose(0, 2))
    np.testing.assert_array_equal(np.load(path), a.transpose(2, 1, 0))
    other = tmp_path / "b.npy"
    np.save(other, a.astype(np.int16))
    np.testing.assert_array_equal(np.asarray(tessel.load_npy(other)), a.astype(np.int16))


def test_descriptor_round_trip(tmp_path):
    t = tessel.arange(6, dtype=tessel.int32).reshape(2, 3)
    text = tessel.describe(t)
    d = json.loads(text)
    assert d["shape"]["dimensions"] == [2, 3]
    data = tmp_path / "t.bin"
    data.write_bytes(np.asarray(t).tobytes())
    back = tessel.tensor_from_descriptor(text, data)
    assert back.tolist() == [[0, 1, 2], [3, 4, 5]]
