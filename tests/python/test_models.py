"""tessel.CausalLM and tessel.Tokenizer on the fixture checkpoints of
tests/oracle/model_fixtures.py (tiny random Llama, Qwen2 and Qwen3 made by
transformers, and llama.cpp's GGUF conversions), against the reference
outputs stored beside them: transformers' logits for the prompt (within
1e-4 of their scale: float32 sums in another order; the C++ oracle test
explains the bound), its greedy generation (the same ids), and the
`tokenizers` package's ids for the prompt text. ctest provides the
fixtures (TESSEL_MODEL_FIXTURES); run alone, the tests skip without them.
"""

import json
import os

import numpy as np
import pytest

import tessel

# ctest sets TESSEL_MODEL_FIXTURES (and fails here if they are missing);
# without it, pytest alone skips this file.
ROOT = os.environ.get("TESSEL_MODEL_FIXTURES", "")
pytestmark = pytest.mark.skipif(not ROOT, reason="TESSEL_MODEL_FIXTURES is not set "
                                "(ctest's oracle.model_fixtures_make makes the fixtures)")


@pytest.fixture(scope="module")
def index():
    with open(os.path.join(ROOT, "expected", "index.json")) as f:
        return json.load(f)


def rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def test_hf_directories_match_transformers(index):
    for name, entry in index["models"].items():
        path = os.path.join(ROOT, entry["hf_dir"])
        lm = tessel.CausalLM.load(path)
        want = np.load(os.path.join(ROOT, entry["transformers_logits"]))
        got = np.asarray(lm.logits(entry["prompt_ids"]))
        assert got.shape == want.shape and rel(got, want) < 1e-4, (name, rel(got, want))
        batched = np.asarray(lm.logits(tessel.asarray([entry["prompt_ids"]])))
        np.testing.assert_array_equal(batched[0], got)
        assert lm.config["model_type"] in ("llama", "qwen2", "qwen3")


def test_gguf_f32_files_match_transformers(index):
    for key, g in index["ggufs"].items():
        if g["type"] != "f32":
            continue
        lm = tessel.CausalLM.load(os.path.join(ROOT, g["file"]))
        hf = index["models"][g["model"]]
        want = np.load(os.path.join(ROOT, hf["transformers_logits"]))
        got = np.asarray(lm.logits(g["prompt_ids"]))
        assert rel(got, want) < 1e-4, (key, rel(got, want))
        # mmap=False reads the same weights into memory: the same logits.
        resident = tessel.CausalLM.load(os.path.join(ROOT, g["file"]), mmap=False)
        np.testing.assert_array_equal(np.asarray(resident.logits(g["prompt_ids"])), got)
    with pytest.raises(tessel.ConfigError, match="mmap=True"):
        tessel.CausalLM.load(os.path.join(ROOT, g["file"]), writable=True, mmap=False)


def test_greedy_generation_and_tokenizer_match(index):
    for name in ("llama", "qwen2", "qwen3"):
        entry = index["models"][name]
        path = os.path.join(ROOT, entry["hf_dir"])
        lm = tessel.CausalLM.load(path)
        gen = entry["generate"]
        got = lm.generate(gen["prompt_ids"], max_new_tokens=len(gen["new_ids"]), temperature=0)
        assert got == gen["new_ids"], name
        tok = tessel.Tokenizer.load(path)
        assert tok.encode(index["prompt_text"]) == entry["prompt_ids"], name
        assert tok.adds_bos == entry["add_bos"]
        assert tok.decode(tok.encode(index["prompt_text"], add_special=False)) == \
            index["prompt_text"]


def test_random_model_saves_and_loads(tmp_path):
    config = {"model_type": "qwen3", "vocab_size": 64, "hidden_size": 32,
              "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 32}
    lm = tessel.CausalLM(config, seed=3)
    ids = [1, 5, 9, 2]
    logits = np.asarray(lm.logits(ids))
    assert logits.shape == (4, 64)
    lm.save(str(tmp_path))
    again = tessel.CausalLM.load(str(tmp_path))
    # The same weights, now mapped from the file: the products may run
    # another kernel (the mapping's alignment), so float32 sums in another
    # order.
    np.testing.assert_allclose(np.asarray(again.logits(ids)), logits, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(again.next_token_logits(ids)), logits[-1],
                               rtol=1e-5, atol=1e-6)
    state = again.state_dict()
    assert state["model.embed_tokens.weight"].shape == (64, 32)
    # Sampling with a seed repeats itself.
    a = lm.generate(ids, max_new_tokens=5, temperature=0.8, top_k=10, seed=7)
    assert a == lm.generate(ids, max_new_tokens=5, temperature=0.8, top_k=10, seed=7)
    # A KV cache in 16 bits runs the same loop; other dtypes are refused.
    assert len(lm.generate(ids, max_new_tokens=5, temperature=0, cache_type="f16")) == 5
    assert len(lm.generate(ids, max_new_tokens=5, temperature=0,
                           cache_type=tessel.bfloat16)) == 5
    with pytest.raises(tessel.DTypeError):
        lm.generate(ids, max_new_tokens=2, cache_type="int8")
    # A quantised cache needs heads of whole 32-element blocks.
    with pytest.raises(tessel.ShapeError, match="head_dim 8"):
        lm.generate(ids, max_new_tokens=2, cache_type="q8_0")
    wide = tessel.CausalLM(dict(config, hidden_size=64, num_attention_heads=2,
                                num_key_value_heads=1, head_dim=64), seed=3)
    assert len(wide.generate(ids, max_new_tokens=5, temperature=0, cache_type="q8_0")) == 5
    with pytest.raises(tessel.ConfigError):
        tessel.CausalLM({"model_type": "gpt2"})
    with pytest.raises(tessel.DTypeError):
        lm.logits(tessel.ones((3,)))
