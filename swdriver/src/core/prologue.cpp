#include "core/prologue.hpp"

#include <array>
#include <atomic>

#include "core/cuda_api.hpp"
#include "core/faults.hpp"
#include "core/state.hpp"

namespace swcu {
namespace {

using Counters = std::array<std::atomic<unsigned long long>, kExportCount>;

Counters& counters() noexcept {
  static Counters* const counts = new Counters{};  // never destroyed: calls may come during exit
  return *counts;
}

}  // namespace

Fault enter(Sym sym) noexcept {
  counters()[index(sym)].fetch_add(1, std::memory_order_relaxed);
  return check_faults(sym);
}

int unimplemented(Sym sym) noexcept {
  if (const Fault fault = enter(sym); fault.code != 0) {
    if (fault.sticky) break_current_context(fault.code);
    return fault.code;
  }
  if (in_host_function()) return CUDA_ERROR_NOT_PERMITTED;
  if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return CUDA_ERROR_NOT_SUPPORTED;
}

bool& in_host_function() noexcept {
  thread_local bool flag = false;
  return flag;
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
