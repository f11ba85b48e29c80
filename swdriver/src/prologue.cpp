#include "prologue.hpp"

#include <array>
#include <atomic>

#include "cuda_api.hpp"
#include "faults.hpp"
#include "state.hpp"

namespace swcu {
namespace {

using Counters = std::array<std::atomic<unsigned long long>, kExportCount>;

Counters& counters() noexcept {
  static Counters* const counts = new Counters{};  // never destroyed: calls may come during exit
  return *counts;
}

}  // namespace

int enter(Sym sym) noexcept {
  counters()[index(sym)].fetch_add(1, std::memory_order_relaxed);
  return check_faults(sym);
}

int unimplemented(Sym sym) noexcept {
  if (const int fault = enter(sym)) return fault;
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return CUDA_ERROR_NOT_SUPPORTED;
}

unsigned long long call_count(Sym sym) noexcept {
  return counters()[index(sym)].load(std::memory_order_relaxed);
}

unsigned long long call_count(std::string_view name) noexcept {
  if (variants_of(name).empty()) {
    const auto sym = find_export(name);
    return sym ? call_count(*sym) : 0;
  }
  unsigned long long total = 0;  // a base name: every export of that family
  for (std::size_t i = 0; i < kExportCount; ++i) {
    if (exports()[i].base == name) total += call_count(static_cast<Sym>(i));
  }
  return total;
}

unsigned long long total_call_count() noexcept {
  unsigned long long total = 0;
  for (const auto& count : counters()) total += count.load(std::memory_order_relaxed);
  return total;
}

void reset_call_counts() noexcept {
  for (auto& count : counters()) count.store(0, std::memory_order_relaxed);
}

}  // namespace swcu
