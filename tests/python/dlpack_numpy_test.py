"""numpy as a real DLPack consumer and producer for cuwrap (tests/python/dlpack_numpy_lib.cpp).

Run as: dlpack_numpy_test.py <path of the cuwrap_dlpack_numpy library>, with CUWRAP_DRIVER set.
numpy.from_dlpack calls __dlpack__ on the object it is given and takes the PyCapsule named
"dltensor" it returns (numpy < 2.1 reads no versioned capsule); ctypes builds the capsule.
"""
import ctypes
import gc
import sys

import numpy as np

lib = ctypes.CDLL(sys.argv[1])
lib.cuwrap_test_export_pinned.restype = ctypes.c_void_p
lib.cuwrap_test_export_pinned.argtypes = [ctypes.c_int64, ctypes.c_int64]
lib.cuwrap_test_write_last.restype = None
lib.cuwrap_test_write_last.argtypes = [ctypes.c_int64, ctypes.c_int32]
lib.cuwrap_test_import_sum.restype = ctypes.c_double
lib.cuwrap_test_import_sum.argtypes = [ctypes.c_void_p]
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

# The capsule keeps a pointer to its name: these must outlive every capsule.
DLTENSOR = b"dltensor"
USED_DLTENSOR = b"used_dltensor"
K_DL_CUDA_HOST = 3


class Exported:
    """A cuwrap tensor offered to a consumer through the Python exchange protocol."""

    def __init__(self, tensor):
        assert tensor, lib.cuwrap_test_error().decode()
        self.tensor = tensor

    def __dlpack__(self, stream=None):
        assert stream is None or stream == -1, stream  # host memory: no stream to order
        tensor, self.tensor = self.tensor, None
        assert tensor is not None, "a tensor is consumed once"
        return capsule_new(tensor, DLTENSOR, None)

    def __dlpack_device__(self):
        return (K_DL_CUDA_HOST, 0)


def check(condition, message):
    if not condition:
        print("FAILED:", message)
        sys.exit(1)


check(lib.cuwrap_test_start() == 0, lib.cuwrap_test_error().decode())

# cuwrap -> numpy, one dimension: the values, zero copy both ways, one deletion.
a = np.from_dlpack(Exported(lib.cuwrap_test_export_pinned(6, 0)))
check(a.dtype == np.int32, f"dtype {a.dtype}")
check(a.shape == (6,), f"shape {a.shape}")
check(a.tolist() == [0, 1, 4, 9, 16, 25], f"values {a.tolist()}")
# numpy < 2 marks from_dlpack arrays read-only (a legacy tensor cannot say it is writable):
# show that the array is cuwrap's memory by writing through cuwrap.
lib.cuwrap_test_write_last(3, 1000)
check(a[3] == 1000, "cuwrap's write shows in numpy's array (no copy)")
check(lib.cuwrap_test_deletions() == 0, "deleted while numpy holds the array")
view = a[2:]  # a view keeps the tensor alive too
del a
gc.collect()
check(lib.cuwrap_test_deletions() == 0, "deleted while a numpy view holds the memory")
check(view.tolist() == [4, 1000, 16, 25], f"view {view.tolist()}")
del view
gc.collect()
check(lib.cuwrap_test_deletions() == 1, f"{lib.cuwrap_test_deletions()} deletions, expected 1")

# Two dimensions: cuwrap's shape and strides.
m = np.from_dlpack(Exported(lib.cuwrap_test_export_pinned(2, 3)))
check(m.shape == (2, 3), f"shape {m.shape}")
check(m.strides == (12, 4), f"strides {m.strides}")
check(m[1, 2] == 25, f"m[1, 2] = {m[1, 2]}")
check(m.T.copy().tolist() == [[0, 9], [1, 16], [4, 25]], "transpose")
del m
gc.collect()
check(lib.cuwrap_test_deletions() == 2, f"{lib.cuwrap_test_deletions()} deletions, expected 2")


# numpy -> cuwrap: cuwrap takes numpy's tensor, checks it and calls numpy's deleter.
def give(array):
    capsule = array.__dlpack__()
    pointer = capsule_get(capsule, DLTENSOR)
    capsule_set_name(capsule, USED_DLTENSOR)  # consumed: its destructor leaves it alone
    return pointer


b = np.arange(10, dtype=np.float64)
check(lib.cuwrap_test_import_sum(give(b)) == 45.0, "sum of numpy's arange(10)")
check(lib.cuwrap_test_import_sum(give(b[::2])) == -1, "a strided view is refused")
check(b"not contiguous: shape (5), strides (2)" in lib.cuwrap_test_error(),
      lib.cuwrap_test_error().decode())
check(lib.cuwrap_test_import_sum(give(np.arange(4, dtype=np.int32))) == -1, "int32 as float64")
check(b"the tensor holds int32, the view's element type is float64" in lib.cuwrap_test_error(),
      lib.cuwrap_test_error().decode())

lib.cuwrap_test_stop()
print("numpy", np.__version__, "exchanged tensors with cuwrap")
