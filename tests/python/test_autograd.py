"""Autograd and optimisers from Python against PyTorch (CPU, float64 so
that the comparison is exact to 1e-12 and differences are bugs, not
rounding)."""

import numpy as np
import pytest
import torch

import tessel
from tessel import autograd as ag


def test_gradients_of_a_small_network_match_torch(rng):
    x = rng.standard_normal((5, 4))
    w1 = rng.standard_normal((6, 4))
    b1 = rng.standard_normal(6)
    w2 = rng.standard_normal((3, 6))
    targets = np.array([0, 2, 1, 1, 0])

    tw1, tb1, tw2 = (tessel.Variable(v, requires_grad=True) for v in (w1, b1, w2))
    hidden = ag.tanh(ag.linear(x, tw1, tb1))
    logits = hidden @ tw2.transpose(0, 1)
    loss = ag.cross_entropy(logits, targets) + 0.1 * ag.sum(tw1 * tw1)
    loss.backward()

    pw1, pb1, pw2 = (torch.tensor(v, requires_grad=True) for v in (w1, b1, w2))
    ph = torch.tanh(torch.nn.functional.linear(torch.tensor(x), pw1, pb1))
    pl = torch.nn.functional.cross_entropy(ph @ pw2.T, torch.tensor(targets)) + 0.1 * (pw1 * pw1).sum()
    pl.backward()

    assert abs(loss.item() - pl.item()) < 1e-12
    for mine, theirs in ((tw1, pw1), (tb1, pb1), (tw2, pw2)):
        np.testing.assert_allclose(np.asarray(mine.grad), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_variable_basics():
    v = tessel.Variable(tessel.asarray([1.0, 2.0, 3.0]), requires_grad=True)
    assert v.requires_grad and v.is_leaf and v.grad is None
    assert v.shape == (3,) and v.dtype == tessel.float32
    y = ag.sum(v[1:] * 2.0)
    y.backward()
    assert v.grad.tolist() == [0.0, 2.0, 2.0]
    v.zero_grad()
    assert v.grad is None  # cleared, as PyTorch's zero_grad(set_to_none=True)
    with tessel.no_grad():
        z = v * 3
    assert not z.requires_grad
    assert not v.detach().requires_grad
    assert "requires_grad=True" in repr(v)
    # transpose() reverses every axis; squeeze takes a tuple; gradients
    # flow back through both.
    m = tessel.Variable(tessel.arange(6.0).reshape(2, 1, 3), requires_grad=True)
    t = m.transpose().squeeze((1,))
    assert t.shape == (3, 2)
    ag.sum(t * tessel.asarray([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).backward()
    assert m.grad.reshape(6).tolist() == [1.0, 3.0, 5.0, 2.0, 4.0, 6.0]


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_optimizer_steps_match_torch(name, rng):
    start = rng.standard_normal((4, 3))
    target = rng.standard_normal((4, 3))
    kwargs = {"SGD": dict(lr=0.1, momentum=0.9, weight_decay=0.01),
              "Adam": dict(lr=0.05, weight_decay=0.01),
              "AdamW": dict(lr=0.05, weight_decay=0.1)}[name]
    p = tessel.Variable(start, requires_grad=True)
    opt = getattr(ag, name)([p], **kwargs)
    q = torch.tensor(start, requires_grad=True)
    topt = getattr(torch.optim, name)([q], **kwargs)
    for _ in range(5):
        opt.zero_grad()
        ag.mse_loss(p, target).backward()
        opt.step()
        topt.zero_grad()
        torch.nn.functional.mse_loss(q, torch.tensor(target)).backward()
        topt.step()
    np.testing.assert_allclose(np.asarray(p.value), q.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert opt.steps_taken == 5
    opt.lr = 0.5
    assert opt.lr == 0.5


def test_clip_grad_norm_matches_torch(rng):
    g = rng.standard_normal(10)
    p = tessel.Variable(np.zeros(10), requires_grad=True)
    (ag.sum(p * g)).backward()
    norm = ag.clip_grad_norm([p], 1.0)
    assert abs(norm - np.linalg.norm(g)) < 1e-12
    np.testing.assert_allclose(np.asarray(p.grad), g / np.linalg.norm(g), rtol=1e-6)


def test_autograd_errors():
    with pytest.raises(TypeError):
        ag.SGD([tessel.ones(2)])
    v = tessel.Variable(tessel.ones((2, 2)), requires_grad=True)
    with pytest.raises(tessel.ShapeError):
        ag.matmul(v, tessel.ones((3, 3)))
    with pytest.raises(tessel.ShapeError):
        ag.mse_loss(v, v, reduction="avg")


def test_hadamard_transform_and_its_gradient_match_torch(rng):
    # Sylvester's matrix built as NumPy Kronecker products (H_2n = [[H, H],
    # [H, -H]]), applied by torch's matmul in float64.
    x = rng.standard_normal((3, 2, 64))
    w = rng.standard_normal((3, 2, 64))
    h = np.ones((1, 1))
    for _ in range(5):
        h = np.kron(np.array([[1.0, 1.0], [1.0, -1.0]]), h)
    h = torch.tensor(h / np.sqrt(32.0))

    tx = tessel.Variable(x, requires_grad=True)
    y = ag.hadamard_transform(tx, 32)
    ag.sum(y * tessel.asarray(w)).backward()

    px = torch.tensor(x, requires_grad=True)
    py = (px.reshape(3, 2, 2, 32) @ h).reshape(3, 2, 64)
    (py * torch.tensor(w)).sum().backward()

    np.testing.assert_allclose(np.asarray(y.value), py.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(tx.grad), px.grad.numpy(), rtol=1e-12, atol=1e-12)
    # The plain op, float32, whole last axis (a power of two).
    got = np.asarray(tessel.hadamard_transform(x[0, 0].astype(np.float32)))
    h64 = np.kron(np.array([[1.0, 1.0], [1.0, -1.0]]), h.numpy() * np.sqrt(32.0)) / 8.0
    want = x[0, 0] @ h64
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(tessel.ShapeError):
        tessel.hadamard_transform(np.ones((2, 12), np.float32))
