// The control API (include/swcuda/control.h). Its calls are not counted and never fault.
#include "control/control.hpp"

#include <mutex>
#include <string>

#include "core/api.hpp"
#include "core/faults.hpp"
#include "core/prologue.hpp"
#include "core/state.hpp"
#include "exec/launch.hpp"
#include "graph/graph.hpp"

namespace swcu {
namespace {

std::string& last_error_message() {
  thread_local std::string message;
  return message;
}

size_t live_handles(swcu_handle_kind kind_arg) {
  const int kind = raw(kind_arg);
  if (kind < 0 || kind >= SWCU_HANDLE_KIND_COUNT) return 0;
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.registries[static_cast<size_t>(kind)].size();
}

size_t live_handles_total() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  size_t total = 0;
  for (const Registry& r : s.registries) total += r.size();
  return total;
}

const char* handle_kind_name(swcu_handle_kind kind) {
  switch (raw(kind)) {
    case SWCU_PRIMARY_CONTEXT: return "primary context";
    case SWCU_CONTEXT: return "context";
    case SWCU_STREAM: return "stream";
    case SWCU_EVENT: return "event";
    case SWCU_MODULE: return "module";
    case SWCU_LIBRARY: return "library";
    case SWCU_DEVICE_ALLOCATION: return "device allocation";
    case SWCU_HOST_ALLOCATION: return "host allocation";
    case SWCU_HOST_REGISTRATION: return "host registration";
    case SWCU_MEMORY_POOL: return "memory pool";
    case SWCU_GRAPH: return "graph";
    case SWCU_GRAPH_EXEC: return "graph exec";
    case SWCU_USER_OBJECT: return "user object";
    case SWCU_LINK_STATE: return "link state";
    case SWCU_IPC_MAPPING: return "ipc mapping";
    case SWCU_VMM_ALLOCATION: return "vmm allocation";
    case SWCU_ADDRESS_RESERVATION: return "address reservation";
    case SWCU_GREEN_CONTEXT: return "green context";
    case SWCU_ARRAY: return "array";
    case SWCU_MIPMAPPED_ARRAY: return "mipmapped array";
    default: break;
  }
  return "unknown";
}

unsigned long long control_call_count(const char* name) {
  return name == nullptr ? 0 : call_count(std::string_view(name));
}

unsigned long long control_total_call_count() { return total_call_count(); }

size_t call_counts(swcu_call_count* out, size_t capacity) {
  size_t nonzero = 0;
  for (size_t i = 0; i < kExportCount; ++i) {
    const unsigned long long calls = call_count(static_cast<Sym>(i));
    if (calls == 0) continue;
    if (out != nullptr && nonzero < capacity) {
      out[nonzero] = {exports()[i].name.data(), exports()[i].base.data(), calls};
    }
    ++nonzero;
  }
  return nonzero;
}

void control_reset_call_counts() { reset_call_counts(); }

int add_fault_rule(const char* text) {
  try {
    std::string error;
    std::vector<FaultRule> parsed;
    if (text == nullptr ||
        std::string_view(text).find_first_not_of(" \t\r\n;") == std::string_view::npos) {
      error = "no fault rule given: expected name:when:code";
    } else if (parse_fault_rules(text, parsed, error)) {
      add_fault_rules(std::move(parsed));
      last_error_message().clear();
      return 0;
    }
    last_error_message() = std::move(error);
  } catch (...) {
    last_error_message() = "out of memory";
  }
  return -1;
}

void control_clear_fault_rules() { clear_fault_rules(); }

const char* last_error() { return last_error_message().c_str(); }

int context_stack_depth() { return static_cast<int>(context_stack().size()); }

size_t reclaimed_handles(swcu_handle_kind kind_arg) {
  const int kind = raw(kind_arg);
  if (kind < 0 || kind >= SWCU_HANDLE_KIND_COUNT) return 0;
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.reclaimed[static_cast<size_t>(kind)];
}

int control_set_conditional(CUgraphConditionalHandle handle, unsigned value) {
  const char* why = "";
  const int r = swcu::set_conditional(handle, value, why);
  try {
    last_error_message() = r == 0 ? "" : why;
  } catch (...) {
    last_error_message().clear();
  }
  return r;
}

const swcu_control kTable = {
    sizeof(swcu_control),
    SWCU_CONTROL_VERSION,
    live_handles,
    live_handles_total,
    handle_kind_name,
    control_call_count,
    control_total_call_count,
    call_counts,
    control_reset_call_counts,
    add_fault_rule,
    control_clear_fault_rules,
    last_error,
    context_stack_depth,
    reclaimed_handles,
    swcu::register_kernel,
    swcu::launch_log_size,
    swcu::launch_log_entry,
    swcu::clear_launch_log,
    control_set_conditional,
};

}  // namespace

const swcu_control* control_table() noexcept { return &kTable; }

}  // namespace swcu
