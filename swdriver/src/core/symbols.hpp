// The driver's exports and cuGetProcAddress variants, from the generated tables.
// Deliberately free of cuda.h, so that exports.cpp can define every export with one signature.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace swcu {

/// One exported driver function (an exported name, not a base name). Its value indexes the call
/// counters and the tables below.
enum class Sym : std::uint16_t {
#define SWCU_EXPORT(name, base) name,
#include "core/generated/exports.inc"
#undef SWCU_EXPORT
};

inline constexpr std::size_t kExportCount = 0
#define SWCU_EXPORT(name, base) +1
#include "core/generated/exports.inc"
#undef SWCU_EXPORT
    ;

/// Which default stream a cuGetProcAddress variant uses.
enum class PerThread : std::uint8_t { NONE, PTDS, PTSZ };

struct ExportInfo {
  std::string_view name;  ///< exported name, e.g. "cuMemAlloc_v2" (NUL-terminated)
  std::string_view base;  ///< base name, e.g. "cuMemAlloc" (NUL-terminated)
};

/// One row of the cuGetProcAddress table: `base` at `version` is the export `sym`.
struct Variant {
  std::string_view base;
  int version;
  PerThread per_thread;
  Sym sym;
};

/// Every export, indexed by Sym (sorted by exported name).
[[nodiscard]] std::span<const ExportInfo> exports() noexcept;
/// Every variant, sorted by base name, then version.
[[nodiscard]] std::span<const Variant> variants() noexcept;
/// The variants of one base name (empty when it is not a driver function).
[[nodiscard]] std::span<const Variant> variants_of(std::string_view base) noexcept;
/// The exported function itself, as cuGetProcAddress returns it.
[[nodiscard]] void* export_address(Sym sym) noexcept;
/// The export with exactly this name.
[[nodiscard]] std::optional<Sym> find_export(std::string_view name) noexcept;

[[nodiscard]] inline std::size_t index(Sym sym) noexcept { return static_cast<std::size_t>(sym); }

}  // namespace swcu
