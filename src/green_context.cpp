// Green contexts: SM resources, splits, and green_context (cuwrap/green_context.hpp).
#include "cuwrap/green_context.hpp"

#include <string>

namespace cuwrap {
namespace {

const detail::driver_table& drv() { return detail::driver(); }

[[noreturn]] void refuse(const char* operation, const std::string& why,
                         std::source_location where) {
  detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), operation, why, where);
}

std::string sms_text(unsigned count) { return std::to_string(count) + " SMs"; }

// Refuses a minimum SM count the resource cannot hold, before the driver is called.
void check_min_count(const sm_resource& r, unsigned min_count, const char* operation,
                     std::source_location where) {
  if (min_count > r.count()) {
    refuse(operation,
           "at least " + sms_text(min_count) + " per group of a resource of " + sms_text(r.count()),
           where);
  }
}

// cuDevResourceGenerateDesc, cuGreenCtxCreate and cuCtxFromGreenCtx; on any failure the green
// context is destroyed, so a failed constructor leaves nothing behind.
std::shared_ptr<const detail::context_owner> create_green(cuwrap::device dev,
                                                          std::span<const sm_resource> sms,
                                                          std::source_location where) {
  if (sms.empty()) refuse("cuwrap::green_context", "no SM resource given", where);
  std::vector<CUdevResource> resources;
  resources.reserve(sms.size());
  unsigned total = 0;
  for (const sm_resource& r : sms) {
    resources.push_back(r.native());
    total += r.count();
  }
  const std::string what = "device " + std::to_string(dev.ordinal()) + ", " +
                           std::to_string(sms.size()) +
                           (sms.size() == 1 ? " resource of " : " resources of ") + sms_text(total);
  CUdevResourceDesc desc{};
  if (const CUresult r = drv().cuDevResourceGenerateDesc(&desc, resources.data(),
                                                         static_cast<unsigned>(resources.size()));
      r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuDevResourceGenerateDesc", what, where);
  }
  CUgreenCtx green{};
  if (const CUresult r =
          drv().cuGreenCtxCreate(&green, desc, dev.get(), CU_GREEN_CTX_DEFAULT_STREAM);
      r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuGreenCtxCreate", what, where);
  }
  CUcontext ctx{};
  if (const CUresult r = drv().cuCtxFromGreenCtx(&ctx, green); r != CUDA_SUCCESS) {
    check_nothrow(drv().cuGreenCtxDestroy(green), "cuGreenCtxDestroy");
    detail::throw_error(make_error_code(r), "cuCtxFromGreenCtx", what, where);
  }
  try {
    return std::make_shared<const detail::context_owner>(ctx, dev.get(), false, green);
  } catch (...) {
    check_nothrow(drv().cuGreenCtxDestroy(green), "cuGreenCtxDestroy");
    throw;
  }
}

}  // namespace

sm_resource sm_resource::of(cuwrap::device dev, std::source_location where) {
  CUdevResource r{};
  if (const CUresult result = drv().cuDeviceGetDevResource(dev.get(), &r, CU_DEV_RESOURCE_TYPE_SM);
      result != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(result), "cuDeviceGetDevResource",
                        "device " + std::to_string(dev.ordinal()), where);
  }
  return sm_resource{r};
}

sm_resource sm_resource::of(context_ref ctx, std::source_location where) {
  detail::expect_argument_not_moved_from(!ctx.empty(), "sm_resource", "of", "context", where);
  CUdevResource r{};
  check(drv().cuCtxGetDevResource(ctx.get(), &r, CU_DEV_RESOURCE_TYPE_SM), "cuCtxGetDevResource",
        where);
  return sm_resource{r};
}

unsigned sm_resource::group_count(unsigned min_count, sm_split_flags flags,
                                  std::source_location where) const {
  check_min_count(*this, min_count, "cuwrap::sm_resource::group_count", where);
  unsigned groups = 0;
  if (const CUresult r = drv().cuDevSmResourceSplitByCount(nullptr, &groups, &resource_, nullptr,
                                                           static_cast<unsigned>(flags), min_count);
      r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuDevSmResourceSplitByCount",
                        "groups of at least " + sms_text(min_count) + " of " + sms_text(count()),
                        where);
  }
  return groups;
}

sm_split sm_resource::split(unsigned min_count, unsigned max_groups, sm_split_flags flags,
                            std::source_location where) const {
  check_min_count(*this, min_count, "cuwrap::sm_resource::split", where);
  if (max_groups == 0) refuse("cuwrap::sm_resource::split", "0 groups asked for", where);
  std::vector<CUdevResource> groups(max_groups);
  CUdevResource rest{};
  unsigned made = max_groups;
  if (const CUresult r = drv().cuDevSmResourceSplitByCount(groups.data(), &made, &resource_, &rest,
                                                           static_cast<unsigned>(flags), min_count);
      r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuDevSmResourceSplitByCount",
                        std::to_string(max_groups) + " groups of at least " + sms_text(min_count) +
                            " of " + sms_text(count()),
                        where);
  }
  sm_split out{{}, sm_resource{rest}};
  out.groups.reserve(made);
  for (unsigned i = 0; i < made; ++i) out.groups.push_back(sm_resource{groups[i]});
  return out;
}

green_context::green_context(cuwrap::device dev, const sm_resource& sms, std::source_location where)
    : owning_context{create_green(dev, std::span<const sm_resource>{&sms, 1}, where)} {}

green_context::green_context(cuwrap::device dev, std::span<const sm_resource> sms,
                             std::source_location where)
    : owning_context{create_green(dev, sms, where)} {}

sm_resource green_context::sms(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "green_context", "sms", where);
  CUdevResource r{};
  check(drv().cuGreenCtxGetDevResource(green_handle(), &r, CU_DEV_RESOURCE_TYPE_SM),
        "cuGreenCtxGetDevResource", where);
  return sm_resource::adopt(r);
}

unsigned long long green_context::green_id(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "green_context", "green_id", where);
  unsigned long long id = 0;
  check(drv().cuGreenCtxGetId(green_handle(), &id), "cuGreenCtxGetId", where);
  return id;
}

stream green_context::create_stream(int priority, std::source_location where) const {
  const auto& owner = lifetime_for("green_context", "create_stream", where);
  CUstream handle{};
  if (const CUresult r =
          drv().cuGreenCtxStreamCreate(&handle, owner->green, CU_STREAM_NON_BLOCKING, priority);
      r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuGreenCtxStreamCreate",
                        "priority " + std::to_string(priority), where);
  }
  return stream::adopt(handle, *this, where);
}

void green_context::record(event_ref e, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "green_context", "record", where);
  detail::expect_argument_not_moved_from(!e.empty(), "green_context", "record", "event", where);
  check(drv().cuGreenCtxRecordEvent(green_handle(), e.get()), "cuGreenCtxRecordEvent", where);
}

void green_context::wait(event_ref e, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "green_context", "wait", where);
  detail::expect_argument_not_moved_from(!e.empty(), "green_context", "wait", "event", where);
  check(drv().cuGreenCtxWaitEvent(green_handle(), e.get()), "cuGreenCtxWaitEvent", where);
}

std::optional<CUgreenCtx> green_context_of(stream_ref s, std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "green_context_of", "stream", where);
  CUgreenCtx green{};
  check(drv().cuStreamGetGreenCtx(s.get(), &green), "cuStreamGetGreenCtx", where);
  if (green == nullptr) return std::nullopt;
  return green;
}

}  // namespace cuwrap
