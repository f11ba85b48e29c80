// Flag enums: one set of operators for every enum whose values combine (context_flags,
// event_flags, pinned_flags, registration_flags, instantiate_flags).
#pragma once

#include <type_traits>

namespace cuwrap {

/// Opt-in: specialize to true for an enum whose enumerators are bits that combine with |.
template <class Enum>
inline constexpr bool is_flags_enum = false;

/// An enum that opted in with is_flags_enum.
template <class Enum>
concept flags_enum = std::is_enum_v<Enum> && is_flags_enum<Enum>;

/// The union of two flag sets.
template <flags_enum Enum>
[[nodiscard]] constexpr Enum operator|(Enum a, Enum b) noexcept {
  using bits = std::underlying_type_t<Enum>;
  return static_cast<Enum>(static_cast<bits>(a) | static_cast<bits>(b));
}
/// The flags set in both.
template <flags_enum Enum>
[[nodiscard]] constexpr Enum operator&(Enum a, Enum b) noexcept {
  using bits = std::underlying_type_t<Enum>;
  return static_cast<Enum>(static_cast<bits>(a) & static_cast<bits>(b));
}
/// Adds `b`'s flags to `a`.
template <flags_enum Enum>
constexpr Enum& operator|=(Enum& a, Enum b) noexcept {
  return a = a | b;
}
/// True if `flags` has every flag of `flag` (false for an empty `flag`).
template <flags_enum Enum>
[[nodiscard]] constexpr bool has(Enum flags, Enum flag) noexcept {
  using bits = std::underlying_type_t<Enum>;
  return static_cast<bits>(flag) != 0 && (flags & flag) == flag;
}

}  // namespace cuwrap
