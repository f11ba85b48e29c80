// Device graph launch (device_launch.hpp): checking a kernel's cudaGraphLaunch and running the
// fire-and-forget, sibling and tail launches it queues.
#include "graph/device_launch.hpp"

#include <algorithm>

namespace swcu {
namespace {

// The device runtime's launch streams (cuda_device_runtime_api.h).
constexpr std::uint64_t kTailLaunch = 0x0100000000000000ull;
constexpr std::uint64_t kFireAndForget = 0x0200000000000000ull;
constexpr std::uint64_t kSibling = 0x0300000000000000ull;

// cudaError_t values (driver_types.h).
constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;           // cudaErrorInvalidValue
constexpr int kPendingCountExceeded = 69;  // cudaErrorLaunchPendingCountExceeded

bool holds(const std::deque<DeviceLaunch>& list, CUgraphExec handle) {
  return std::any_of(list.begin(), list.end(),
                     [handle](const DeviceLaunch& d) { return d.handle == handle; });
}

bool holds(const std::vector<DeviceLaunch>& list, CUgraphExec handle) {
  return std::any_of(list.begin(), list.end(),
                     [handle](const DeviceLaunch& d) { return d.handle == handle; });
}

// Whether `handle` runs, or waits to run, in `env` or an environment above it.
bool busy(const DeviceEnv& env, CUgraphExec handle) {
  for (const DeviceEnv* e = &env; e != nullptr; e = e->parent) {
    if (e->graph == handle || holds(e->children, handle) || holds(e->tails, handle)) return true;
  }
  return false;
}

// cudaGraphLaunch(exec, stream) from a kernel of `env`'s graph, under the state lock.
int launch_from_device(DeviceEnv& env, std::uint64_t exec, std::uint64_t stream) {
  if (stream != kTailLaunch && stream != kFireAndForget && stream != kSibling) {
    return kInvalidValue;  // device graphs launch only into the named graph launch streams
  }
  const auto handle = reinterpret_cast<CUgraphExec>(exec);
  Exec* const e = find_exec(state(), handle);
  // A device graph: instantiated for device launch and uploaded (cuGraphUpload, an upload at
  // instantiation, or a launch from the host: each leaves a last operation).
  if (e == nullptr || (e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) == 0 || !e->last) {
    return kInvalidValue;
  }
  if (stream == kTailLaunch && handle == env.graph) {
    if (holds(env.tails, handle)) return kInvalidValue;  // one self-launch pending at a time
  } else if (busy(env, handle)) {
    return kInvalidValue;  // launched from the device while a launch of it runs or waits
  }
  DeviceLaunch d{handle, e->flags, e->plan, e->refs, e->exec};
  if (stream == kTailLaunch) {
    if (env.tails.size() >= kMaxPendingTails) return kPendingCountExceeded;
    env.tails.push_back(std::move(d));
    return kSuccess;
  }
  DeviceEnv& into = stream == kSibling && env.parent != nullptr ? *env.parent : env;
  if (into.fired >= kMaxFireAndForget) return kPendingCountExceeded;
  ++into.fired;
  into.children.push_back(std::move(d));
  return kSuccess;
}

// Runs `pending` one after another as children of `parent`: each graph's tail launches replace
// it, ahead of the ones pending before them.
bool run_chain(std::deque<DeviceLaunch> pending, DeviceEnv& parent, const RunDeviceGraph& run) {
  while (!pending.empty()) {
    DeviceLaunch d = std::move(pending.front());
    pending.pop_front();
    DeviceEnv env;
    env.graph = d.handle;
    env.device_graph = true;
    env.parent = &parent;
    if (!run(d, env)) return false;  // its fire-and-forget children ran after their kernels
    pending.insert(pending.begin(), std::make_move_iterator(env.tails.begin()),
                   std::make_move_iterator(env.tails.end()));
  }
  return true;
}

}  // namespace

std::shared_ptr<DeviceEnv> host_environment(const Exec& e, CUgraphExec handle) {
  struct Pair {
    DeviceEnv stream;
    DeviceEnv top;
  };
  auto both = std::make_shared<Pair>();
  both->top.graph = handle;
  both->top.device_graph = (e.flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) != 0;
  both->top.parent = &both->stream;
  return {both, &both->top};
}

DeviceGraphCalls device_graph_calls(DeviceEnv& env) {
  DeviceGraphCalls calls;
  calls.current = env.device_graph ? reinterpret_cast<std::uint64_t>(env.graph) : 0;
  calls.launch = [&env](std::uint64_t exec, std::uint64_t stream) {
    return launch_from_device(env, exec, stream);
  };
  return calls;
}

bool run_fired(DeviceEnv& env, const RunDeviceGraph& run) {
  while (!env.children.empty()) {
    DeviceLaunch d = std::move(env.children.front());
    env.children.erase(env.children.begin());
    std::deque<DeviceLaunch> one;
    one.push_back(std::move(d));
    if (!run_chain(std::move(one), env, run)) return false;
  }
  return true;
}

bool run_tails(DeviceEnv& env, const RunDeviceGraph& run) {
  if (env.parent == nullptr) return true;
  std::deque<DeviceLaunch> tails = std::move(env.tails);
  env.tails.clear();
  if (!run_chain(std::move(tails), *env.parent, run)) return false;
  return env.parent->parent != nullptr || run_fired(*env.parent, run);  // the stream's siblings
}

}  // namespace swcu
