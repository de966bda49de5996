"""tessel: a C++20 tensor runtime, from Python.

    >>> import tessel
    >>> t = tessel.arange(6).reshape(2, 3)
    >>> (t * 2).sum(axis=1)

Tensors share memory with NumPy and PyTorch without copying
(``tessel.from_dlpack(x)``, ``np.asarray(t)``); errors are the exceptions
of ``tessel._errors``, each carrying its DESIGN §2 code. docs/python.md has
the tour.
"""

from ._errors import *  # noqa: F401,F403
from ._errors import __all__ as _error_names
from ._tessel import *  # noqa: F401,F403
from ._tessel import __version__  # noqa: F401
from . import _tessel



def _as_method(function):
    # A nanobind function is not a descriptor: wrap it so that it binds self.
    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = function.__name__
    method.__doc__ = function.__doc__
    return method


# Tensor methods that are module functions in C++ (NumPy has both forms).
for _name in (
    "sum", "prod", "mean", "max", "min", "any", "all", "var", "std", "argmax",
    "argmin", "cumsum", "cumprod", "softmax", "log_softmax", "flip", "sort",
    "argsort", "exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu",
    "matmul", "tril", "triu", "clip", "round", "floor", "ceil",
):
    if not hasattr(_tessel.Tensor, _name):
        setattr(_tessel.Tensor, _name, _as_method(getattr(_tessel, _name)))
del _name
