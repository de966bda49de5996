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
from ._tessel import *  # noqa: F401,F403
from . import _tessel
from ._tessel import autograd as autograd, dtype as dtype
from ._array_api import *  # noqa: F401,F403
from ._array_api import __array_namespace_info__ as __array_namespace_info__
from . import linalg as linalg
from . import fft as fft

__version__: str = _tessel.build_version
__array_api_version__: str = "2024.12"

# The dtypes, declared one by one so that type checkers know each name
# (the C++ module keeps them in a dict: an attribute named `bool` there
# would shadow the built-in in its generated stub).
_d = _tessel.dtypes
bool: dtype = _d["bool"]  # noqa: A001 - the array API's name
uint8: dtype = _d["uint8"]
int8: dtype = _d["int8"]
int16: dtype = _d["int16"]
int32: dtype = _d["int32"]
int64: dtype = _d["int64"]
uint16: dtype = _d["uint16"]
uint32: dtype = _d["uint32"]
uint64: dtype = _d["uint64"]
float16: dtype = _d["float16"]
bfloat16: dtype = _d["bfloat16"]
float32: dtype = _d["float32"]
float64: dtype = _d["float64"]
float8_e4m3fn: dtype = _d["float8_e4m3fn"]
float8_e5m2: dtype = _d["float8_e5m2"]
int4: dtype = _d["int4"]
uint4: dtype = _d["uint4"]
q4_0: dtype = _d["q4_0"]
q4_1: dtype = _d["q4_1"]
q5_0: dtype = _d["q5_0"]
q5_1: dtype = _d["q5_1"]
q8_0: dtype = _d["q8_0"]
q8_1: dtype = _d["q8_1"]
q2_k: dtype = _d["q2_k"]
q3_k: dtype = _d["q3_k"]
q4_k: dtype = _d["q4_k"]
q5_k: dtype = _d["q5_k"]
q6_k: dtype = _d["q6_k"]
q8_k: dtype = _d["q8_k"]
iq2_xxs: dtype = _d["iq2_xxs"]
iq2_xs: dtype = _d["iq2_xs"]
iq2_s: dtype = _d["iq2_s"]
iq3_xxs: dtype = _d["iq3_xxs"]
iq3_s: dtype = _d["iq3_s"]
iq1_s: dtype = _d["iq1_s"]
iq1_m: dtype = _d["iq1_m"]
iq4_nl: dtype = _d["iq4_nl"]
iq4_xs: dtype = _d["iq4_xs"]
tq1_0: dtype = _d["tq1_0"]
tq2_0: dtype = _d["tq2_0"]
mxfp4: dtype = _d["mxfp4"]
complex64: dtype = _d["complex64"]
complex128: dtype = _d["complex128"]
del _d
