// Calls and returns (exec_machine.hpp): frames for .func calls, direct and indirect, with their
// limits (call depth, local memory), thread exit, and the built-in functions the driver supplies
// for extern declarations: vprintf (formatting in printf.cpp), __assertfail, malloc and free,
// cudaGraphSetConditional (the device runtime's, for conditional graph nodes) and cudaGraphLaunch
// (device graph launch).
#include <algorithm>
#include <cstdio>

#include "ptx/exec_machine.hpp"
#include "ptx/printf.hpp"

namespace swcu::ptx::detail {

void Machine::call(Thread& t, const Inst& in, std::uint32_t pc) {
  std::uint32_t fi;
  if (in.ops[0].kind == Operand::Kind::reg) {
    const std::uint64_t a = t.rf[in.ops[0].reg];
    if (a < kFunctionBase || (a - kFunctionBase) % 16 != 0 ||
        (a - kFunctionBase) / 16 >= p_.functions.size()) {
      fault(Fault::illegal_instruction,
            "indirect call through " + hex(a) + ", not a function address");
    }
    fi = static_cast<std::uint32_t>((a - kFunctionBase) / 16);
  } else {
    fi = static_cast<std::uint32_t>(in.ops[0].sym);
  }
  const Function& callee = p_.functions[fi];
  const Frame& cf = t.frames.back();
  const Operand& rets = in.ops[1];
  const Operand& args = in.ops[2];
  if (!callee.defined) {
    builtin(t, callee, cf, rets, args);
    return;
  }
  if (t.frames.size() >= kMaxCallDepth) {
    fault(Fault::stack_overflow,
          "call depth over " + std::to_string(kMaxCallDepth) + " calling " + callee.name);
  }
  const Function& caller = p_.functions[cf.func];
  Frame nf;
  nf.func = fi;
  nf.ret_pc = pc + 1;
  nf.reg_base = cf.reg_base + caller.regs;
  nf.local_base = cf.local_base + caller.local_bytes;
  nf.param_base = cf.param_base + caller.param_bytes;
  nf.args = static_cast<std::uint32_t>(t.addrs.size());
  for (unsigned k = 0; k < args.count; ++k)
    t.addrs.push_back(cf.param_base + p_.vec_regs[args.reg + k]);
  for (std::size_t k = args.count; k < callee.params.size(); ++k) t.addrs.push_back(0);
  nf.rets = static_cast<std::uint32_t>(t.addrs.size());
  for (unsigned k = 0; k < rets.count; ++k)
    t.addrs.push_back(cf.param_base + p_.vec_regs[rets.reg + k]);
  for (std::size_t k = rets.count; k < callee.rets.size(); ++k) t.addrs.push_back(0);
  const std::size_t regs_needed = static_cast<std::size_t>(nf.reg_base) + std::max(callee.regs, 1u);
  if (t.regs.size() < regs_needed) t.regs.resize(regs_needed);
  const std::size_t local_needed = static_cast<std::size_t>(nf.local_base) + callee.local_bytes;
  if (local_needed > kMaxLocalPerThread) {
    fault(Fault::stack_overflow, "local memory past " + std::to_string(kMaxLocalPerThread) +
                                     " bytes per thread calling " + callee.name);
  }
  if (t.local.size() < local_needed) t.local.resize(local_needed);
  const std::size_t params_needed = static_cast<std::size_t>(nf.param_base) + callee.param_bytes;
  if (t.params.size() < params_needed) t.params.resize(params_needed);
  t.frames.push_back(nf);
  t.rf = t.regs.data() + nf.reg_base;
  t.pc = callee.begin;
}

void Machine::ret(Thread& t) {
  if (t.frames.size() <= 1) {
    exit_thread(t);
    return;
  }
  const Frame f = t.frames.back();
  t.frames.pop_back();
  t.addrs.resize(f.args);
  t.pc = f.ret_pc;
  t.rf = t.regs.data() + t.frames.back().reg_base;
}

void Machine::exit_thread(Thread& t) {
  complete_async(t);  // copies in flight still land (exec_async.cpp)
  t.state = TState::exited;
  --cta_->live;
  cluster_exit(t);
  release_barriers();
}

// Reads a NUL-terminated string at a generic address.
bool Machine::read_string(Thread& t, std::uint64_t a, std::string& out) {
  out.clear();
  for (std::size_t n = 0; n < 65536; ++n) {
    if (a == 0) return false;
    const unsigned char* p = resolve(t, Space::generic, a + n, 1, false);
    if (*p == 0) return true;
    out.push_back(static_cast<char>(*p));
  }
  return true;
}

std::uint64_t Machine::param_arg(Thread& t, const Frame& cf, const Operand& args, unsigned k,
                                 unsigned size) {
  if (k >= args.count) return 0;
  const std::uint64_t a = cf.param_base + p_.vec_regs[args.reg + k];
  return load_bits(resolve(t, Space::param, a, size, false), size);
}

void Machine::set_ret(Thread& t, const Frame& cf, const Operand& rets, std::uint64_t v,
                      unsigned size) {
  if (rets.count == 0) return;
  const std::uint64_t a = cf.param_base + p_.vec_regs[rets.reg];
  store_bits(resolve(t, Space::param, a, size, true), size, v);
}

void Machine::builtin(Thread& t, const Function& f, const Frame& cf, const Operand& rets,
                      const Operand& args) {
  switch (f.builtin) {
    case Builtin::vprintf: {
      const std::uint64_t fmt = param_arg(t, cf, args, 0, 8);
      const std::uint64_t buf = param_arg(t, cf, args, 1, 8);
      std::string format;
      int parsed = -1;
      if (read_string(t, fmt, format)) {
        const unsigned char* data = nullptr;
        std::size_t avail = 0;
        if (buf != 0) {
          data = resolve(t, Space::generic, buf, 1, false);
          avail = available(t, buf);
        }
        const ReadString reader = [&](std::uint64_t a, std::string& out) {
          try {
            return read_string(t, a, out);
          } catch (const KernelFault&) {
            return false;
          }
        };
        const std::string text = format_printf(format, data, avail, reader, parsed);
        if (l_.print) {
          const std::lock_guard lock(g_.services);
          l_.print(text);
        }
      }
      set_ret(t, cf, rets, static_cast<std::uint32_t>(parsed), 4);
      return;
    }
    case Builtin::assertfail: {
      std::string expr, file, func;
      read_string(t, param_arg(t, cf, args, 0, 8), expr);
      read_string(t, param_arg(t, cf, args, 1, 8), file);
      const auto line = static_cast<std::uint32_t>(param_arg(t, cf, args, 2, 4));
      read_string(t, param_arg(t, cf, args, 3, 8), func);
      char buf[256];
      std::snprintf(buf, sizeof buf, ": block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `",
                    cta_->ctaid[0], cta_->ctaid[1], cta_->ctaid[2], t.tid[0], t.tid[1], t.tid[2]);
      const std::string msg =
          file + ":" + std::to_string(line) + ": " + func + buf + expr + "` failed.\n";
      std::fputs(msg.c_str(), stderr);
      std::fflush(stderr);
      fault(Fault::assertion,
            "device-side assertion `" + expr + "` failed at " + file + ":" + std::to_string(line));
    }
    case Builtin::malloc: {
      const std::uint64_t size = param_arg(t, cf, args, 0, 8);
      std::uint64_t p = 0;
      {
        const std::lock_guard lock(g_.services);
        if (l_.malloc) p = l_.malloc(size);
        if (p != 0) {
          const MemoryRange r{p, p + std::max<std::uint64_t>(size, 1)};
          const auto it =
              std::upper_bound(g_.heap.begin(), g_.heap.end(), p,
                               [](std::uint64_t a, const MemoryRange& x) { return a < x.base; });
          g_.heap.insert(it, r);
          g_.heap_blocks.store(g_.heap.size(), std::memory_order_release);
        }
      }
      set_ret(t, cf, rets, p, 8);
      return;
    }
    case Builtin::free: {
      const std::uint64_t p = param_arg(t, cf, args, 0, 8);
      if (p == 0) return;
      const std::lock_guard lock(g_.services);
      if (l_.free && l_.free(p)) {
        std::erase_if(g_.heap, [p](const MemoryRange& r) { return r.base == p; });
        g_.heap_blocks.store(g_.heap.size(), std::memory_order_release);
        g_.heap_generation.fetch_add(1, std::memory_order_release);  // cached blocks: stale
      }
      return;
    }
    case Builtin::set_conditional: {
      // void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value)
      const std::uint64_t handle = param_arg(t, cf, args, 0, 8);
      const auto value = static_cast<unsigned>(param_arg(t, cf, args, 1, 4));
      std::string why = "the kernel does not run as a node of a graph launch";
      bool set = false;
      {
        const std::lock_guard lock(g_.services);
        if (l_.set_conditional) set = l_.set_conditional(handle, value, why);
      }
      if (!set) {
        fault(Fault::trap, "cudaGraphSetConditional(" + std::to_string(handle) + ", " +
                               std::to_string(value) + "): " + why);
      }
      return;
    }
    case Builtin::graph_launch: {
      // cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
      const std::uint64_t exec = param_arg(t, cf, args, 0, 8);
      const std::uint64_t stream = param_arg(t, cf, args, 1, 8);
      int result = 1;  // cudaErrorInvalidValue: device graphs launch only from a graph
      {
        const std::lock_guard lock(g_.services);
        if (l_.graph_launch) result = l_.graph_launch(exec, stream);
      }
      set_ret(t, cf, rets, static_cast<std::uint32_t>(result), 4);
      return;
    }
    case Builtin::none:
      fault(Fault::illegal_instruction, "call to " + f.name + ", which no module defines");
  }
}

}  // namespace swcu::ptx::detail
