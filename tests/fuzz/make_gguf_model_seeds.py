"""Seeds of the fuzz_gguf_model corpus: tiny llama, qwen2 and qwen3 GGUF
files (one layer, hidden 4, a six-token gpt2 vocabulary), written by the
`gguf` package so that they load in tessel. Usage: make_gguf_model_seeds.py
OUT_DIR (run with .venv's python)."""
import os
import sys

import gguf
import numpy as np


def write(path, arch, tied, bias, qk_norm):
    rng = np.random.default_rng(len(path))
    w = gguf.GGUFWriter(path, arch)
    hidden, heads, kv, head, ffn, vocab = 4, 2, 1, 2, 8, 6
    w.add_block_count(1)
    w.add_context_length(16)
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(10000.0)
    if arch == "qwen3":
        w.add_key_length(head)
        w.add_value_length(head)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(["a", "b", "ab", "Ġ", "Ġa", "<|endoftext|>"])
    w.add_token_types([1, 1, 1, 1, 1, 3])
    w.add_token_merges(["a b", "Ġ a"])
    w.add_eos_token_id(5)

    def t(name, *shape):
        w.add_tensor(name, rng.standard_normal(shape).astype(np.float32))
    t("token_embd.weight", vocab, hidden)
    t("output_norm.weight", hidden)
    if not tied:
        t("output.weight", vocab, hidden)
    t("blk.0.attn_norm.weight", hidden)
    t("blk.0.attn_q.weight", heads * head, hidden)
    t("blk.0.attn_k.weight", kv * head, hidden)
    t("blk.0.attn_v.weight", kv * head, hidden)
    if bias:
        t("blk.0.attn_q.bias", heads * head)
        t("blk.0.attn_k.bias", kv * head)
        t("blk.0.attn_v.bias", kv * head)
    if qk_norm:
        t("blk.0.attn_q_norm.weight", head)
        t("blk.0.attn_k_norm.weight", head)
    t("blk.0.attn_output.weight", hidden, heads * head)
    t("blk.0.ffn_norm.weight", hidden)
    t("blk.0.ffn_gate.weight", ffn, hidden)
    t("blk.0.ffn_up.weight", ffn, hidden)
    t("blk.0.ffn_down.weight", hidden, ffn)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "seed_llama.gguf"), "llama", False, False, False)
    write(os.path.join(out, "seed_qwen2.gguf"), "qwen2", True, True, False)
    write(os.path.join(out, "seed_qwen3.gguf"), "qwen3", True, False, True)


if __name__ == "__main__":
    main()
