// The MPI datatype of each arithmetic type, chosen at compile time: a type with none does not
// compile (mpi_type concept).
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <type_traits>

namespace cuwrap::mpi {

namespace detail {
template <class T>
inline constexpr bool always_false = false;
}  // namespace detail

/// Types with an MPI datatype: the arithmetic types (bool excepted: MPI_C_BOOL's size is not
/// sizeof(bool) everywhere) and std::complex<float/double>.
template <class T>
concept mpi_type = (std::is_arithmetic_v<std::remove_cv_t<T>> &&
                    !std::is_same_v<std::remove_cv_t<T>, bool>) ||
                   std::is_same_v<std::remove_cv_t<T>, std::complex<float>> ||
                   std::is_same_v<std::remove_cv_t<T>, std::complex<double>>;

/// The MPI datatype of T (MPI_FLOAT for float, MPI_INT64_T for std::int64_t, ...). The choice
/// is made at compile time; the handle is read at run time (Open MPI's handles are addresses).
template <mpi_type T>
[[nodiscard]] MPI_Datatype datatype() noexcept {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) {
    return MPI_FLOAT;
  } else if constexpr (std::is_same_v<U, double>) {
    return MPI_DOUBLE;
  } else if constexpr (std::is_same_v<U, long double>) {
    return MPI_LONG_DOUBLE;
  } else if constexpr (std::is_same_v<U, std::complex<float>>) {
    return MPI_C_FLOAT_COMPLEX;
  } else if constexpr (std::is_same_v<U, std::complex<double>>) {
    return MPI_C_DOUBLE_COMPLEX;
  } else if constexpr (std::is_same_v<U, char>) {
    return MPI_CHAR;
  } else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>) {
    if constexpr (sizeof(U) == 1)
      return MPI_INT8_T;
    else if constexpr (sizeof(U) == 2)
      return MPI_INT16_T;
    else if constexpr (sizeof(U) == 4)
      return MPI_INT32_T;
    else if constexpr (sizeof(U) == 8)
      return MPI_INT64_T;
    else
      static_assert(detail::always_false<U>, "no MPI datatype of this size");
  } else if constexpr (std::is_integral_v<U>) {
    if constexpr (sizeof(U) == 1)
      return MPI_UINT8_T;
    else if constexpr (sizeof(U) == 2)
      return MPI_UINT16_T;
    else if constexpr (sizeof(U) == 4)
      return MPI_UINT32_T;
    else if constexpr (sizeof(U) == 8)
      return MPI_UINT64_T;
    else
      static_assert(detail::always_false<U>, "no MPI datatype of this size");
  } else {
    static_assert(detail::always_false<U>, "no MPI datatype for this type");
  }
}

/// A number naming T's kind and size, equal on every rank for the same T: what the checked
/// mode compares across ranks before a collective (bits 0-7: size; 8-9: 0 unsigned, 1 signed,
/// 2 floating, 3 complex).
template <mpi_type T>
[[nodiscard]] constexpr int type_code() noexcept {
  using U = std::remove_cv_t<T>;
  int kind = 0;
  if constexpr (std::is_floating_point_v<U>) {
    kind = 2;
  } else if constexpr (std::is_arithmetic_v<U>) {
    kind = std::is_signed_v<U> ? 1 : 0;
  } else {
    kind = 3;
  }
  return static_cast<int>(sizeof(U)) | kind << 8;
}

}  // namespace cuwrap::mpi
