// Kernel arguments: how each argument of a launch, a graph kernel node or a kernel node update
// becomes the value the driver copies. Device-accessible memory (device_span, device_buffer,
// stream_ordered_buffer, managed_buffer, pinned_buffer, ipc_mapping, ipc_pool_memory) passes
// as its element pointer; a moved-from owner is refused. For typed kernels every other argument
// must convert to its parameter's type without narrowing (the rules of list-initialization),
// checked at compile time.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <source_location>
#include <tuple>
#include <type_traits>
#include <utility>

namespace cuwrap {

template <class T>
class device_span;
template <class T>
class device_buffer;
template <class T>
class stream_ordered_buffer;
template <class T>
class managed_buffer;
template <class T>
class pinned_buffer;
template <class T>
class ipc_mapping;
template <class T>
class ipc_pool_memory;

namespace detail {

/// What an argument of type A is as device memory: by default, not device memory.
template <class A>
struct kernel_memory {
  static constexpr bool is_memory = false;       ///< true for spans and owners of device memory
  static constexpr const char* owner = nullptr;  ///< the owner's name; null for a span
  static constexpr bool pinned = false;          ///< host memory, whose device address may differ
  using element = void;                          ///< the element type (with its const)
};
/// kernel_memory of device-accessible memory with elements of type T.
template <class T, bool Pinned = false>
struct device_accessible {
  static constexpr bool is_memory = true;
  static constexpr const char* owner = nullptr;
  static constexpr bool pinned = Pinned;
  using element = T;
};
/// A span passes its pointer: an empty span passes its (possibly null) pointer, as in CUDA.
template <class T>
struct kernel_memory<device_span<T>> : device_accessible<T> {};
template <class T>
struct kernel_memory<device_buffer<T>> : device_accessible<T> {
  static constexpr const char* owner = "device_buffer";
};
template <class T>
struct kernel_memory<stream_ordered_buffer<T>> : device_accessible<T> {
  static constexpr const char* owner = "stream_ordered_buffer";
};
template <class T>
struct kernel_memory<managed_buffer<T>> : device_accessible<T> {
  static constexpr const char* owner = "managed_buffer";
};
template <class T>
struct kernel_memory<ipc_mapping<T>> : device_accessible<T> {
  static constexpr const char* owner = "ipc_mapping";
};
template <class T>
struct kernel_memory<ipc_pool_memory<T>> : device_accessible<T> {
  static constexpr const char* owner = "ipc_pool_memory";
};
/// Pinned memory passes its host pointer, which is its device address under unified
/// addressing (every 64-bit process); write-combined memory, whose device address differs, is
/// refused at run time.
template <class T>
struct kernel_memory<pinned_buffer<T>> : device_accessible<T, true> {
  static constexpr const char* owner = "pinned_buffer";
};

/// kernel_memory of an argument as it is passed (references and cv removed).
template <class Argument>
using memory_argument = kernel_memory<std::remove_cvref_t<Argument>>;

/// One element of To, list-initialized: what narrowing is checked against.
template <class To>
struct one_element {
  To value[1];
};

/// True if a value of type From converts implicitly to To and list-initializing a To from it
/// does not narrow ([dcl.init.list]: double to float, integer to floating point, signed to
/// unsigned, long to int, ...). Decided by type: a function argument is never a constant
/// expression, so an int literal is an int.
template <class From, class To>
concept converts_without_narrowing = std::is_convertible_v<From, To> && requires(From&& from) {
  one_element<To>{{std::forward<From>(from)}};
};

/// The value an untyped launch passes for an argument of type Argument: the element pointer
/// for device memory, the argument's own (decayed) type otherwise.
template <class Argument>
using kernel_value_t =
    std::conditional_t<memory_argument<Argument>::is_memory,
                       typename memory_argument<Argument>::element*, std::decay_t<Argument>>;

/// Throws usage_error "cuwrap::<type>::<operation>: kernel argument <index> (a <owner>) was
/// moved from (or released)".
[[noreturn, gnu::cold]] void throw_moved_from_kernel_argument(const char* type,
                                                              const char* operation,
                                                              std::size_t index, const char* owner,
                                                              std::source_location where);

/// Throws usage_error "cuwrap::<type>::<operation>: kernel argument <index> (a pinned_buffer)
/// is write-combined: ...".
[[noreturn, gnu::cold]] void throw_write_combined_kernel_argument(const char* type,
                                                                  const char* operation,
                                                                  std::size_t index,
                                                                  std::source_location where);

/// The element pointer of device memory passed as kernel argument `index`; throws usage_error
/// (before any driver call) if it is an owner that was moved from, or write-combined pinned
/// memory.
template <class Memory>
[[gnu::always_inline]] inline auto kernel_memory_pointer(const Memory& memory, std::size_t index,
                                                         const char* type, const char* operation,
                                                         std::source_location where) {
  using traits = memory_argument<Memory>;
  if constexpr (traits::owner != nullptr) {
    if (memory.moved_from()) [[unlikely]] {
      throw_moved_from_kernel_argument(type, operation, index, traits::owner, where);
    }
  }
  if constexpr (traits::pinned) {
    if (!memory.host_address_is_device_address()) [[unlikely]] {
      throw_write_combined_kernel_argument(type, operation, index, where);
    }
  }
  return memory.data();
}

/// Whether an argument of type Argument may be passed for a parameter of type Parameter of a
/// typed kernel: device memory to a pointer its element pointer converts to; anything else
/// converting without narrowing.
template <class Parameter, class Argument>
inline constexpr bool kernel_argument_fits = [] {
  using traits = memory_argument<Argument>;
  if constexpr (traits::is_memory) {
    return std::is_pointer_v<Parameter> &&
           std::is_convertible_v<typename traits::element*, Parameter>;
  } else {
    return converts_without_narrowing<Argument&&, Parameter>;
  }
}();

/// Argument `ArgumentIndex` (from 0) of a typed kernel call as its Parameter. The compile-time
/// checks are here so that a failure names the index and both types (the instantiation
/// context shows ArgumentIndex, Parameter and Argument). `type` and `operation` name the call
/// in run-time errors.
template <std::size_t ArgumentIndex, class Parameter, class Argument>
[[gnu::always_inline]] inline Parameter kernel_argument(Argument&& argument, const char* type,
                                                        const char* operation,
                                                        std::source_location where) {
  using traits = memory_argument<Argument>;
  if constexpr (traits::is_memory) {
    static_assert(kernel_argument_fits<Parameter, Argument>,
                  "kernel argument: device memory passes only to a pointer parameter its element "
                  "pointer converts to (T* to T*, const T* or void*); see ArgumentIndex (from "
                  "0), Parameter and Argument");
    static_assert(traits::owner == nullptr || std::is_lvalue_reference_v<Argument>,
                  "kernel argument: a temporary buffer would be freed while the kernel runs; "
                  "pass a named buffer");
    if constexpr (kernel_argument_fits<Parameter, Argument>) {
      return kernel_memory_pointer(argument, ArgumentIndex, type, operation, where);
    } else {
      std::abort();  // not compiled: the static_assert above has failed
    }
  } else {
    static_assert(std::is_convertible_v<Argument&&, Parameter>,
                  "kernel argument: an argument does not convert to its parameter's type; see "
                  "ArgumentIndex (from 0), Parameter and Argument");
    static_assert(
        !std::is_convertible_v<Argument&&, Parameter> || kernel_argument_fits<Parameter, Argument>,
        "kernel argument: the conversion narrows (double to float, int to float or "
        "unsigned, long to int, ...: the rules of list-initialization, by type); "
        "convert explicitly; see ArgumentIndex (from 0), Parameter and Argument");
    if constexpr (kernel_argument_fits<Parameter, Argument>) {
      return static_cast<Parameter>(std::forward<Argument>(argument));
    } else {
      std::abort();  // not compiled: a static_assert above has failed
    }
  }
}

/// Argument `ArgumentIndex` of an untyped launch as the value passed (kernel_value_t).
template <std::size_t ArgumentIndex, class Argument>
[[gnu::always_inline]] inline kernel_value_t<Argument> untyped_kernel_argument(
    Argument&& argument, const char* type, const char* operation, std::source_location where) {
  using traits = memory_argument<Argument>;
  if constexpr (traits::is_memory) {
    static_assert(traits::owner == nullptr || std::is_lvalue_reference_v<Argument>,
                  "kernel argument: a temporary buffer would be freed while the kernel runs; "
                  "pass a named buffer");
    return kernel_memory_pointer(argument, ArgumentIndex, type, operation, where);
  } else {
    return std::forward<Argument>(argument);
  }
}

/// The arguments of a typed kernel call as the tuple of its parameters (kernel_argument each).
template <class... Params, std::size_t... I, class... Args>
[[gnu::always_inline]] inline std::tuple<Params...> typed_kernel_values(
    std::index_sequence<I...>, [[maybe_unused]] const char* type,
    [[maybe_unused]] const char* operation, [[maybe_unused]] std::source_location where,
    Args&&... args) {
  return std::tuple<Params...>{
      kernel_argument<I, Params>(std::forward<Args>(args), type, operation, where)...};
}

/// The arguments of an untyped launch as the tuple of the values passed.
template <std::size_t... I, class... Args>
[[gnu::always_inline]] inline std::tuple<kernel_value_t<Args>...> untyped_kernel_values(
    std::index_sequence<I...>, [[maybe_unused]] const char* type,
    [[maybe_unused]] const char* operation, [[maybe_unused]] std::source_location where,
    Args&&... args) {
  return std::tuple<kernel_value_t<Args>...>{
      untyped_kernel_argument<I>(std::forward<Args>(args), type, operation, where)...};
}

}  // namespace detail
}  // namespace cuwrap
