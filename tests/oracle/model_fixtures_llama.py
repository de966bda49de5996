"""llama.cpp's half of the model fixtures (model_fixtures.py runs it).

Runs in the project's .venv, where llama-cpp-python is built:

    .venv/bin/python tests/oracle/model_fixtures_llama.py OUT_DIR

After model_fixtures.py has written the HF dirs, the converted GGUFs and
expected/index.json, this quantises the f32 GGUFs (llama_model_quantize,
2 threads: Q4_0 and Q4_K_M), then for every GGUF records llama.cpp's
tokenisation of the prompt text, its logits for the prompt ids of the index
(f32 KV cache, 2 threads, n_ctx 256, n_batch 256, flash attention off: the
llama-cpp-python default) and its perplexity on expected/perplexity.txt by
the rule of model_fixtures.py's docstring, with a context of exactly n_ctx
(128) tokens and n_batch = n_ctx, as llama-perplexity -c 128 runs. It adds
all this to the index."""
import ctypes
import contextlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_fixtures as mf  # noqa: E402

QUANT_FTYPES = {"q4_0": 2, "q4_k_m": 15}  # LLAMA_FTYPE_MOSTLY_Q4_0, _Q4_K_M


@contextlib.contextmanager
def stderr_to(path):
    """llama.cpp logs through fd 2; keep it in a file."""
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def quantize(llama_cpp, src, dst, ftype, log):
    p = llama_cpp.llama_model_quantize_default_params()
    p.ftype = ftype
    p.nthread = 2
    with stderr_to(log):
        rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(p))
    if rc != 0:
        with open(log) as f:
            raise RuntimeError(f"llama_model_quantize {dst} failed ({rc}):\n{f.read()[-2000:]}")


def open_model(llama_cpp, path, n_ctx):
    return llama_cpp.Llama(model_path=path, logits_all=True, type_k=0, type_v=0, n_threads=2,
                           n_threads_batch=2, n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx,
                           verbose=False)


def logits_for(llm, ids):
    llm.reset()  # the next eval drops the whole KV cache
    llm.eval(ids)
    return np.array(llm.scores[:llm.n_tokens], dtype=np.float32)


def main():
    out_dir = os.path.abspath(sys.argv[1])
    import llama_cpp
    out = mf.paths(out_dir)
    index = mf.load_index(out_dir)
    log = os.path.join(out["expected"], "llama_cpp.log")
    for name, types in mf.GGUFS.items():
        for t in types:
            if t in QUANT_FTYPES:
                quantize(llama_cpp, mf.gguf_path(out_dir, name, "f32"),
                         mf.gguf_path(out_dir, name, t), QUANT_FTYPES[t], log)
    with open(os.path.join(out_dir, index["perplexity"]["text"]), encoding="utf-8") as f:
        ppl_text = f.read()
    n_ctx = index["perplexity"]["n_ctx"]
    for key, g in index["ggufs"].items():
        path = os.path.join(out_dir, g["file"])
        model = index["models"][g["model"]]
        llm = open_model(llama_cpp, path, 256)
        g["prompt_ids"] = llm.tokenize(index["prompt_text"].encode(), add_bos=True,
                                       special=False)
        logits = logits_for(llm, model["prompt_ids"])
        g["llama_cpp_logits"] = os.path.join("expected", f"{key}.llama_cpp.logits.npy")
        np.save(os.path.join(out_dir, g["llama_cpp_logits"]), logits)
        llm.close()

        llm = open_model(llama_cpp, path, n_ctx)
        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        add_bos = bool(llama_cpp.llama_vocab_get_add_bos(vocab))
        tokens = llm.tokenize(ppl_text.encode(), add_bos=True, special=False)
        value, nll = mf.perplexity(tokens, n_ctx, llm.token_bos() if add_bos else None,
                                   lambda chunk: logits_for(llm, chunk))
        llm.close()
        rel = os.path.join("expected", f"{key}.llama_cpp.nll.npy")
        np.save(os.path.join(out_dir, rel), nll)
        g["llama_cpp_perplexity"] = {"ppl": value, "add_bos": add_bos, "n_tokens": len(tokens),
                                     "tokens_match_transformers": tokens == np.load(
                                         os.path.join(out_dir, model["transformers_perplexity"]
                                                      ["ids"])).tolist(),
                                     "nll": rel}
    with open(out["index"], "w") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()
