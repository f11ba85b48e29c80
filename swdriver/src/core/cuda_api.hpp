// The one way the driver's sources include cuda.h.
//
// __CUDA_API_VERSION_INTERNAL is how cuda.h is meant to be seen from inside a driver: the
// renaming macros (cuCtxCreate -> cuCtxCreate_v4, ...) are undefined and every older ABI is
// declared under its exported name, so a definition such as `CUresult cuCtxCreate(CUcontext*,
// unsigned, CUdevice)` is checked by the compiler against the legacy prototype. The _ODR macro
// keeps the enums identical to the public ones (no internal *_MAX members).
//
// Everything cuda.h declares gets default visibility, so a definition of a declared driver
// function is exported although the library builds with -fvisibility=hidden.
#pragma once

#ifdef CUDA_VERSION
#error "cuda.h was included before swdriver/src/cuda_api.hpp"
#endif

#define __CUDA_API_VERSION_INTERNAL 1
#define __CUDA_API_VERSION_INTERNAL_ODR 1

#pragma GCC visibility push(default)
#include <cuda.h>
#include <cudaProfiler.h>
#pragma GCC visibility pop
