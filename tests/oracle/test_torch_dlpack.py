"""tessel's DLPack export and import against PyTorch's
(torch.utils.dlpack, legacy "dltensor" capsules), in one process: the
dlpack_tool shared library is loaded with ctypes and the DLManagedTensor
pointers are wrapped in and taken out of capsules here. Checks values,
shapes and strides both ways, including non-contiguous tensors, and that
writes on either side show on the other (zero copy)."""
import argparse
import ctypes
import sys

import torch
import torch.utils.dlpack as tdl

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


# tessel names -> torch dtypes. torch 1.13 has no uint16/32/64 or fp8 and
# refuses bool in DLPack both ways, so those are covered by tessel's unit
# tests only.
DTYPES = {
    "u8": torch.uint8, "i8": torch.int8, "i16": torch.int16,
    "i32": torch.int32, "i64": torch.int64, "f16": torch.float16,
    "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
}

pyapi = ctypes.pythonapi
pyapi.PyCapsule_New.restype = ctypes.py_object
pyapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                ctypes.c_void_p]
pyapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
pyapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
pyapi.PyCapsule_SetName.restype = ctypes.c_int
pyapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


def load(path):
    lib = ctypes.CDLL(path)
    lib.tessel_export.restype = ctypes.c_void_p
    lib.tessel_export.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.tessel_exported_value.restype = ctypes.c_double
    lib.tessel_exported_value.argtypes = [ctypes.c_int64]
    lib.tessel_import.argtypes = [ctypes.c_void_p]
    lib.tessel_imported_dtype.restype = ctypes.c_char_p
    lib.tessel_imported_layout.argtypes = [ctypes.POINTER(ctypes.c_int64)] * 2
    lib.tessel_imported_values.restype = ctypes.c_int64
    lib.tessel_imported_values.argtypes = [ctypes.POINTER(ctypes.c_double),
                                           ctypes.c_int64]
    lib.tessel_imported_fill.argtypes = [ctypes.c_double]
    lib.tessel_last_error.restype = ctypes.c_char_p
    return lib


def expected(dtype, kind):
    if kind == 0:
        return torch.arange(12).reshape(3, 4).to(dtype)
    return torch.arange(24).reshape(2, 3, 4).to(dtype).permute(2, 0, 1)[1:4:2]


def tessel_to_torch(lib):
    for name, dtype in DTYPES.items():
        for kind in (0, 1):
            what = f"tessel->torch {name} kind {kind}"
            ptr = lib.tessel_export(name.encode(), kind)
            if not ptr:
                check(False, f"{what}: {lib.tessel_last_error().decode()}")
                continue
            t = tdl.from_dlpack(pyapi.PyCapsule_New(ptr, b"dltensor", None))
            want = expected(dtype, kind)
            check(t.dtype == dtype, f"{what}: dtype {t.dtype}")
            check(tuple(t.shape) == tuple(want.shape), f"{what}: shape")
            check(t.stride() == want.stride(),
                  f"{what}: strides {t.stride()} vs {want.stride()}")
            check(torch.equal(t, want), f"{what}: values")
            # Zero copy: torch writes into tessel's memory.
            t.fill_(7)
            seen = [lib.tessel_exported_value(i) for i in range(t.numel())]
            check(seen == [7.0] * t.numel(), f"{what}: torch's write seen")
            lib.tessel_forget_exported()  # torch's tensor keeps it alive
            check(torch.equal(t, torch.full_like(t, 7)),
                  f"{what}: alive after tessel lets go")
            del t


def torch_cases():
    base = torch.arange(30, dtype=torch.float64).reshape(5, 6)
    return [
        ("contiguous", lambda d: torch.arange(12).reshape(3, 4).to(d)),
        ("transposed", lambda d: torch.arange(12).reshape(3, 4).to(d).T),
        ("sliced", lambda d: base.to(d)[1::2, 2:5]),
        ("offset row", lambda d: base.to(d)[3]),
        ("scalar", lambda d: torch.tensor(5).to(d)),
        ("empty", lambda d: torch.zeros(0, 3, dtype=d)),
    ]


def torch_to_tessel(lib):
    for name, dtype in DTYPES.items():
        for case, make in torch_cases():
            what = f"torch->tessel {name} {case}"
            t = make(dtype)
            cap = tdl.to_dlpack(t)
            ptr = pyapi.PyCapsule_GetPointer(cap, b"dltensor")
            if lib.tessel_import(ptr) != 0:
                check(False, f"{what}: {lib.tessel_last_error().decode()}")
                continue
            pyapi.PyCapsule_SetName(cap, b"used_dltensor")  # tessel owns it
            got_dtype = lib.tessel_imported_dtype().decode()
            check(got_dtype == name, f"{what}: dtype {got_dtype}")
            ndim = lib.tessel_imported_ndim()
            shape = (ctypes.c_int64 * max(ndim, 1))()
            strides = (ctypes.c_int64 * max(ndim, 1))()
            lib.tessel_imported_layout(shape, strides)
            check(list(shape[:ndim]) == list(t.shape), f"{what}: shape")
            # (torch exports made-up strides for empty tensors.)
            check(t.numel() == 0 or list(strides[:ndim]) == list(t.stride()),
                  f"{what}: strides {list(strides[:ndim])} vs {t.stride()}")
            out = (ctypes.c_double * max(t.numel(), 1))()
            n = lib.tessel_imported_values(out, len(out))
            want = t.double().flatten().tolist()
            check(n == t.numel() and list(out[:n]) == want, f"{what}: values")
            # Zero copy: tessel writes into torch's memory.
            if t.numel() > 0:
                before = t.clone()
                check(lib.tessel_imported_fill(1) == 0, f"{what}: fill")
                check(torch.equal(t, torch.ones_like(t)),
                      f"{what}: tessel's write seen by torch")
                t.copy_(before)
            lib.tessel_release_imported()  # runs torch's deleter
            del cap


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    lib = load(args.tool)
    tessel_to_torch(lib)
    torch_to_tessel(lib)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        sys.exit(1)
    print("all DLPack exchanges with torch agree")


if __name__ == "__main__":
    main()
