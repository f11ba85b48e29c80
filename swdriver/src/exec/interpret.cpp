// Launches through the PTX interpreter (interpret.hpp).
#include "exec/interpret.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "core/config.hpp"
#include "exec/texture.hpp"
#include "memory/memory.hpp"
#include "memory/vmm.hpp"
#include "module/module.hpp"
#include "ptx/exec.hpp"
#include "ptx/program.hpp"

namespace swcu {
namespace {

// Everything a queued launch needs, independent of the module's later fate.
struct Prepared {
  std::shared_ptr<const Image> image;
  std::uint32_t entry = 0;
  std::vector<std::uint64_t> globals;
  Context* ctx = nullptr;
  LaunchSpec spec;
  /// CTAs resident at once: what the occupancy model fits on the device (blocks per SM times
  /// SMs), the whole grid for a cooperative launch.
  std::uint64_t resident = 0;
};

// What cooperative groups' grid workspace holds (cooperative_groups/details/driver_abi.h:
// struct grid_workspace { unsigned int wsSize; unsigned int barrier; }): grid.sync() adds to
// `barrier` and spins until its bit 31 flips. What the real driver stores in wsSize is not
// documented; nothing in CUDA 13's cooperative groups reads it. Here: the structure's size.
struct GridWorkspace {
  std::uint32_t ws_size = sizeof(GridWorkspace);
  std::uint32_t barrier = 0;
};

// The size of the device heap block at `address` (kept in the block's first bytes).
std::size_t heap_block_size(const Context& ctx, std::uint64_t address) noexcept {
  const auto it = ctx.device_heap.find(address);
  if (it == ctx.device_heap.end()) return 0;
  std::size_t size = 0;
  std::memcpy(&size, it->second.get(), sizeof size);
  return size;
}

CUresult code_of(ptx::Fault f) noexcept {
  switch (f) {
    case ptx::Fault::none: return CUDA_SUCCESS;
    case ptx::Fault::illegal_address: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case ptx::Fault::misaligned: return CUDA_ERROR_MISALIGNED_ADDRESS;
    case ptx::Fault::trap: return CUDA_ERROR_LAUNCH_FAILED;
    case ptx::Fault::assertion: return CUDA_ERROR_ASSERT;
    case ptx::Fault::deadlock: return CUDA_ERROR_LAUNCH_FAILED;
    case ptx::Fault::timeout: return CUDA_ERROR_LAUNCH_TIMEOUT;
    case ptx::Fault::stack_overflow: return CUDA_ERROR_HARDWARE_STACK_ERROR;
    case ptx::Fault::illegal_instruction: return CUDA_ERROR_ILLEGAL_INSTRUCTION;
  }
  return CUDA_ERROR_LAUNCH_FAILED;
}

// The live memory a kernel may touch: every allocation that is not waiting for its
// stream-ordered allocation (read-only where the device may only read it: pool memory with
// read access, read-only registrations, mappings cuMemSetAccess made read-only). The context's
// device heap is apart (device_heap()).
std::vector<ptx::MemoryRange> memory_map(State& s, const Context& ctx) {
  std::vector<ptx::MemoryRange> out;
  out.reserve(s.address_map.size());
  for (const auto& [base, a] : s.address_map) {
    if (a->stage == Allocation::Stage::pending || a->size == 0) continue;
    // Pool memory only where cuMemPoolSetAccess lets the device in (memory.hpp): a device
    // pool's peers, and every device for a host or host NUMA pool, whose "default
    // accessibility will be from the host CPU" (cuMemPoolCreate); managed pools let all in.
    if (a->pool && device_access(*a, ctx.device) == CU_MEM_ACCESS_FLAGS_PROT_NONE) {
      continue;
    }
    if (a->kind == SWCU_ADDRESS_RESERVATION) {  // only what the device may access (vmm.hpp)
      for (const VmmDeviceRange& r : vmm_device_ranges(*a, ctx.device)) {
        out.push_back({r.first, r.end, r.read_only});
      }
      continue;
    }
    out.push_back(
        {base, base + a->size, device_access(*a, ctx.device) == CU_MEM_ACCESS_FLAGS_PROT_READ});
  }
  std::sort(out.begin(), out.end(),
            [](const ptx::MemoryRange& a, const ptx::MemoryRange& b) { return a.base < b.base; });
  return out;
}

// The context's device heap blocks, sorted.
std::vector<ptx::MemoryRange> device_heap(const Context& ctx) {
  std::vector<ptx::MemoryRange> out;
  out.reserve(ctx.device_heap.size());
  for (const auto& [base, block] : ctx.device_heap) {
    (void)block;
    out.push_back({base, base + heap_block_size(ctx, base)});
  }
  std::sort(out.begin(), out.end(),
            [](const ptx::MemoryRange& a, const ptx::MemoryRange& b) { return a.base < b.base; });
  return out;
}

CUresult run(State& s, const Prepared& p, const ConditionSetter& set_conditional = {},
             const DeviceGraphCalls& graph = {}) {
  Context& ctx = *p.ctx;
  const ptx::Program& program = *p.image->program;
  const ptx::Function& entry = program.functions[p.entry];
  ptx::Launch l;
  l.program = &program;
  l.entry = p.entry;
  for (int i = 0; i < 3; ++i) {
    l.grid[i] = p.spec.grid[static_cast<std::size_t>(i)];
    l.block[i] = p.spec.block[static_cast<std::size_t>(i)];
    l.cluster[i] = p.spec.cluster[static_cast<std::size_t>(i)];
  }
  l.explicit_cluster = p.spec.explicit_cluster;
  l.dynamic_shared = p.spec.shared_bytes;
  std::size_t needed = 0;
  for (std::size_t i = 0; i < entry.params.size(); ++i) {
    needed = std::max<std::size_t>(needed, entry.param_offsets[i] + entry.params[i].size);
  }
  if (p.spec.offsets.size() == entry.params.size()) {
    // Packed by the function's layout, which for an image with SASS is the ELF's: a parameter
    // aligned to more than 16 bytes (a __grid_constant__ CUtensorMap) sits where its constant
    // bank address is aligned (offset 112 for the first on sm_90), not where the PTX puts it.
    l.params.assign(needed, 0);
    for (std::size_t i = 0; i < entry.params.size(); ++i) {
      const std::size_t from = p.spec.offsets[i];
      const std::size_t size = std::min<std::size_t>(p.spec.sizes[i], entry.params[i].size);
      if (from + size <= p.spec.params.size()) {
        std::memcpy(l.params.data() + entry.param_offsets[i], p.spec.params.data() + from, size);
      }
    }
  } else {
    l.params = p.spec.params;
    if (l.params.size() < needed) l.params.resize(needed, 0);
  }
  l.globals = p.globals;
  l.memory = memory_map(s, ctx);
  l.heap = device_heap(ctx);
  l.textures = launch_textures(s, ctx);
  static std::uint64_t grid_ids = 0;
  l.grid_id = ++grid_ids;
  l.sm_count = p.spec.sm_count;
  l.timeout_seconds = config().kernel_timeout;
  l.workers = config().workers;
  l.max_resident = p.resident;
  // A cooperative launch's grid workspace: global memory the kernel reaches through the
  // checked path, for this launch only (cooperative groups: %envreg1:%envreg2).
  std::unique_ptr<GridWorkspace> workspace;
  if (p.spec.cooperative) {
    workspace = std::make_unique<GridWorkspace>();
    const auto base = reinterpret_cast<std::uint64_t>(workspace.get());
    const ptx::MemoryRange range{base, base + sizeof(GridWorkspace)};
    l.memory.insert(std::upper_bound(l.memory.begin(), l.memory.end(), range,
                                     [](const ptx::MemoryRange& a, const ptx::MemoryRange& b) {
                                       return a.base < b.base;
                                     }),
                    range);
    l.grid_workspace = base;
  }
  const std::size_t fifo = ctx.limits[CU_LIMIT_PRINTF_FIFO_SIZE];
  l.print = [&s, fifo](const std::string& text) {
    s.printf_output += text;
    if (s.printf_output.size() > fifo) {  // a circular buffer: the oldest output is lost
      s.printf_output.erase(0, s.printf_output.size() - fifo);
    }
  };
  l.malloc = [&ctx](std::uint64_t bytes) -> std::uint64_t {
    const std::size_t limit = ctx.limits[CU_LIMIT_MALLOC_HEAP_SIZE];
    const std::size_t rounded = (bytes + 15) / 16 * 16;
    if (bytes == 0 || rounded > limit || ctx.device_heap_used + rounded > limit) return 0;
    std::unique_ptr<unsigned char[]> block(new (std::nothrow) unsigned char[rounded + 16]);
    if (!block) return 0;
    // 16-byte aligned, sized in the block's first 8 bytes
    auto* raw = block.get();
    std::memcpy(raw, &rounded, sizeof rounded);
    const auto address = reinterpret_cast<std::uint64_t>(raw + 16);
    ctx.device_heap.emplace(address, std::move(block));
    ctx.device_heap_used += rounded;
    return address;
  };
  // A freed block stays readable until the launch ends: another worker may still touch it.
  std::vector<std::unique_ptr<unsigned char[]>> freed;
  l.free = [&ctx, &freed](std::uint64_t address) {
    const auto it = ctx.device_heap.find(address);
    if (it == ctx.device_heap.end()) return false;
    ctx.device_heap_used -= heap_block_size(ctx, address);
    freed.push_back(std::move(it->second));
    ctx.device_heap.erase(it);
    return true;
  };
  if (set_conditional) {
    l.set_conditional = [&set_conditional](std::uint64_t handle, unsigned value, std::string& why) {
      return set_conditional(handle, value, why);
    };
  }
  l.current_graph_exec = graph.current;
  if (graph.launch) l.graph_launch = graph.launch;
  const ptx::Outcome o = ptx::execute(l);
  if (o.fault == ptx::Fault::none) return CUDA_SUCCESS;
  // The context is about to break: what the kernel printed before its fault still appears, as
  // a GPU flushes its printf buffer when the error is reported.
  flush_printf(s);
  report(CU_LOG_LEVEL_ERROR, o.message);
  return code_of(o.fault);
}

Prepared prepare(const Function& f, LaunchSpec spec) {
  Prepared p;
  p.image = f.module->image;
  const ptx::Function* e = p.image->program->entry(f.desc->name);
  p.entry = static_cast<std::uint32_t>(e - p.image->program->functions.data());
  p.globals = f.module->program_globals;
  p.ctx = f.module->ctx;
  // A kernel compiled with a cluster size runs in clusters of it wherever it is launched from
  // (a graph's kernel node, a recorded launch) when the grid allows.
  const KernelDesc& desc = *f.desc;
  if (spec.cluster == std::array<unsigned, 3>{1, 1, 1} && desc.cluster[0] != 0) {
    bool divides = true;
    for (std::size_t i = 0; i < 3; ++i) {
      divides = divides && desc.cluster[i] != 0 && spec.grid[i] % desc.cluster[i] == 0;
    }
    if (divides) std::copy(desc.cluster.begin(), desc.cluster.end(), spec.cluster.begin());
  }
  if (desc.cluster[0] != 0 || desc.explicit_cluster) spec.explicit_cluster = true;
  if (!spec.cooperative) {
    const KernelDesc& k = *f.desc;
    const int per_sm = active_blocks_per_sm(
        k.static_shared, max_threads(k), max_dynamic_shared(k, effective_settings(f)),
        static_cast<int>(spec.block[0] * spec.block[1] * spec.block[2]), spec.shared_bytes);
    p.resident = static_cast<std::uint64_t>(std::max(per_sm, 1)) * spec.sm_count;
  }
  p.spec = std::move(spec);
  return p;
}

}  // namespace

CUresult check_interpretable(const Function& f, std::string& why) {
  const Image& image = *f.module->image;
  const std::string& name = f.desc->name;
  const ptx::Program* program = image.program.get();
  const ptx::Function* e = program != nullptr ? program->entry(name) : nullptr;
  if (e == nullptr) {
    why = "kernel " + name +
          " has no PTX: its image holds only SASS (machine code), which the software driver "
          "does not execute. Ship PTX: load nvcc -ptx output, keep PTX in the fatbin "
          "(-gencode arch=compute_90,code=[sm_90,compute_90]), compile with NVRTC for "
          "compute_90, or register a host function for the kernel";
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  if (e->unsupported != UINT32_MAX) {
    const ptx::Inst& in = program->code[e->unsupported];
    why = "kernel " + name + " uses " + program->names[in.name] + " (PTX line " +
          std::to_string(in.line) + "), which the software driver does not run yet";
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  if (e->unresolved != UINT32_MAX) {
    why = "kernel " + name + " calls " + program->functions[e->unresolved].name +
          ", which its module does not define (link the modules with cuLinkCreate)";
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_SUCCESS;
}

Op interpret_op(const Function& f, LaunchSpec spec) {
  auto p = std::make_shared<const Prepared>(prepare(f, std::move(spec)));
  Op op;
  op.kind = OpKind::work;
  op.work = [p](State& s) { return run(s, *p); };
  return op;
}

CUresult interpret_now(State& s, Context& ctx, CUfunction handle, const LaunchSpec& spec,
                       const ConditionSetter& set_conditional, const DeviceGraphCalls& graph) {
  Function* f = nullptr;
  if (const CUresult r = resolve_function(s, handle, &ctx, f)) return r;
  std::string why;
  if (const CUresult r = check_interpretable(*f, why)) {
    report(CU_LOG_LEVEL_ERROR, why);
    return r;
  }
  Prepared p = prepare(*f, spec);
  p.ctx = &ctx;
  return run(s, p, set_conditional, graph);
}

}  // namespace swcu
