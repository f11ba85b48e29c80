// Device graph launch (CUDA programming guide, "Device Graph Launch"; cuda_device_runtime_api.h):
// a kernel node's cudaGraphLaunch(exec, stream) and cudaGetCurrentGraphExec.
//
// Every graph launch runs in an execution environment (DeviceEnv): the graph and the
// fire-and-forget work it makes. A launch from the host has a stream environment as the parent
// of its graph's. A kernel's device launch is checked when it is made and queued in the
// environment of the graph it runs in:
//   cudaStreamGraphFireAndForget           a child of the environment, run as soon as the kernel
//                                          that made it completes (it completes before the
//                                          launching graph does);
//   cudaStreamGraphFireAndForgetAsSibling  a child of the parent environment (it does not hold
//                                          the launching graph's tail launches back);
//   cudaStreamGraphTailLaunch              run when the environment completes, in the order they
//                                          were made; the tail launches a tail graph makes run
//                                          before those made before it, and a graph may
//                                          tail-launch itself (one such launch pending at a time).
// The software driver runs these one after another on the launch's thread (exec_launch.cpp runs
// each graph's nodes): one of the orders a GPU may run them in.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "exec/interpret.hpp"
#include "graph/exec_internal.hpp"

namespace swcu {

/// A graph launched from the device, holding what its run needs (its executable graph may be
/// destroyed or updated meanwhile: the launch runs the graph as it was when it was made).
struct DeviceLaunch {
  CUgraphExec handle = nullptr;
  unsigned long long flags = 0;  ///< the executable graph's instantiate flags
  std::shared_ptr<Graph> plan;
  std::shared_ptr<HeldRefs> refs;
  std::shared_ptr<ExecState> exec;
};

/// An execution environment: one graph's run and the fire-and-forget work it makes.
struct DeviceEnv {
  CUgraphExec graph = nullptr;         ///< the graph that runs; nullptr for a stream environment
  bool device_graph = false;           ///< instantiated for device launch (cudaGetCurrentGraphExec)
  DeviceEnv* parent = nullptr;         ///< nullptr for a stream environment
  std::vector<DeviceLaunch> children;  ///< fire-and-forget launches not run yet
  std::deque<DeviceLaunch> tails;      ///< tail launches, in the order they were made
  unsigned fired = 0;                  ///< fire-and-forget launches made in this environment
};

/// Runs a device-launched graph's nodes in `env` (exec_launch.cpp); false when it failed.
using RunDeviceGraph = std::function<bool(DeviceLaunch&, DeviceEnv&)>;

/// At most this many fire-and-forget launches per environment, and pending tail launches per
/// graph (CUDA programming guide, "Fire and Forget Launch", "Tail Launch").
inline constexpr unsigned kMaxFireAndForget = 120;
inline constexpr std::size_t kMaxPendingTails = 255;

/// The environment of a host launch of `e` (`handle`), its parent a stream environment.
[[nodiscard]] std::shared_ptr<DeviceEnv> host_environment(const Exec& e, CUgraphExec handle);

/// What the kernels of `env`'s graph reach: cudaGetCurrentGraphExec's value, and cudaGraphLaunch,
/// which checks the launch and queues it in `env` (called under the state lock).
[[nodiscard]] DeviceGraphCalls device_graph_calls(DeviceEnv& env);

/// Runs the fire-and-forget launches queued in `env`, each environment to completion (its own
/// children and tail launches included), without the state lock; false when one failed.
bool run_fired(DeviceEnv& env, const RunDeviceGraph& run);

/// `env`'s graph completed (its children ran): runs its tail launches, then, for the top graph of
/// a host launch, the sibling launches made into the stream environment; false on a failure.
bool run_tails(DeviceEnv& env, const RunDeviceGraph& run);

}  // namespace swcu
