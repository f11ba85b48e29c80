#include "swcuda.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuwrap/detail/driver.hpp"

namespace cuwrap::testing {

const swcu_control& swcuda() {
  static const swcu_control* control = [] {
    const void* table = nullptr;
    if (detail::driver().cuGetExportTable(&table, &SWCU_CONTROL_TABLE_ID) != CUDA_SUCCESS ||
        table == nullptr) {
      std::fputs("this test needs the software driver (CUWRAP_DRIVER=software)\n", stderr);
      std::abort();
    }
    return static_cast<const swcu_control*>(table);
  }();
  return *control;
}

std::size_t live_handles() { return swcuda().live_handles_total(); }

std::string live_handle_report() {
  std::string report;
  for (int kind = 0; kind < SWCU_HANDLE_KIND_COUNT; ++kind) {
    const auto k = static_cast<swcu_handle_kind>(kind);
    if (const auto n = swcuda().live_handles(k); n != 0) {
      report += (report.empty() ? "" : ", ") + std::string{swcuda().handle_kind_name(k)} + ": " +
                std::to_string(n);
    }
  }
  return report;
}

call_counts current_call_counts() {
  std::vector<swcu_call_count> rows(64);
  for (;;) {
    const std::size_t n = swcuda().call_counts(rows.data(), rows.size());
    if (n <= rows.size()) {
      rows.resize(n);
      break;
    }
    rows.resize(n);
  }
  call_counts counts;
  for (const auto& row : rows) {
    counts[row.name] = row.calls;
  }
  return counts;
}

call_counts difference(const call_counts& after, const call_counts& before) {
  call_counts delta;
  for (const auto& [name, calls] : after) {
    const auto it = before.find(name);
    const auto previous = it == before.end() ? 0ULL : it->second;
    if (calls != previous) {
      delta[name] = calls - previous;
    }
  }
  return delta;
}

unsigned long long total(const call_counts& counts) {
  unsigned long long sum = 0;
  for (const auto& [name, calls] : counts) {
    sum += calls;
  }
  return sum;
}

}  // namespace cuwrap::testing
