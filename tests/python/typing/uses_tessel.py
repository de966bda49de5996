"""Code a user writes against tessel; mypy must accept it (the stubs of
build/python/tessel/_tessel/ describe every name used here)."""

import numpy as np

import tessel
from tessel import autograd as ag


def normalise(t: tessel.Tensor) -> tessel.Tensor:
    return (t - t.mean(axis=-1, keepdims=True)) / (t.std(axis=-1, keepdims=True) + 1e-6)


x: tessel.Tensor = tessel.randn((4, 8))
y = normalise(x) @ tessel.ones((8, 2), dtype=tessel.float32)
shape: tuple[int, ...] = y.shape
kind: tessel.dtype = y.dtype
a = np.asarray(y)
w = tessel.Variable(tessel.zeros((2, 8)), requires_grad=True)
loss = ag.mse_loss(ag.matmul(x, w.transpose(0, 1)), y)
loss.backward()
opt = ag.AdamW([w], lr=1e-2)
opt.step()
tensors: dict[str, tessel.Tensor] = {"x": x}
tessel.save_safetensors("/dev/null", tensors) if False else None
try:
    tessel.zeros((2, -1))
except tessel.ShapeError as e:
    code: str = e.code
# The array API namespace and its linalg extension.
xp = x.__array_namespace__()
eigenvalues: tessel.Tensor = tessel.linalg.eigh(x @ x.mT).eigenvalues
u, s, vh = tessel.linalg.svd(x, full_matrices=False)
limits: float = tessel.finfo(tessel.float32).eps
values, counts = tessel.unique_counts(tessel.arange(4))
common: tessel.dtype = tessel.result_type(tessel.int8, tessel.uint8)
