// Helpers for writing host functions that stand in for kernels on the software driver
// (register_kernel in swcuda/control.h, or a SWCUDA_KERNELS plug-in). Header-only C++.
//
//   void saxpy(const swcu_launch* launch, void*) {
//     const auto a = swcuda::param<float>(*launch, 0);
//     const auto* x = swcuda::param<const float*>(*launch, 1);
//     auto* y = swcuda::param<float*>(*launch, 2);
//     const auto n = swcuda::param<int>(*launch, 3);
//     swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
//       const auto i = static_cast<int>(block.x * launch->block[0] + thread.x);
//       if (i < n) y[i] = a * x[i] + y[i];
//     });
//   }
//
// Threads run one after another, so a kernel that relies on threads of a block running
// together (__syncthreads, shared memory exchanges) needs a block-level emulation
// (for_each_block) instead.
#ifndef SWCUDA_EMULATION_HPP
#define SWCUDA_EMULATION_HPP

#include <swcuda/control.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

// `swcuda` is a class with static members rather than a namespace, so that a program may also
// have a function named swcuda (as cuwrap's tests do): qualified names such as swcuda::param
// find the class, calls such as swcuda() the function.
struct swcuda {
  swcuda() = delete;

  /// A block or thread index (blockIdx, threadIdx).
  struct index3 {
    unsigned x, y, z;
  };

  /// Parameter `index` of the launch as a T, copied from the packed parameters. Aborts with a
  /// message naming the kernel when the launch has no such parameter or its size is not
  /// sizeof(T) (a host function that reads the wrong type would compute garbage).
  template <class T>
  static T param(const swcu_launch& launch, std::size_t index) {
    static_assert(std::is_trivially_copyable_v<T>, "kernel parameters are trivially copyable");
    if (index >= launch.param_count) {
      std::fprintf(stderr,
                   "swcuda::param: kernel %s has %zu parameter(s); parameter %zu asked for\n",
                   launch.kernel, launch.param_count, index);
      std::abort();
    }
    if (launch.param_sizes[index] != sizeof(T)) {
      std::fprintf(stderr,
                   "swcuda::param: kernel %s, parameter %zu has %zu bytes; the type asked for "
                   "has %zu\n",
                   launch.kernel, index, launch.param_sizes[index], sizeof(T));
      std::abort();
    }
    alignas(T) unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, launch.params + launch.param_offsets[index], sizeof(T));
    return *std::launder(reinterpret_cast<T*>(bytes));
  }

  /// Calls f(block) for every block of the grid, x fastest.
  template <class F>
  static void for_each_block(const swcu_launch& launch, F&& f) {
    for (unsigned z = 0; z < launch.grid[2]; ++z) {
      for (unsigned y = 0; y < launch.grid[1]; ++y) {
        for (unsigned x = 0; x < launch.grid[0]; ++x) f(index3{x, y, z});
      }
    }
  }

  /// Calls f(block, thread) for every thread of every block, x fastest (the threads of a
  /// block, block after block).
  template <class F>
  static void for_each_thread(const swcu_launch& launch, F&& f) {
    for_each_block(launch, [&](index3 block) {
      for (unsigned z = 0; z < launch.block[2]; ++z) {
        for (unsigned y = 0; y < launch.block[1]; ++y) {
          for (unsigned x = 0; x < launch.block[0]; ++x) f(block, index3{x, y, z});
        }
      }
    });
  }
};

#endif  // SWCUDA_EMULATION_HPP
