#include "core/state.hpp"

namespace swcu {
namespace {

// How many destroyed objects keep their memory, so that their addresses are not reused.
constexpr std::size_t kGraveyardSize = 1 << 16;

}  // namespace

Object* Registry::find(const void* handle) const noexcept {
  const auto it = live_.find(handle);
  return it == live_.end() ? nullptr : it->second.get();
}

std::unique_ptr<Object> Registry::take(const void* handle) noexcept {
  const auto it = live_.find(handle);
  if (it == live_.end()) return nullptr;
  std::unique_ptr<Object> object = std::move(it->second);
  live_.erase(it);
  return object;
}

Context::Context(swcu_handle_kind k, int dev, unsigned int creation_flags, int api,
                 unsigned long long uid)
    : Object(k), device(dev), flags(creation_flags), api_version(api), id(uid) {
  reset_settings();
}

void Context::reset_settings() noexcept {
  cache_config = CU_FUNC_CACHE_PREFER_NONE;
  for (std::size_t i = 0; i < limits.size(); ++i) {
    limits[i] = default_limit(static_cast<CUlimit>(i));
  }
}

Device* State::device(CUdevice ordinal) noexcept {
  if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= devices.size()) return nullptr;
  return &devices[static_cast<std::size_t>(ordinal)];
}

Context* State::context(CUcontext handle) noexcept {
  for (const swcu_handle_kind kind : {SWCU_CONTEXT, SWCU_PRIMARY_CONTEXT}) {
    if (Context* const ctx = find<Context>(kind, handle)) return ctx;
  }
  const auto green = green_contexts.find(handle);
  return green != green_contexts.end() ? green->second : nullptr;
}

void State::destroy(swcu_handle_kind kind, const void* handle) noexcept {
  std::unique_ptr<Object> object = registry(kind).take(handle);
  if (!object) return;
  object->release();
  try {
    graveyard_.push_back(std::move(object));
  } catch (...) {
    return;  // out of memory: `object` is freed here, at worst its address is reused
  }
  if (graveyard_.size() > kGraveyardSize) graveyard_.pop_front();
}

void State::reclaim(swcu_handle_kind kind, const void* handle) noexcept {
  if (registry(kind).find(handle) == nullptr) return;
  ++reclaimed[static_cast<std::size_t>(kind)];
  destroy(kind, handle);
}

State& state() noexcept {
  static State* const instance = new State;
  return *instance;
}

bool is_initialized() noexcept { return state().initialized.load(std::memory_order_acquire); }

std::vector<CUcontext>& context_stack() noexcept {
  thread_local std::vector<CUcontext> stack;
  return stack;
}

std::size_t default_limit(CUlimit limit) noexcept {
  switch (limit) {
    case CU_LIMIT_STACK_SIZE: return 1024;
    case CU_LIMIT_PRINTF_FIFO_SIZE: return 1 << 20;
    case CU_LIMIT_MALLOC_HEAP_SIZE: return 8 << 20;
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH: return 2;
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: return 2048;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY: return 32;
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: return 0;
    case CU_LIMIT_SHMEM_SIZE: return 0;
    case CU_LIMIT_CIG_ENABLED: return 0;
    case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED: return 1;
    case CU_LIMIT_MAX: break;
  }
  return 0;
}

}  // namespace swcu
