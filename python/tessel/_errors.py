"""The exceptions of DESIGN §2 as Python classes.

Each carries the stable code (``e.code == "E2101"``) and subclasses the
built-in exception a Python user would catch for that kind of mistake, so
``except ValueError`` keeps working in code written for NumPy. The C++
bindings raise these classes (src/python/errors.cpp looks them up here by
the name of the C++ class).
"""

import builtins


class TesselError(Exception):
    """Base of every tessel error; ``code`` is the DESIGN §2 code."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class ShapeError(TesselError, ValueError):
    """E2101 (not broadcastable), E2102 (rank/shape/axis), E2103 (inner dims)."""


class DTypeError(TesselError, TypeError):
    """E2201: a dtype the op does not accept, or that cannot be promoted."""


class LayoutError(TesselError, ValueError):
    """E2301: the op needs a contiguous tensor or whole blocks."""


class IndexError(TesselError, builtins.IndexError):  # noqa: A001 - tessel.IndexError
    """E2302: an index or slice out of range."""


class OverflowError(TesselError, builtins.OverflowError):  # noqa: A001
    """E2303: size arithmetic (or a Python int) does not fit."""


class NumericsError(TesselError, FloatingPointError):
    """E2401: NaN/Inf where the numerics check expects finite values."""


class DeviceError(TesselError, RuntimeError):
    """E2501: operands on different devices, or a device that is unavailable."""


class FormatError(TesselError, ValueError):
    """E3001: a malformed or unsupported file, header or DLPack capsule."""

    def __init__(self, message: str, code: str = "", byte_offset: int = -1) -> None:
        super().__init__(message, code)
        self.byte_offset = byte_offset


class IoError(TesselError, OSError):
    """E3002: open, read, write or map failed."""

    def __init__(self, message: str, code: str = "") -> None:
        OSError.__init__(self, message)
        self.code = code


class ConfigError(TesselError, ValueError):
    """E4001: an invalid model or merge configuration."""


__all__ = [
    "TesselError",
    "ShapeError",
    "DTypeError",
    "LayoutError",
    "IndexError",
    "OverflowError",
    "NumericsError",
    "DeviceError",
    "FormatError",
    "IoError",
    "ConfigError",
]
