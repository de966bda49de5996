"""Differential tests of tessel's convolution, pooling, normalisation,
attention and RoPE against PyTorch (CPU) on random cases: every layout
(NCHW/OIHW and NHWC/HWCF), groups, dilation, stride, padding, transposed
convolution; attention with causal masks (bottom-right and explicit
offsets), additive and boolean masks broadcast over batch and heads,
grouped-query heads, query length != key length (KV cache) and softcap;
RoPE in both styles with large positions and partial rotary dims; swiglu
and silu_backward (aten's) element-wise; the fused backward passes of
layer and RMS norm and the
gradients of every f32 attention case against PyTorch's autograd; affine
quantisation against quantize_per_tensor / quantize_per_channel (exact
codes: round half to even, clamping), the MinMax observers' scales and zero
points (exact), and NumPy's formula for int4/uint4/int16 per group and for
dequantisation. Fixed seed; one op_tool process runs every case.

The reference is PyTorch in f64 on the same (f32 or bf16-exact) inputs.
Tolerances, per output element:
- f32 sums of K products: |err| <= 2e-5 * sum|terms| + 1e-6, where
  sum|terms| is the same op applied to |inputs| (f32 rounding of K
  products and partial sums is at most ~K * 6e-8 relative to it; the
  bound leaves room for K up to a few hundred);
- bf16 outputs: additionally 2^-8 * |want| (one bf16 rounding of the
  result; products of bf16 inputs are exact in f32);
- attention, norms and RoPE (outputs of order 1): 2e-5 absolute plus
  1e-5 relative; pooling: max exact, average 1e-6 relative;
- attention's gradients (the fused f32 backward): the same bound. The
  largest error seen is 1.3e-6: dP - rowsum(dO * O) cancels two f32 dot
  products of up to 72 terms, and the sums over up to ~440 keys keep that
  at order 1e-6 for inputs of order 1.
"""
import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import ml_dtypes
import numpy as np
import torch
import torch.nn.functional as F

RNG = np.random.default_rng(20261201)
# PyTorch notes that its own padding='same' copies the input; not our concern.
warnings.filterwarnings("ignore", message="Using padding='same'")
BF16 = np.dtype(ml_dtypes.bfloat16)


class Batch:
    def __init__(self, workdir):
        self.dir = workdir
        self.cases = []

    def save(self, array, narrow=None):
        path = os.path.join(self.dir, f"t{len(self.cases)}_{np.random.default_rng().integers(1 << 40)}.npy")
        steps = []
        if narrow == "bf16":
            array = array.astype(BF16).astype(np.float32)  # exact bf16 values
            steps.append(["cast", "bf16"])
        np.save(path, np.ascontiguousarray(array))
        return {"file": path, "view": steps}, array

    def add(self, op, attrs, arrays, reference, kind, narrow=None, outputs=1):
        """arrays: inputs (numpy); reference(*arrays) -> list of (want, absref)."""
        inputs, stored = [], []
        for a in arrays:
            float_input = a.dtype.kind == "f"
            spec, value = self.save(a, narrow if float_input else None)
            inputs.append(spec)
            stored.append(value)
        outs = [os.path.join(self.dir, f"t{len(self.cases)}_out{i}.npy") for i in range(outputs)]
        self.cases.append(({"op": op, "attrs": attrs, "inputs": inputs, "outputs": outs},
                           stored, reference, kind, narrow))


def t64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


# ---- references ----

def conv_ref(x, w, b, attrs, transpose):
    """PyTorch on channels-first f64 tensors; returns (want, |terms| sum)."""
    last = attrs.get("layout") == "last"
    nd = x.ndim - 2
    if last:  # (N, S..., C) -> (N, C, S...); weights (K..., A, B) -> (B, A, K...)
        x = np.moveaxis(x, -1, 1)
        w = np.transpose(w, [nd + 1, nd] + list(range(nd)))
    stride = attrs.get("stride", [1]) * (nd if len(attrs.get("stride", [1])) == 1 else 1)
    dil = attrs.get("dilation", [1]) * (nd if len(attrs.get("dilation", [1])) == 1 else 1)
    groups = attrs.get("groups", 1)
    pad = attrs.get("padding", [0])
    if len(pad) == 1:
        pad = pad * nd
    def run(xx, ww, bb):
        if transpose:
            fn = F.conv_transpose1d if nd == 1 else F.conv_transpose2d
            return fn(xx, ww, bb, stride=stride, padding=pad[:nd],
                      output_padding=attrs.get("output_padding", [0]) * (nd if len(attrs.get("output_padding", [0])) == 1 else 1),
                      groups=groups, dilation=dil)
        fn = F.conv1d if nd == 1 else F.conv2d
        if attrs.get("auto_pad") == "same":
            return fn(xx, ww, bb, stride=1, padding="same", dilation=dil, groups=groups)
        if len(pad) == 2 * nd:  # asymmetric: pad explicitly
            padded = F.pad(xx, [v for d in reversed(range(nd)) for v in (pad[d], pad[nd + d])])
            return fn(padded, ww, bb, stride=stride, dilation=dil, groups=groups)
        return fn(xx, ww, bb, stride=stride, padding=pad, dilation=dil, groups=groups)
    want = run(t64(x), t64(w), None if b is None else t64(b)).numpy()
    absref = run(t64(np.abs(x)), t64(np.abs(w)), None if b is None else t64(np.abs(b))).numpy()
    if last:
        want, absref = np.moveaxis(want, 1, -1), np.moveaxis(absref, 1, -1)
    return [(want, absref)]


def attention_scores(q, k, mask, attrs):
    """The masked, capped scores of q against k (f64 torch tensors, k's
    heads repeated to q's), as the attention ops define them."""
    hq, hk = q.shape[1], k.shape[1]
    k = k.repeat_interleave(hq // hk, dim=1)
    scale = attrs.get("scale", 1 / np.sqrt(q.shape[-1]))
    s = q @ k.transpose(-1, -2) * scale
    if attrs.get("softcap", 0) > 0:
        c = attrs["softcap"]
        s = c * torch.tanh(s / c)
    if mask is not None:
        m = torch.from_numpy(mask)
        s = s.masked_fill(~m, float("-inf")) if m.dtype == torch.bool else s + m.double()
    if attrs.get("causal"):
        sq, sk = s.shape[-2:]
        offset = attrs.get("causal_offset", sk - sq)
        keep = torch.ones(sq, sk, dtype=torch.bool).tril(diagonal=offset)
        s = s.masked_fill(~keep, float("-inf"))
    return s


def attention_ref(q, k, v, mask, attrs):
    q, k, v = t64(q), t64(k), t64(v)
    v = v.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    p = torch.softmax(attention_scores(q, k, mask, attrs), -1)
    p = torch.nan_to_num(p, nan=0.0)  # rows with nothing to attend to
    return [((p @ v).numpy(), None)]


def attention_grad_ref(q, k, v, dout, mask, attrs):
    """PyTorch autograd's gradients of the attention above (f64), with a
    softmax that gives zero rows where nothing may be attended."""
    q, k, v = (t64(a).requires_grad_() for a in (q, k, v))
    s = attention_scores(q, k, mask, attrs)
    top = s.detach().amax(-1, keepdim=True)
    e = torch.exp(s - torch.where(torch.isinf(top), torch.zeros_like(top), top))
    total = e.sum(-1, keepdim=True)
    p = e / torch.where(total == 0, torch.ones_like(total), total)
    (p @ v.repeat_interleave(q.shape[1] // k.shape[1], dim=1)).backward(t64(dout))
    return [(q.grad.numpy(), None), (k.grad.numpy(), None), (v.grad.numpy(), None)]


def norm_grad_ref(x, w, b, dy, centred):
    """PyTorch autograd's gradients of layer norm (centred) or RMS norm over
    the last axis, in f64: x's, the weight's and (layer norm) the bias's."""
    x, w = t64(x).requires_grad_(), t64(w).requires_grad_()
    if centred:
        b = t64(b).requires_grad_()
        y = F.layer_norm(x, [x.shape[-1]], w, b, 1e-5)
    else:
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    y.backward(t64(dy))
    grads = [x.grad, w.grad] + ([b.grad] if centred else [])
    return [(g.numpy(), None) for g in grads]


def rope_ref(x, pos, attrs):
    x = t64(x)
    d = x.shape[-1]
    r = attrs.get("rotary_dim", 0) or d
    half = r // 2
    inv = attrs["theta"] ** (-torch.arange(0, half, dtype=torch.float64) * 2 / r)
    ang = torch.from_numpy(pos).double().unsqueeze(-1) * inv
    cos, sin = torch.cos(ang), torch.sin(ang)
    rot, rest = x[..., :r], x[..., r:]
    if attrs.get("style") == "gptj":
        a, b = rot[..., 0::2], rot[..., 1::2]
        out = torch.stack([a * cos - b * sin, b * cos + a * sin], -1).flatten(-2)
    else:  # NeoX: rotate_half as in HF transformers
        a, b = rot[..., :half], rot[..., half:]
        out = torch.cat([a * cos - b * sin, b * cos + a * sin], -1)
    return [(torch.cat([out, rest], -1).numpy(), None)]


def conv_operands(x, w, b, layout):
    """tessel's operands: channels-first arrays as they are, or the same data
    channels-last ((N, S..., C) and weights (K..., A, B))."""
    nd = x.ndim - 2
    if layout == "last":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
        w = np.ascontiguousarray(np.transpose(w, list(range(2, 2 + nd)) + [1, 0]))
    return [x, w] + ([b] if b is not None else [])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    work = tempfile.mkdtemp(prefix="tessel_torch_")
    atexit.register(shutil.rmtree, work, True)
    batch = Batch(work)
    normal = lambda *s: RNG.normal(0, 1, size=s).astype(np.float32)
    ri = lambda lo, hi: int(RNG.integers(lo, hi + 1))

    # ---- convolution: groups, dilation, stride, padding, both layouts ----
    for case in range(48):
        nd = 1 if case % 4 == 3 else 2
        groups = ri(1, 3)
        cin, cout = groups * ri(1, 4), groups * ri(1, 3)
        kernel = [ri(1, 4) for _ in range(nd)]
        dil = [ri(1, 2) for _ in range(nd)]
        attrs = {"groups": groups, "dilation": dil, "layout": "last" if case % 2 else "first"}
        if case % 5 == 0:
            attrs["auto_pad"] = "same"
            pad_total = [0] * nd
        else:
            attrs["stride"] = [ri(1, 3) for _ in range(nd)]
            pad = [ri(0, 2) for _ in range(2 * nd)] if case % 3 == 0 else [ri(0, 2) for _ in range(nd)]
            attrs["padding"] = pad
            pad_total = [pad[d] + (pad[nd + d] if len(pad) == 2 * nd else pad[d]) for d in range(nd)]
        spatial = [max(ri(1, 12), dil[d] * (kernel[d] - 1) + 1 - pad_total[d]) for d in range(nd)]
        x = normal(ri(1, 3), cin, *spatial)
        w = normal(cout, cin // groups, *kernel)
        b = normal(cout) if case % 2 == 0 else None
        narrow = "bf16" if case % 7 == 0 else None
        if narrow:
            x, w = x.astype(BF16).astype(np.float32), w.astype(BF16).astype(np.float32)
            b = None if b is None else b.astype(BF16).astype(np.float32)
        arrays = conv_operands(x, w, b, attrs["layout"])
        batch.add("conv", attrs, arrays,
                  lambda xx, ww, *bb, a=attrs: conv_ref(xx, ww, bb[0] if bb else None, a, False),
                  "sum", narrow)
    # ---- transposed convolution ----
    for case in range(20):
        nd = 1 if case % 5 == 4 else 2
        groups = ri(1, 2)
        cin, cout = groups * ri(1, 3), groups * ri(1, 3)
        kernel = [ri(1, 4) for _ in range(nd)]
        stride = [ri(1, 3) for _ in range(nd)]
        dil = [ri(1, 2) for _ in range(nd)]
        out_pad = [ri(0, max(stride[d], dil[d]) - 1) for d in range(nd)]
        pad = [ri(0, (dil[d] * (kernel[d] - 1)) // 2) for d in range(nd)]
        attrs = {"groups": groups, "stride": stride, "dilation": dil, "padding": pad,
                 "output_padding": out_pad, "layout": "last" if case % 2 else "first"}
        x = normal(ri(1, 2), cin, *[ri(1, 7) for _ in range(nd)])
        w = normal(cin, cout // groups, *kernel)
        b = normal(cout) if case % 3 == 0 else None
        arrays = conv_operands(x, w, b, attrs["layout"])
        batch.add("conv_transpose", attrs, arrays,
                  lambda xx, ww, *bb, a=attrs: conv_ref(xx, ww, bb[0] if bb else None, a, True),
                  "sum")

    # ---- pooling ----
    for case in range(16):
        k = [ri(1, 3), ri(1, 3)]
        stride = [ri(1, 3), ri(1, 3)]
        pad = [ri(0, k[0] // 2), ri(0, k[1] // 2)]
        x = normal(ri(1, 2), ri(1, 3), ri(k[0], 9), ri(k[1], 9))
        ceil_mode = bool(case % 2)
        include = bool(case % 3 == 0)
        attrs = {"kernel": k, "stride": stride, "padding": pad, "ceil_mode": ceil_mode,
                 "count_include_pad": include}
        def max_ref(xx, a=attrs):
            v, i = F.max_pool2d(t64(xx), a["kernel"], a["stride"], a["padding"],
                                ceil_mode=a["ceil_mode"], return_indices=True)
            return [(v.numpy(), None), (i.numpy(), None)]
        batch.add("max_pool", attrs, [x], max_ref, "exact", outputs=2)
        batch.add("avg_pool", attrs, [x],
                  lambda xx, a=attrs: [(F.avg_pool2d(t64(xx), a["kernel"], a["stride"], a["padding"],
                                                     ceil_mode=a["ceil_mode"],
                                                     count_include_pad=a["count_include_pad"]).numpy(), None)],
                  "close")

    # ---- normalisation ----
    for case in range(12):
        shape = [ri(1, 4), ri(2, 6), ri(1, 40)]
        x = normal(*shape) * 3 + 5
        w, b = normal(shape[-1]), normal(shape[-1])
        batch.add("layer_norm", {"eps": 1e-5}, [x, w, b],
                  lambda xx, ww, bb: [(F.layer_norm(t64(xx), [xx.shape[-1]], t64(ww), t64(bb), 1e-5).numpy(), None)],
                  "close")
        batch.add("rms_norm", {"eps": 1e-6}, [x, w],
                  lambda xx, ww: [((t64(xx) * torch.rsqrt(t64(xx).pow(2).mean(-1, keepdim=True) + 1e-6) * t64(ww)).numpy(), None)],
                  "close")
        # Their backward passes (fused, f32) against autograd in f64, on
        # wider rows too (the SIMD body's full vectors and its tail).
        xw = normal(ri(1, 40), [5, 64, 200][case % 3]) * 3 + 1
        ww, bw, dy = normal(xw.shape[-1]), normal(xw.shape[-1]), normal(*xw.shape)
        batch.add("layer_norm_grad", {"eps": 1e-5}, [xw, ww, bw, dy],
                  lambda xx, ww_, bb, gg: norm_grad_ref(xx, ww_, bb, gg, True), "close", outputs=3)
        batch.add("rms_norm_grad", {"eps": 1e-6}, [xw, ww, dy],
                  lambda xx, ww_, gg: norm_grad_ref(xx, ww_, None, gg, False), "close", outputs=2)
        groups = [1, 2, 3][case % 3]
        xg = normal(ri(1, 3), groups * ri(1, 3), ri(1, 5), ri(1, 5))
        wg, bg = normal(xg.shape[1]), normal(xg.shape[1])
        batch.add("group_norm", {"groups": groups, "eps": 1e-5}, [xg, wg, bg],
                  lambda xx, ww, bb, g=groups: [(F.group_norm(t64(xx), g, t64(ww), t64(bb), 1e-5).numpy(), None)],
                  "close")
        mean, var = normal(xg.shape[1]), np.abs(normal(xg.shape[1])) + 0.1
        batch.add("batch_norm", {"eps": 1e-5}, [xg, mean, var, wg, bg],
                  lambda xx, mm, vv, ww, bb: [(F.batch_norm(t64(xx), t64(mm), t64(vv), t64(ww), t64(bb), False, 0.0, 1e-5).numpy(), None)],
                  "close")

    # ---- attention: GQA, causal, masks, KV-cache lengths, softcap ----
    for case in range(28):
        b, hk, group = ri(1, 2), ri(1, 3), ri(1, 3)
        hq = hk * group
        sq = [1, ri(2, 9), ri(60, 140)][case % 3]
        sk = sq + [0, ri(1, 300)][case % 2]
        d = [8, 16, 64][case % 3]
        dv = d if case % 4 else d + 8
        q, k, v = normal(b, hq, sq, d), normal(b, hk, sk, d), normal(b, hk, sk, dv)
        attrs = {}
        if case % 2 == 0 or case % 5 == 0:
            attrs["causal"] = True
            if case % 5 == 0:
                attrs["causal_offset"] = int(RNG.integers(-2, sk - sq + 1))
        if case % 6 == 1:
            attrs["scale"] = float(RNG.uniform(0.05, 0.5))
        if case % 7 == 3:
            attrs["softcap"] = 4.0
        arrays = [q, k, v]
        mask = None
        kind = case % 4
        if kind == 1:
            mask = normal(sq, sk)  # additive, broadcast over batch and heads
        elif kind == 2:
            mask = RNG.random((b, 1, sq, sk)) < 0.8  # boolean, per batch
        elif kind == 3:
            mask = np.where(RNG.random((sk,)) < 0.2, -np.inf, 0.0).astype(np.float32)
        if mask is not None:
            arrays.append(mask)
        narrow = "bf16" if case % 9 == 4 else None
        batch.add("attention", attrs, arrays,
                  lambda qq, kk, vv, *mm, a=attrs: attention_ref(qq, kk, vv, mm[0] if mm else None, a),
                  "close_bf16" if narrow else "close", narrow)
        # The backward pass on the same case (the fused f32 kernel; f32
        # inputs only, as bf16's rounding of the gradients is tested by the
        # forward's bf16 cases).
        if not narrow:
            dout = normal(b, hq, sq, dv)
            grad_arrays = [q, k, v, dout] + ([mask] if mask is not None else [])
            batch.add("attention_grad", attrs, grad_arrays,
                      lambda qq, kk, vv, gg, *mm, a=attrs:
                          attention_grad_ref(qq, kk, vv, gg, mm[0] if mm else None, a),
                      "close", outputs=3)

    # ---- the MLP's fused element-wise rows: swiglu and silu's gradient ----
    for case in range(6):
        shape = [(7,), (3, 33), (2, 5, 64), (1000,), (4, 9), (2, 130)][case]
        x, g = normal(*shape) * 6, normal(*shape)
        narrow = "bf16" if case >= 4 else None
        kind = "close_bf16" if narrow else "close"
        batch.add("swiglu", {}, [x, g],
                  lambda xx, gg: [((F.silu(t64(xx)) * t64(gg)).numpy(), None)], kind, narrow)
        batch.add("silu_backward", {}, [g, x],
                  lambda gg, xx: [(torch.ops.aten.silu_backward(t64(gg), t64(xx)).numpy(), None)],
                  kind, narrow)

    # ---- RoPE: both styles, large positions, partial rotary dims ----
    for case in range(16):
        style = "gptj" if case % 2 else "neox"
        theta = [10000.0, 1e6, 500000.0][case % 3]
        d = [16, 64, 128][case % 3]
        rotary = d if case % 4 < 2 else d // 2
        b, h, s = ri(1, 2), ri(1, 4), ri(1, 24)
        positions = RNG.integers(0, 8192, size=(s,)).astype(np.int64)
        attrs = {"style": style, "theta": theta, "rotary_dim": rotary}
        if case % 3 == 2:  # (B, S, H, D) data with (B, S, 1) positions
            x = normal(b, s, h, d)
            pos = RNG.integers(0, 8192, size=(b, s, 1)).astype(np.int64)
        else:  # (B, H, S, D) with (S,) positions
            x = normal(b, h, s, d)
            pos = positions
        batch.add("rope", attrs, [x, pos], lambda xx, pp, a=attrs: rope_ref(xx, pp, a), "close")

    # ---- affine quantisation: PyTorch's quantize_per_tensor/per_channel
    # (rounding half to even, clamping) and its MinMax observers, NumPy's
    # formula for what PyTorch lacks (int4/uint4, int16, groups) ----
    def q_np(x, s, zp, lo, hi):  # in f32, as tessel and ONNX compute
        return np.clip(np.round(x.astype(np.float32) / s) + zp.astype(np.float32), lo, hi)

    qtypes = {"i8": (torch.qint8, -128, 127, np.int8), "u8": (torch.quint8, 0, 255, np.uint8)}
    for case in range(8):
        name = ["i8", "u8"][case % 2]
        tq, lo, hi, npt = qtypes[name]
        x = normal(3, 40) * [1, 4, 30, 0.01][case % 4]
        x[0, :4] = [np.nan, np.inf, -np.inf, 0.5] if case == 0 else x[0, :4]
        scale = np.float32(RNG.uniform(0.01, 0.2))
        zp = int(RNG.integers(lo // 4, hi // 4 + 1)) if case % 4 != 1 else 0
        def per_tensor(xx, ss, zz, tq=tq, lo=lo, hi=hi):
            t = torch.from_numpy(np.nan_to_num(xx, nan=0.0))  # torch has no NaN rule
            want = torch.quantize_per_tensor(t, float(ss), int(zz), tq).int_repr().numpy()
            want = want.astype(np.float64)
            # tessel's rules where PyTorch's result is undefined behaviour
            # (nearbyint of NaN/Inf cast to int): NaN quantises to the zero
            # point, +-Inf saturate (ONNX's saturate).
            want[np.isnan(xx)] = zz
            want[np.isposinf(xx)] = hi
            want[np.isneginf(xx)] = lo
            return [(want, None)]
        batch.add("quantize_affine", {"dtype": name},
                  [x, np.array([scale], np.float32), np.array([zp], np.int32)],
                  per_tensor, "exact")
        # Per channel along axis 0 and 1.
        axis = case % 2
        scales = RNG.uniform(0.01, 0.2, x.shape[axis]).astype(np.float32)
        zps = RNG.integers(lo // 4, hi // 4 + 1, x.shape[axis]).astype(np.int32)
        xc = np.nan_to_num(x, nan=0.0, posinf=1e6, neginf=-1e6)
        batch.add("quantize_affine", {"dtype": name, "axis": axis},
                  [xc, scales, zps],
                  lambda xx, ss, zz, tq=tq, axis=axis: [(torch.quantize_per_channel(
                      torch.from_numpy(xx), torch.from_numpy(ss.astype(np.float64)),
                      torch.from_numpy(zz.astype(np.int64)), axis, tq).int_repr().numpy()
                      .astype(np.float64), None)], "exact")
    # int4 / uint4 / int16 per group along the last axis, and back.
    for name, lo, hi in [("i4", -8, 7), ("u4", 0, 15), ("i16", -32768, 32767)]:
        x = normal(4, 64) * 3
        g = 16
        scales = RNG.uniform(0.05, 0.5, (4, 64 // g)).astype(np.float32)
        zps = RNG.integers(lo // 2, hi // 2 + 1, (4, 64 // g)).astype(np.int32)
        full_s, full_z = np.repeat(scales, g, axis=1), np.repeat(zps, g, axis=1)
        batch.add("quantize_affine", {"dtype": name, "group_size": g, "axis": -1},
                  [x, scales, zps],
                  lambda xx, ss, zz, fs=full_s, fz=full_z, lo=lo, hi=hi:
                  [(q_np(xx, fs, fz, lo, hi), None)], "exact")
        q = q_np(x, full_s, full_z, lo, hi).astype(np.int16 if name == "i16" else
                                                    np.int8 if name == "i4" else np.uint8)
        attrs = {"group_size": g, "axis": -1}
        if name != "i16":
            attrs["packed"] = name
        batch.add("dequantize_affine", attrs, [q, scales, zps],
                  lambda qq, ss, zz, fs=full_s, fz=full_z:
                  [(((qq.astype(np.float32) - fz.astype(np.float32)) * fs).astype(np.float64),
                    None)], "exact")
    # The observers' scales and zero points.
    obs = torch.ao.quantization
    for case in range(4):
        x = normal(6, 32) * [1, 5, 0.1, 2][case] + [0, 1, 0, -3][case]
        symmetric = case % 2 == 0
        per_channel = case >= 2
        scheme = ((torch.per_channel_symmetric if symmetric else torch.per_channel_affine)
                  if per_channel else
                  (torch.per_tensor_symmetric if symmetric else torch.per_tensor_affine))
        def observed(xx, symmetric=symmetric, per_channel=per_channel, scheme=scheme):
            o = (obs.PerChannelMinMaxObserver(ch_axis=0, dtype=torch.qint8, qscheme=scheme)
                 if per_channel else obs.MinMaxObserver(dtype=torch.qint8, qscheme=scheme))
            o(torch.from_numpy(xx))
            s, z = o.calculate_qparams()
            return [(s.numpy().astype(np.float32).astype(np.float64).reshape(-1 if per_channel else ()), None),
                    (z.numpy().astype(np.float64).reshape(-1 if per_channel else ()), None)]
        batch.add("choose_affine", {"dtype": "i8", "symmetric": symmetric,
                                    "per_channel": per_channel, "axis": 0},
                  [x], observed, "exact", outputs=2)

    # ---- run tessel ----
    spec_file = os.path.join(batch.dir, "batch.json")
    with open(spec_file, "w") as f:
        json.dump([c[0] for c in batch.cases], f)
    subprocess.run([args.tool, spec_file], check=True)

    failures = 0
    for spec, stored, reference, kind, narrow in batch.cases:
        label = f"{spec['op']} {[s.shape for s in stored]} attrs={spec['attrs']}"
        if any(os.path.exists(o + ".error") for o in spec["outputs"]):
            failures += 1
            print(f"FAIL {label}: tessel raised {open(spec['outputs'][0] + '.error').read()}")
            continue
        for out, (want, absref) in zip(spec["outputs"], reference(*stored)):
            got = np.load(out)
            if got.shape != want.shape:
                failures += 1
                print(f"FAIL {label}: shape {got.shape}, expected {want.shape}")
                break
            g = got.astype(np.float64)
            if kind == "exact":
                ok = np.array_equal(g, want)
                bound = np.zeros_like(want)
            elif kind == "sum":
                bound = 2e-5 * absref + 1e-6
                if narrow:
                    bound = bound + 2.0 ** -8 * np.abs(want)
            elif kind == "close_bf16":
                bound = 2e-2 + 2e-2 * np.abs(want)
            else:
                bound = 2e-5 + 1e-5 * np.abs(want)
            err = np.abs(g - want)
            if kind != "exact":
                ok = bool(np.all(err <= bound))
            if not ok:
                failures += 1
                i = int(np.argmax(err - bound))
                print(f"FAIL {label}: element {i} got {g.reshape(-1)[i]!r}, "
                      f"expected {want.reshape(-1)[i]!r} (bound {bound.reshape(-1)[i]:.3g})")
                break
    print(f"{len(batch.cases)} cases, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
