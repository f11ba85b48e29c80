// Every export of the toolkit stub, with a default body, and the tables of symbols.hpp.
//
// The default bodies are weak: a function that has a real implementation elsewhere in the driver
// (a strong definition with the same name) replaces its default at link time, so implementing a
// function needs no change here. The defaults count the call, apply the fault rules and return
// CUDA_ERROR_NOT_SUPPORTED (see prologue.cpp). This file must not include cuda.h: each default
// is declared `int name(void)`, which the C ABI lets any caller call with any arguments.
#include <algorithm>

#include "core/prologue.hpp"
#include "core/symbols.hpp"

extern "C" {
#define SWCU_EXPORT(name, base)                             \
  __attribute__((weak, visibility("default"))) int name() { \
    return swcu::unimplemented(swcu::Sym::name);            \
  }
#include "core/generated/exports.inc"
#undef SWCU_EXPORT
}

namespace swcu {
namespace {

using Function = int (*)();

// Resolved at load time; with -Bsymbolic they bind to this library's definitions.
const Function kAddresses[] = {
#define SWCU_EXPORT(name, base) &name,
#include "core/generated/exports.inc"
#undef SWCU_EXPORT
};

constexpr ExportInfo kExports[] = {
#define SWCU_EXPORT(name, base) {#name, #base},
#include "core/generated/exports.inc"
#undef SWCU_EXPORT
};

constexpr Variant kVariants[] = {
#define SWCU_VARIANT(base, version, per_thread, exported) \
  {#base, version, PerThread::per_thread, Sym::exported},
#include "core/generated/symbols.inc"
#undef SWCU_VARIANT
};

static_assert(std::size(kExports) == kExportCount);
static_assert(std::size(kAddresses) == kExportCount);

}  // namespace

std::span<const ExportInfo> exports() noexcept { return kExports; }

std::span<const Variant> variants() noexcept { return kVariants; }

std::span<const Variant> variants_of(std::string_view base) noexcept {
  struct ByBase {
    bool operator()(const Variant& v, std::string_view b) const { return v.base < b; }
    bool operator()(std::string_view b, const Variant& v) const { return b < v.base; }
  };
  const auto [first, last] =
      std::equal_range(std::begin(kVariants), std::end(kVariants), base, ByBase{});
  return {first, last};
}

void* export_address(Sym sym) noexcept { return reinterpret_cast<void*>(kAddresses[index(sym)]); }

std::optional<Sym> find_export(std::string_view name) noexcept {
  const auto it =
      std::lower_bound(std::begin(kExports), std::end(kExports), name,
                       [](const ExportInfo& e, std::string_view n) { return e.name < n; });
  if (it == std::end(kExports) || it->name != name) return std::nullopt;
  return static_cast<Sym>(it - std::begin(kExports));
}

}  // namespace swcu
