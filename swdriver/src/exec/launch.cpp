// cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel (and their _ptsz twins), the
// launch log and the registered host functions (launch.hpp).
#include "exec/launch.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/config.hpp"
#include "exec/interpret.hpp"
#include "module/module.hpp"
#include "sched/capture_hooks.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

constexpr unsigned kMaxBlockX = 1024, kMaxBlockY = 1024, kMaxBlockZ = 64;
constexpr unsigned kMaxGridX = 2147483647u, kMaxGridY = 65535, kMaxGridZ = 65535;
constexpr std::size_t kMaxParamBytes = 32764;  // CUDA 12.1 and later on Volta and later
constexpr int kLeastPriority = 0, kGreatestPriority = -5;
constexpr unsigned kMemSyncDomains = 4;  // CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT

// The record of a launch, pointing into `spec`.
swcu_launch view_of(const LaunchSpec& spec) noexcept {
  swcu_launch view{};
  view.kernel = spec.kernel.c_str();
  std::copy(spec.grid.begin(), spec.grid.end(), view.grid);
  std::copy(spec.block.begin(), spec.block.end(), view.block);
  std::copy(spec.cluster.begin(), spec.cluster.end(), view.cluster);
  view.shared_bytes = spec.shared_bytes;
  view.cooperative = spec.cooperative ? 1 : 0;
  view.priority = spec.priority;
  view.stream = spec.stream;
  view.param_count = spec.offsets.size();
  view.param_offsets = spec.offsets.data();
  view.param_sizes = spec.sizes.data();
  view.params = spec.params.data();
  view.params_size = spec.params.size();
  return view;
}

// One launch: what the log keeps and the host function sees.
struct LaunchRecord {
  explicit LaunchRecord(LaunchSpec s) noexcept : spec(std::move(s)), view(view_of(spec)) {}
  LaunchRecord(const LaunchRecord&) = delete;
  LaunchRecord& operator=(const LaunchRecord&) = delete;

  const LaunchSpec spec;
  const swcu_launch view;
};

// The registered functions, the log and the launches waiting to run, under their own lock (a
// leaf: never held while taking the state lock or calling out).
struct Launches {
  std::mutex mutex;
  std::unordered_map<std::string, std::pair<swcu_kernel_fn, void*>> functions;
  std::set<std::string> noted;  // kernels whose missing emulation was reported
  std::deque<std::shared_ptr<const LaunchRecord>> log;  ///< the last SWCUDA_LAUNCH_LOG launches

  /// Appends to the log, dropping the oldest record past the configured length.
  void record(std::shared_ptr<const LaunchRecord> r) {
    const std::size_t limit = config().launch_log;
    if (limit == 0) return;
    log.push_back(std::move(r));
    while (log.size() > limit) log.pop_front();
  }
  std::unordered_map<std::uint64_t, std::shared_ptr<const LaunchRecord>> pending;
  std::uint64_t next_id = 1;
};

Launches& launches() noexcept {
  static Launches* const l = new Launches;  // never destroyed: launches may run at exit
  return *l;
}

// Owned by the stream operation: when the operation goes (run or dropped with its context),
// its launch is no longer pending.
struct PendingGuard {
  explicit PendingGuard(std::uint64_t launch) noexcept : id(launch) {}
  PendingGuard(const PendingGuard&) = delete;
  PendingGuard& operator=(const PendingGuard&) = delete;
  ~PendingGuard() {
    Launches& l = launches();
    const std::lock_guard lock(l.mutex);
    l.pending.erase(id);
  }
  const std::uint64_t id;
};

// The host operation of a launch: runs the kernel's registered function, if any.
void CUDA_CB run_launch(void* data) {
  Launches& l = launches();
  std::shared_ptr<const LaunchRecord> record;
  swcu_kernel_fn fn = nullptr;
  void* user = nullptr;
  bool note = false;
  {
    const std::lock_guard lock(l.mutex);
    const auto it = l.pending.find(reinterpret_cast<std::uintptr_t>(data));
    if (it == l.pending.end()) return;
    record = std::move(it->second);
    l.pending.erase(it);
    if (const auto f = l.functions.find(record->spec.kernel); f != l.functions.end()) {
      fn = f->second.first;
      user = f->second.second;
    } else {
      note = l.noted.insert(record->spec.kernel).second;
    }
  }
  if (fn != nullptr) {
    fn(&record->view, user);
  } else if (note) {
    report(CU_LOG_LEVEL_WARNING, "kernel " + record->spec.kernel +
                                     " has no registered host function; its launches are "
                                     "logged and do nothing");
  }
}

// What a launch call gives, in one shape for every entry point.
struct LaunchArgs {
  CUfunction f = nullptr;
  unsigned grid[3] = {};
  unsigned block[3] = {};
  unsigned shared = 0;
  CUstream stream = nullptr;
  void** params = nullptr;
  void** extra = nullptr;
  const CUlaunchAttribute* attrs = nullptr;
  unsigned num_attrs = 0;
  bool cooperative = false;
};

// The launch attributes that matter here.
struct Attributes {
  bool cluster_given = false;
  unsigned cluster[3] = {1, 1, 1};
  bool preferred_given = false;
  unsigned preferred[3] = {1, 1, 1};
  bool cooperative = false;
  bool priority_given = false;
  int priority = 0;
  std::vector<CUevent> events;  // recorded after the kernel
};

// The event of a programmatic or launch completion event attribute: an event of the context
// created with CU_EVENT_DISABLE_TIMING, recorded with flags 0 (cuda.h: "Does not accept
// CU_EVENT_RECORD_EXTERNAL", and no other record flag exists).
CUresult check_event(State& s, CUevent handle, int flags, const Context& ctx) {
  const Event* const e = s.find<Event>(SWCU_EVENT, handle);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (e->ctx != &ctx || (e->flags & CU_EVENT_DISABLE_TIMING) == 0) return CUDA_ERROR_INVALID_VALUE;
  if (flags != CU_EVENT_RECORD_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

// Every CU_LAUNCH_ATTRIBUTE_* of cuda.h, checked as cuda.h documents; what the model honours is
// kept in `out` (cluster, preferred cluster, cooperative, priority, the events to record), the
// hints (access policy window, synchronization and scheduling policies, memory sync domains,
// carveout, NVLink scheduling) are checked and have no effect on an interpreter.
CUresult read_attributes(State& s, const LaunchArgs& a, const Context& ctx, bool capturing,
                         Attributes& out) {
  if (a.num_attrs > 0 && a.attrs == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < a.num_attrs; ++i) {
    const CUlaunchAttribute& attr = a.attrs[i];
    const CUlaunchAttributeValue& v = attr.value;
    switch (raw(attr.id)) {
      case CU_LAUNCH_ATTRIBUTE_IGNORE: break;
      case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        if (!valid_access_policy_window(v.accessPolicyWindow)) return CUDA_ERROR_INVALID_VALUE;
        break;
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: out.cooperative = v.cooperative != 0; break;
      case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY: {
        const int policy = raw(v.syncPolicy);
        if (policy < CU_SYNC_POLICY_AUTO || policy > CU_SYNC_POLICY_BLOCKING_SYNC) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        break;
      }
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        out.cluster_given = true;
        out.cluster[0] = v.clusterDim.x;
        out.cluster[1] = v.clusterDim.y;
        out.cluster[2] = v.clusterDim.z;
        break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: {
        const int policy = raw(v.clusterSchedulingPolicyPreference);
        if (policy < CU_CLUSTER_SCHEDULING_POLICY_DEFAULT ||
            policy > CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        break;
      }
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: break;
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
        if (const CUresult r =
                check_event(s, v.programmaticEvent.event, v.programmaticEvent.flags, ctx)) {
          return r;
        }
        out.events.push_back(v.programmaticEvent.event);
        break;
      case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
        if (const CUresult r =
                check_event(s, v.launchCompletionEvent.event, v.launchCompletionEvent.flags, ctx)) {
          return r;
        }
        out.events.push_back(v.launchCompletionEvent.event);
        break;
      case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        out.priority_given = true;
        out.priority = std::clamp(v.priority, kGreatestPriority, kLeastPriority);
        break;
      case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        // Domain ids below CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT (4), as for streams.
        if (v.memSyncDomainMap.default_ >= kMemSyncDomains ||
            v.memSyncDomainMap.remote >= kMemSyncDomains) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        break;
      case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: {
        const int domain = raw(v.memSyncDomain);
        if (domain != CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT &&
            domain != CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        break;
      }
      case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
        out.preferred_given = true;
        out.preferred[0] = v.preferredClusterDim.x;
        out.preferred[1] = v.preferredClusterDim.y;
        out.preferred[2] = v.preferredClusterDim.z;
        break;
      case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
        // cuda.h: "graphs-only, and passing it to a launch in a non-capturing stream will
        // result in an error"; the value is 0 or 1.
        if (!capturing || v.deviceUpdatableKernelNode.deviceUpdatable < 0 ||
            v.deviceUpdatableKernelNode.deviceUpdatable > 1) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        // Device-side graph updates are not modelled (software-driver.md, "Stricter").
        report(CU_LOG_LEVEL_ERROR,
               "CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE: device-updatable kernel nodes "
               "are not modelled by the software driver");
        return CUDA_ERROR_NOT_SUPPORTED;
      case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if (v.sharedMemCarveout > 100) return CUDA_ERROR_INVALID_VALUE;
        break;
      case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
        if (v.nvlinkUtilCentricScheduling > 1) return CUDA_ERROR_INVALID_VALUE;
        break;
      default: return CUDA_ERROR_INVALID_VALUE;  // unknown attribute
    }
  }
  return CUDA_SUCCESS;
}

// Grid, block and dynamic shared memory against the device's and the kernel's limits.
CUresult check_dims(const LaunchArgs& a, const KernelDesc& k, const FuncSettings& set) {
  for (int i = 0; i < 3; ++i) {
    if (a.grid[i] == 0 || a.block[i] == 0) return CUDA_ERROR_INVALID_VALUE;
  }
  if (a.block[0] > kMaxBlockX || a.block[1] > kMaxBlockY || a.block[2] > kMaxBlockZ ||
      a.grid[0] > kMaxGridX || a.grid[1] > kMaxGridY || a.grid[2] > kMaxGridZ) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const unsigned long long threads = 1ULL * a.block[0] * a.block[1] * a.block[2];
  if (threads > static_cast<unsigned long long>(kMaxThreadsPerBlock))
    return CUDA_ERROR_INVALID_VALUE;
  if (threads > static_cast<unsigned long long>(max_threads(k))) {
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;  // more threads than the kernel was built for
  }
  if (a.shared > static_cast<unsigned>(max_dynamic_shared(k, set))) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

// The cluster: the launch attribute, else the kernel's required dimensions, checked against
// the grid and the cluster size limit (8, or 16 where non-portable sizes are allowed).
CUresult check_cluster(const LaunchArgs& a, const KernelDesc& k, const FuncSettings& set,
                       Attributes& attrs) {
  unsigned required[3] = {k.cluster[0], k.cluster[1], k.cluster[2]};
  if (required[0] == 0 && required[1] == 0 && required[2] == 0) {
    for (std::size_t i = 0; i < 3; ++i)
      required[i] = static_cast<unsigned>(set.cluster[i].value_or(0));
  }
  const int positive = (required[0] > 0) + (required[1] > 0) + (required[2] > 0);
  if (positive != 0 && positive != 3) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  if (positive == 3) {
    if (attrs.cluster_given && !std::equal(required, required + 3, attrs.cluster)) {
      return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    }
    std::copy(required, required + 3, attrs.cluster);
    attrs.cluster_given = true;
  } else if (!attrs.cluster_given) {
    if (k.explicit_cluster) return CUDA_ERROR_INVALID_CLUSTER_SIZE;  // a cluster size must be set
    return CUDA_SUCCESS;
  }
  unsigned long long volume = 1;
  for (int i = 0; i < 3; ++i) {
    if (attrs.cluster[i] == 0 || a.grid[i] % attrs.cluster[i] != 0) {
      return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    }
    volume *= attrs.cluster[i];
  }
  const unsigned long long limit =
      set.non_portable.value_or(0) != 0 ? kMaxClusterSize : kPortableClusterSize;
  if (volume > limit) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  if (attrs.preferred_given) {
    for (int i = 0; i < 3; ++i) {
      const unsigned p = attrs.preferred[i];
      if (p == 0 || p % attrs.cluster[i] != 0 || a.grid[i] % p != 0)
        return CUDA_ERROR_INVALID_VALUE;
    }
    // cuda.h: the preferred z "Must be equal to the z field of clusterDim".
    if (attrs.preferred[2] != attrs.cluster[2]) return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// Packs the arguments into `rec` by the kernel's layout: from kernelParams, or the buffer that
// `extra` gives.
CUresult pack(const LaunchArgs& a, const KernelDesc& k, LaunchSpec& rec) {
  if (a.params != nullptr && a.extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto take_layout = [&] {
    for (const ParamLayout& p : k.params) {
      rec.offsets.push_back(p.offset);
      rec.sizes.push_back(p.size);
    }
  };
  if (a.extra != nullptr) {
    const void* buffer = nullptr;
    const std::size_t* size = nullptr;
    bool have_buffer = false;
    bool have_size = false;
    for (std::size_t i = 0; a.extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (a.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        buffer = a.extra[i + 1];
        have_buffer = true;
      } else if (a.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
        size = static_cast<const std::size_t*>(a.extra[i + 1]);
        have_size = true;
      } else {
        return CUDA_ERROR_INVALID_VALUE;  // an unknown setting
      }
    }
    if (have_buffer || have_size) {
      if (!have_buffer || !have_size || size == nullptr) return CUDA_ERROR_INVALID_VALUE;
      const std::size_t n = *size;
      if (n > kMaxParamBytes || (n > 0 && buffer == nullptr)) return CUDA_ERROR_INVALID_VALUE;
      if (k.layout_known && n < k.params_size) return CUDA_ERROR_INVALID_VALUE;
      const auto* bytes = static_cast<const unsigned char*>(buffer);
      rec.params.assign(bytes, bytes + n);
      if (k.layout_known) take_layout();
      return CUDA_SUCCESS;
    }
  }
  if (!k.layout_known) {
    // Without parameter information only a kernel without parameters can be launched so.
    return a.params != nullptr ? CUDA_ERROR_INVALID_IMAGE : CUDA_SUCCESS;
  }
  if (k.params.empty()) return CUDA_SUCCESS;
  if (a.params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  rec.params.assign(k.params_size, 0);
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    if (a.params[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(rec.params.data() + k.params[i].offset, a.params[i], k.params[i].size);
  }
  take_layout();
  return CUDA_SUCCESS;
}

CUresult launch(Sym sym, NullStream null, const LaunchArgs a) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, a.stream, null, q)) return r;
    Context& ctx = *q->ctx;
    Function* f = nullptr;
    if (const CUresult r = resolve_function(s, a.f, &ctx, f)) return r;
    // Loaded in another context (a green context's context shares its primary context's).
    if (&f->module->ctx->space() != &ctx.space()) return CUDA_ERROR_INVALID_HANDLE;
    const KernelDesc& k = *f->desc;
    const FuncSettings set = effective_settings(*f);
    Attributes attrs;
    if (const CUresult r = read_attributes(s, a, ctx, q->capture != nullptr, attrs)) return r;
    if (const CUresult r = check_dims(a, k, set)) return r;
    if (const CUresult r = check_cluster(a, k, set, attrs)) return r;
    const bool cooperative = a.cooperative || attrs.cooperative;
    if (cooperative) {
      const int per_sm =
          active_blocks_per_sm(k.static_shared, max_threads(k), max_dynamic_shared(k, set),
                               static_cast<int>(a.block[0] * a.block[1] * a.block[2]), a.shared);
      const unsigned long long blocks = 1ULL * a.grid[0] * a.grid[1] * a.grid[2];
      // A green context's kernels run on its partition only.
      if (blocks > static_cast<unsigned long long>(per_sm) * ctx.sm_count) {
        return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
      }
    }
    LaunchSpec spec;
    if (const CUresult r = pack(a, k, spec)) return r;
    spec.kernel = k.name;
    std::copy(a.grid, a.grid + 3, spec.grid.begin());
    std::copy(a.block, a.block + 3, spec.block.begin());
    std::copy(attrs.cluster, attrs.cluster + 3, spec.cluster.begin());
    spec.explicit_cluster = attrs.cluster_given;
    spec.shared_bytes = a.shared;
    spec.cooperative = cooperative;
    spec.sm_count = ctx.sm_count;
    spec.priority = attrs.priority_given ? attrs.priority : q->priority;
    spec.stream = a.stream;
    // A capturing stream records it as a kernel node instead (capture.hpp): not launched.
    if (const Captured r = capture_kernel(s, *q, a.f, view_of(spec))) return *r;
    // What runs: a host function registered for the kernel, else its PTX (interpret.hpp).
    if (has_host_function(spec.kernel)) {
      push(s, *q, launch_op(std::move(spec)));
    } else {
      std::string why;
      if (const CUresult r = check_interpretable(*f, why)) {
        report(CU_LOG_LEVEL_ERROR, why);
        return r;
      }
      log_launch(spec);
      push(s, *q, interpret_op(*f, std::move(spec)));
    }
    for (CUevent handle : attrs.events) {
      Op record_op;
      record_op.kind = OpKind::record;
      s.find<Event>(SWCU_EVENT, handle)->recorded = push(s, *q, std::move(record_op));
    }
    kick(s, lock);  // may release the lock: nothing is used after this
    return CUDA_SUCCESS;
  });
}

LaunchArgs args(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                unsigned bz, unsigned shared, CUstream stream, void** params, void** extra) {
  LaunchArgs a;
  a.f = f;
  a.grid[0] = gx;
  a.grid[1] = gy;
  a.grid[2] = gz;
  a.block[0] = bx;
  a.block[1] = by;
  a.block[2] = bz;
  a.shared = shared;
  a.stream = stream;
  a.params = params;
  a.extra = extra;
  return a;
}

CUresult launch_ex(Sym sym, NullStream null, const CUlaunchConfig* config, CUfunction f,
                   void** params, void** extra) {
  if (config == nullptr) {
    return call(sym, [](State&) -> CUresult { return CUDA_ERROR_INVALID_VALUE; });
  }
  LaunchArgs a = args(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                      config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream,
                      params, extra);
  a.attrs = config->attrs;
  a.num_attrs = config->numAttrs;
  return launch(sym, null, a);
}

}  // namespace

Op launch_op(LaunchSpec spec) {
  auto record = std::make_shared<const LaunchRecord>(std::move(spec));
  Launches& l = launches();
  std::uint64_t id = 0;
  {
    const std::lock_guard guard(l.mutex);
    id = l.next_id++;
    l.pending.emplace(id, record);
    try {
      l.record(record);
    } catch (...) {
      l.pending.erase(id);
      throw;
    }
  }
  Op op;
  op.kind = OpKind::host_function;
  op.host_function = &run_launch;
  op.user_data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(id));
  // Not run for a host operation: it only owns the guard, which ends the pending launch when
  // the operation goes (run, or dropped with its context).
  op.work = [guard = std::make_shared<PendingGuard>(id)](State&) { return CUDA_SUCCESS; };
  return op;
}

int active_blocks_per_sm(std::size_t static_shared, int max_threads, int max_dynamic,
                         int block_size, std::size_t dynamic) noexcept {
  if (block_size <= 0 || block_size > max_threads || max_dynamic < 0 ||
      dynamic > static_cast<std::size_t>(max_dynamic)) {
    return 0;
  }
  const int warps = (block_size + kWarpSize - 1) / kWarpSize;
  const int by_threads = kThreadsPerSm / (warps * kWarpSize);
  const std::size_t per_block = static_shared + dynamic + kReservedSharedPerBlock;
  const auto by_shared = static_cast<int>(std::min<std::size_t>(kSharedPerSm / per_block, 1024));
  return std::min({kBlocksPerSm, by_threads, by_shared});
}

bool has_host_function(const std::string& kernel) {
  Launches& l = launches();
  const std::lock_guard lock(l.mutex);
  return l.functions.contains(kernel);
}

void log_launch(const LaunchSpec& spec) {
  auto record = std::make_shared<const LaunchRecord>(spec);
  Launches& l = launches();
  const std::lock_guard lock(l.mutex);
  l.record(std::move(record));
}

int register_kernel(const char* name, swcu_kernel_fn fn, void* user) noexcept {
  if (name == nullptr) return -1;
  try {
    Launches& l = launches();
    const std::lock_guard lock(l.mutex);
    if (fn == nullptr) {
      l.functions.erase(name);
    } else {
      l.functions[name] = {fn, user};
    }
    return 0;
  } catch (...) {
    return -1;
  }
}

std::size_t launch_log_size() noexcept {
  Launches& l = launches();
  const std::lock_guard lock(l.mutex);
  return l.log.size();
}

int launch_log_entry(std::size_t index, swcu_launch* out) noexcept {
  Launches& l = launches();
  const std::lock_guard lock(l.mutex);
  if (out == nullptr || index >= l.log.size()) return -1;
  *out = l.log[index]->view;
  return 0;
}

void clear_launch_log() noexcept {
  std::deque<std::shared_ptr<const LaunchRecord>> old;
  Launches& l = launches();
  {
    const std::lock_guard lock(l.mutex);
    old.swap(l.log);
  }
  // `old` frees the records here (pending launches keep their own).
}

void run_kernel_now(const swcu_launch& launch) noexcept {
  try {
    LaunchSpec spec;
    spec.kernel = launch.kernel;
    std::copy(launch.grid, launch.grid + 3, spec.grid.begin());
    std::copy(launch.block, launch.block + 3, spec.block.begin());
    std::copy(launch.cluster, launch.cluster + 3, spec.cluster.begin());
    spec.explicit_cluster = launch.cluster[0] * launch.cluster[1] * launch.cluster[2] > 1;
    spec.shared_bytes = launch.shared_bytes;
    spec.cooperative = launch.cooperative != 0;
    spec.priority = launch.priority;
    spec.stream = launch.stream;
    spec.offsets.assign(launch.param_offsets, launch.param_offsets + launch.param_count);
    spec.sizes.assign(launch.param_sizes, launch.param_sizes + launch.param_count);
    spec.params.assign(launch.params, launch.params + launch.params_size);
    auto record = std::make_shared<const LaunchRecord>(std::move(spec));
    Launches& l = launches();
    std::uint64_t id = 0;
    {
      const std::lock_guard lock(l.mutex);
      id = l.next_id++;
      l.record(record);
      l.pending.emplace(id, std::move(record));
    }
    run_launch(reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)));
  } catch (...) {
    // out of memory: the launch is neither logged nor run
  }
}

}  // namespace swcu

using swcu::NullStream;
using swcu::Sym;

extern "C" {

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void** kernelParams, void** extra) {
  return swcu::launch(Sym::cuLaunchKernel, NullStream::legacy,
                      swcu::args(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                                 sharedMemBytes, hStream, kernelParams, extra));
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                             unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                             unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                             void** kernelParams, void** extra) {
  return swcu::launch(Sym::cuLaunchKernel_ptsz, NullStream::per_thread,
                      swcu::args(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                                 sharedMemBytes, hStream, kernelParams, extra));
}

CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                          void** extra) {
  return swcu::launch_ex(Sym::cuLaunchKernelEx, NullStream::legacy, config, f, kernelParams, extra);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                               void** extra) {
  return swcu::launch_ex(Sym::cuLaunchKernelEx_ptsz, NullStream::per_thread, config, f,
                         kernelParams, extra);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX,
                                   unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream,
                                   void** kernelParams) {
  swcu::LaunchArgs a = swcu::args(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                                  sharedMemBytes, hStream, kernelParams, nullptr);
  a.cooperative = true;
  return swcu::launch(Sym::cuLaunchCooperativeKernel, NullStream::legacy, a);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX,
                                        unsigned int blockDimY, unsigned int blockDimZ,
                                        unsigned int sharedMemBytes, CUstream hStream,
                                        void** kernelParams) {
  swcu::LaunchArgs a = swcu::args(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                                  sharedMemBytes, hStream, kernelParams, nullptr);
  a.cooperative = true;
  return swcu::launch(Sym::cuLaunchCooperativeKernel_ptsz, NullStream::per_thread, a);
}

}  // extern "C"
