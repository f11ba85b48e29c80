#include "cuwrap/context.hpp"

#include <string>

#include "cuwrap/stream.hpp"  // host-callback exceptions that synchronize() rethrows

namespace cuwrap {
namespace {

const detail::driver_table& drv() { return detail::driver(); }

// Runs `query` with `ctx` current (pushing it only if needed) for the cuCtx* calls that act on
// the current context.
template <class Query>
auto with_current(context_ref ctx, const char* operation, std::source_location where,
                  Query&& query) {
  detail::expect_not_moved_from(!ctx.empty(), "context", operation, where);
  const scoped_current_context guard{ctx, where};
  return query(drv());
}

}  // namespace

std::optional<context_ref> current_context(std::source_location where) {
  CUcontext current{};
  check(drv().cuCtxGetCurrent(&current), "cuCtxGetCurrent", where);
  if (current == nullptr) {
    return std::nullopt;
  }
  return context_ref{current};
}

scoped_current_context::scoped_current_context(context_ref ctx, std::source_location where) {
  detail::expect_argument_not_moved_from(!ctx.empty(), "scoped_current_context",
                                         "scoped_current_context", "context", where);
  CUcontext current{};
  check(drv().cuCtxGetCurrent(&current), "cuCtxGetCurrent", where);
  if (current != ctx.get()) {
    check(drv().cuCtxPushCurrent(ctx.get()), "cuCtxPushCurrent", where);
    pushed_ = true;
  }
}

scoped_current_context::~scoped_current_context() {
  if (pushed_) {
    CUcontext popped{};
    check_nothrow(drv().cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  }
}

cuwrap::device context_ref::device(std::source_location where) const {
  const CUdevice handle = with_current(*this, "device", where, [where](const auto& d) {
    CUdevice dev{};
    check(d.cuCtxGetDevice(&dev), "cuCtxGetDevice", where);
    return dev;
  });
  return cuwrap::device::get(handle, where);  // the driver's CUdevice is the ordinal
}

void context_ref::synchronize(std::source_location where) const {
  with_current(*this, "synchronize", where,
               [where](const auto& d) { check(d.cuCtxSynchronize(), "cuCtxSynchronize", where); });
  if (detail::pending_host_exceptions.load(std::memory_order_relaxed) != 0) [[unlikely]] {
    detail::rethrow_context_host_exception(handle_);
  }
}

context_flags context_ref::flags(std::source_location where) const {
  return with_current(*this, "flags", where, [where](const auto& d) {
    unsigned flags = 0;
    check(d.cuCtxGetFlags(&flags), "cuCtxGetFlags", where);
    return static_cast<context_flags>(flags);
  });
}

void context_ref::set_flags(context_flags flags, std::source_location where) const {
  with_current(*this, "set_flags", where, [flags, where](const auto& d) {
    const CUresult r = d.cuCtxSetFlags(static_cast<unsigned>(flags));
    if (r != CUDA_SUCCESS) {
      detail::throw_error(make_error_code(r), "cuCtxSetFlags",
                          "flags " + std::to_string(static_cast<unsigned>(flags)), where);
    }
  });
}

void context_ref::record_event(event_ref e, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "context", "record_event", where);
  detail::expect_argument_not_moved_from(!e.empty(), "context", "record_event", "event", where);
  check(drv().cuCtxRecordEvent(handle_, e.get()), "cuCtxRecordEvent", where);
}

void context_ref::wait_event(event_ref e, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "context", "wait_event", where);
  detail::expect_argument_not_moved_from(!e.empty(), "context", "wait_event", "event", where);
  check(drv().cuCtxWaitEvent(handle_, e.get()), "cuCtxWaitEvent", where);
}

std::size_t context_ref::limit(context_limit which, std::source_location where) const {
  return with_current(*this, "limit", where, [which, where](const auto& d) {
    std::size_t value = 0;
    const CUresult r = d.cuCtxGetLimit(&value, static_cast<CUlimit>(which));
    if (r != CUDA_SUCCESS) {
      detail::throw_error(make_error_code(r), "cuCtxGetLimit",
                          "limit " + std::to_string(static_cast<int>(which)), where);
    }
    return value;
  });
}

void context_ref::set_limit(context_limit which, std::size_t value,
                            std::source_location where) const {
  with_current(*this, "set_limit", where, [which, value, where](const auto& d) {
    const CUresult r = d.cuCtxSetLimit(static_cast<CUlimit>(which), value);
    if (r != CUDA_SUCCESS) {
      detail::throw_error(
          make_error_code(r), "cuCtxSetLimit",
          "limit " + std::to_string(static_cast<int>(which)) + " to " + std::to_string(value),
          where);
    }
  });
}

stream_priority_range context_ref::stream_priorities(std::source_location where) const {
  return with_current(*this, "stream_priorities", where, [where](const auto& d) {
    stream_priority_range range{};
    check(d.cuCtxGetStreamPriorityRange(&range.least, &range.greatest),
          "cuCtxGetStreamPriorityRange", where);
    return range;
  });
}

cuwrap::cache_config context_ref::cache_config(std::source_location where) const {
  return with_current(*this, "cache_config", where, [where](const auto& d) {
    CUfunc_cache config{};
    check(d.cuCtxGetCacheConfig(&config), "cuCtxGetCacheConfig", where);
    return static_cast<cuwrap::cache_config>(config);
  });
}

void context_ref::set_cache_config(cuwrap::cache_config config, std::source_location where) const {
  with_current(*this, "set_cache_config", where, [config, where](const auto& d) {
    check(d.cuCtxSetCacheConfig(static_cast<CUfunc_cache>(config)), "cuCtxSetCacheConfig", where);
  });
}

unsigned long long context_ref::id(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "context", "id", where);
  unsigned long long id = 0;
  check(drv().cuCtxGetId(handle_, &id), "cuCtxGetId", where);
  return id;
}

detail::context_owner::~context_owner() {
  if (green != nullptr) {
    check_nothrow(drv().cuGreenCtxDestroy(green), "cuGreenCtxDestroy");
  } else if (primary) {
    check_nothrow(drv().cuDevicePrimaryCtxRelease(device), "cuDevicePrimaryCtxRelease");
  } else {
    check_nothrow(drv().cuCtxDestroy(handle), "cuCtxDestroy");
  }
}

cuwrap::device owning_context::device(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "context", "device", where);
  return cuwrap::device::get(lifetime()->device, where);
}

namespace {

std::shared_ptr<const detail::context_owner> retain_primary(cuwrap::device dev,
                                                            std::source_location where) {
  CUcontext handle{};
  const CUresult r = drv().cuDevicePrimaryCtxRetain(&handle, dev.get());
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuDevicePrimaryCtxRetain",
                        "device " + std::to_string(dev.ordinal()), where);
  }
  try {
    return std::make_shared<const detail::context_owner>(handle, dev.get(), true);
  } catch (...) {
    check_nothrow(drv().cuDevicePrimaryCtxRelease(dev.get()), "cuDevicePrimaryCtxRelease");
    throw;
  }
}

// What the error of a refused cuCtxCreate says about its options.
std::string describe(const context_options& options) {
  std::string text;
  if (options.sm_count) {
    text += ", execution affinity of " + std::to_string(*options.sm_count) + " SMs";
  }
  if (options.cig) {
    text += ", CIG data type " + std::to_string(static_cast<unsigned>(options.cig->type));
  }
  return text;
}

std::shared_ptr<const detail::context_owner> create_context(cuwrap::device dev, context_flags flags,
                                                            const context_options& options,
                                                            std::source_location where) {
  CUctxCreateParams params{};
  CUexecAffinityParam affinity{};
  CUctxCigParam cig{};
  if (options.sm_count) {
    affinity.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    affinity.param.smCount.val = *options.sm_count;
    params.execAffinityParams = &affinity;
    params.numExecAffinityParams = 1;
  }
  if (options.cig) {
    cig.sharedDataType = static_cast<CUcigDataType>(options.cig->type);
    cig.sharedData = options.cig->shared_data;
    params.cigParams = &cig;
  }
  CUcontext handle{};
  const CUresult r = drv().cuCtxCreate(&handle, &params, static_cast<unsigned>(flags), dev.get());
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuCtxCreate",
                        "device " + std::to_string(dev.ordinal()) + ", flags " +
                            std::to_string(static_cast<unsigned>(flags)) + describe(options),
                        where);
  }
  // cuCtxCreate pushed the new context; restore the caller's stack. On any failure the new
  // context is destroyed, so a failed constructor leaves nothing behind.
  CUcontext popped{};
  if (const CUresult pop = drv().cuCtxPopCurrent(&popped); pop != CUDA_SUCCESS) {
    check_nothrow(drv().cuCtxDestroy(handle), "cuCtxDestroy");
    detail::throw_error(make_error_code(pop), "cuCtxPopCurrent", "after cuCtxCreate", where);
  }
  try {
    return std::make_shared<const detail::context_owner>(handle, dev.get(), false);
  } catch (...) {
    check_nothrow(drv().cuCtxDestroy(handle), "cuCtxDestroy");
    throw;
  }
}

}  // namespace

primary_context::primary_context(cuwrap::device dev, std::source_location where)
    : owning_context{retain_primary(dev, where)} {}

bool primary_context::is_active(cuwrap::device dev, std::source_location where) {
  unsigned flags = 0;
  int active = 0;
  check(drv().cuDevicePrimaryCtxGetState(dev.get(), &flags, &active), "cuDevicePrimaryCtxGetState",
        where);
  return active != 0;
}

context_flags primary_context::flags(cuwrap::device dev, std::source_location where) {
  unsigned flags = 0;
  int active = 0;
  check(drv().cuDevicePrimaryCtxGetState(dev.get(), &flags, &active), "cuDevicePrimaryCtxGetState",
        where);
  return static_cast<context_flags>(flags);
}

void primary_context::set_flags(cuwrap::device dev, context_flags flags,
                                std::source_location where) {
  check(drv().cuDevicePrimaryCtxSetFlags(dev.get(), static_cast<unsigned>(flags)),
        "cuDevicePrimaryCtxSetFlags", where);
}

void primary_context::reset(cuwrap::device dev, std::source_location where) {
  check(drv().cuDevicePrimaryCtxReset(dev.get()), "cuDevicePrimaryCtxReset", where);
}

context::context(cuwrap::device dev, context_flags flags, std::source_location where)
    : owning_context{create_context(dev, flags, {}, where)} {}

context::context(cuwrap::device dev, context_flags flags, const context_options& options,
                 std::source_location where)
    : owning_context{create_context(dev, flags, options, where)} {}

}  // namespace cuwrap
