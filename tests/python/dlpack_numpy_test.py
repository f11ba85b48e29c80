"""numpy as a real DLPack consumer and producer for cuwrap (tests/python/dlpack_numpy_lib.cpp).

Run as: dlpack_numpy_test.py <path of the cuwrap_dlpack_numpy library>, with CUWRAP_DRIVER set.
numpy.from_dlpack calls __dlpack__ on the object it is given and takes the PyCapsule it returns:
"dltensor_versioned" when it passes max_version (numpy 2.1 and later), else the legacy
"dltensor" (numpy 1.22 to 2.0). ctypes builds the capsules; both paths are exercised with
whichever numpy is installed.
"""
import ctypes
import gc
import sys

import numpy as np

lib = ctypes.CDLL(sys.argv[1])
lib.cuwrap_test_export_pinned.restype = ctypes.c_void_p
lib.cuwrap_test_export_pinned.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_int]
lib.cuwrap_test_read_last.restype = ctypes.c_int32
lib.cuwrap_test_read_last.argtypes = [ctypes.c_int64]
lib.cuwrap_test_write_last.restype = None
lib.cuwrap_test_write_last.argtypes = [ctypes.c_int64, ctypes.c_int32]
lib.cuwrap_test_import_sum.restype = ctypes.c_double
lib.cuwrap_test_import_sum.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.cuwrap_test_error.restype = ctypes.c_char_p

capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
capsule_get = ctypes.pythonapi.PyCapsule_GetPointer
capsule_get.restype = ctypes.c_void_p
capsule_get.argtypes = [ctypes.py_object, ctypes.c_char_p]
capsule_set_name = ctypes.pythonapi.PyCapsule_SetName
capsule_set_name.restype = ctypes.c_int
capsule_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]

# A capsule keeps a pointer to its name: these must outlive every capsule.
LEGACY, USED_LEGACY = b"dltensor", b"used_dltensor"
VERSIONED, USED_VERSIONED = b"dltensor_versioned", b"used_dltensor_versioned"
K_DL_CUDA_HOST = 3


def check(condition, message):
    if not condition:
        print("FAILED:", message)
        sys.exit(1)


class Exported:
    """rows x cols of cuwrap pinned memory, offered through the Python exchange protocol."""

    def __init__(self, rows, cols=0):
        self.shape = (rows, cols)
        self.capsule_name = None

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        check(stream is None or stream == -1, f"stream {stream} for host memory")
        check(self.capsule_name is None, "a tensor is consumed once")
        versioned = max_version is not None and max_version[0] >= 1
        tensor = lib.cuwrap_test_export_pinned(*self.shape, 0 if versioned else 1)
        check(tensor, lib.cuwrap_test_error().decode())
        self.capsule_name = VERSIONED if versioned else LEGACY
        return capsule_new(tensor, self.capsule_name, None)

    def __dlpack_device__(self):
        return (K_DL_CUDA_HOST, 0)


check(lib.cuwrap_test_start() == 0, lib.cuwrap_test_error().decode())

# cuwrap -> numpy, one dimension: the values, no copy, one deletion when the last view goes.
offer = Exported(6)
a = np.from_dlpack(offer)
check(a.dtype == np.int32, f"dtype {a.dtype}")
check(a.shape == (6,), f"shape {a.shape}")
check(a.tolist() == [0, 1, 4, 9, 16, 25], f"values {a.tolist()}")
lib.cuwrap_test_write_last(3, 1000)
check(a[3] == 1000, "cuwrap's write shows in numpy's array (no copy)")
if offer.capsule_name == VERSIONED:
    # A versioned tensor without flag_read_only is writable; numpy < 2.1 marks every array it
    # takes from a legacy capsule read-only (the legacy struct cannot say).
    check(a.flags.writeable, "a writable versioned tensor gives a writable array")
    a[4] = -7
    check(lib.cuwrap_test_read_last(4) == -7, "numpy's write reaches cuwrap's memory")
check(lib.cuwrap_test_deletions() == 0, "deleted while numpy holds the array")
view = a[2:]  # a view keeps the tensor alive too
del a
gc.collect()
check(lib.cuwrap_test_deletions() == 0, "deleted while a numpy view holds the memory")
check(view.tolist()[:2] == [4, 1000], f"view {view.tolist()}")
del view
gc.collect()
check(lib.cuwrap_test_deletions() == 1, f"{lib.cuwrap_test_deletions()} deletions, expected 1")

# Two dimensions: cuwrap's shape and strides.
m = np.from_dlpack(Exported(2, 3))
check(m.shape == (2, 3), f"shape {m.shape}")
check(m.strides == (12, 4), f"strides {m.strides}")
check(m[1, 2] == 25, f"m[1, 2] = {m[1, 2]}")
check(m.T.copy().tolist() == [[0, 9], [1, 16], [4, 25]], "transpose")
del m
gc.collect()
check(lib.cuwrap_test_deletions() == 2, f"{lib.cuwrap_test_deletions()} deletions, expected 2")


# numpy -> cuwrap: cuwrap takes numpy's tensor, checks it and calls numpy's deleter.
def give(array, versioned):
    if versioned:
        capsule = array.__dlpack__(max_version=(1, 1))
        pointer = capsule_get(capsule, VERSIONED)
        capsule_set_name(capsule, USED_VERSIONED)  # consumed: its destructor leaves it alone
    else:
        capsule = array.__dlpack__()
        pointer = capsule_get(capsule, LEGACY)
        capsule_set_name(capsule, USED_LEGACY)
    return pointer


numpy_version = tuple(int(part) for part in np.__version__.split(".")[:2])
for versioned in [False, True] if numpy_version >= (2, 1) else [False]:
    flag = 0 if versioned else 1
    b = np.arange(10, dtype=np.float64)
    check(lib.cuwrap_test_import_sum(give(b, versioned), flag) == 45.0, "sum of arange(10)")
    check(lib.cuwrap_test_import_sum(give(b[::2], versioned), flag) == -1, "a strided view")
    check(b"not contiguous: shape (5), strides (2)" in lib.cuwrap_test_error(),
          lib.cuwrap_test_error().decode())
    i = np.arange(4, dtype=np.int32)
    check(lib.cuwrap_test_import_sum(give(i, versioned), flag) == -1, "int32 as float64")
    check(b"the tensor holds int32, the view's element type is float64" in lib.cuwrap_test_error(),
          lib.cuwrap_test_error().decode())

lib.cuwrap_test_stop()
print(f"numpy {np.__version__} took cuwrap's {offer.capsule_name.decode()} capsules and gave",
      "versioned and legacy" if numpy_version >= (2, 1) else "legacy", "ones")
