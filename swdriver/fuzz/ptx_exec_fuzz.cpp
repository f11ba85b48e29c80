// libFuzzer target: arbitrary bytes as PTX text, decoded by swcu::ptx::parse_program and, when
// that succeeds, its first runnable entry executed by swcu::ptx::execute
// (src/ptx/exec_schedule.cpp) on 2 blocks of 64 threads, as the driver launches it (interpret.cpp):
// globals in host memory with their initializers and relocations, 8-byte parameters pointing at a 4
// KiB scratch buffer, a bounded device heap, a one-second kernel timeout. A launch must end or
// fault with a message, never crash, hang or allocate without bound. Built and run by scripts/fuzz
// (docs/software-driver.md, "Fuzzing").
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/exec.hpp"
#include "ptx/program.hpp"

namespace {

constexpr std::size_t kMaxGlobalBytes = std::size_t{1} << 20;
constexpr std::size_t kScratchBytes = 4096;
constexpr std::size_t kHeapBytes = std::size_t{1} << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text{reinterpret_cast<const char*>(data), size};
  std::string error;
  const auto program = swcu::ptx::parse_program(text, error);
  if (program == nullptr) return 0;
  const swcu::ptx::Program& p = *program;

  std::uint32_t entry = UINT32_MAX;
  for (std::uint32_t i = 0; i < p.functions.size(); ++i) {
    const swcu::ptx::Function& f = p.functions[i];
    if (f.entry && f.defined && f.unsupported == UINT32_MAX && f.unresolved == UINT32_MAX) {
      entry = i;
      break;
    }
  }
  if (entry == UINT32_MAX) return 0;

  // Globals: each in its own block (externals stay at 0, as an unresolved one does in a module).
  std::size_t total = 0;
  for (const swcu::ptx::Global& g : p.globals) total += g.size;
  if (total > kMaxGlobalBytes) return 0;
  std::vector<std::unique_ptr<unsigned char[]>> blocks;
  swcu::ptx::Launch l;
  l.program = &p;
  l.entry = entry;
  l.grid[0] = 2;
  l.block[0] = 64;
  l.dynamic_shared = 256;
  l.timeout_seconds = 1;
  l.sm_count = 4;
  for (const swcu::ptx::Global& g : p.globals) {
    if (g.external) {
      l.globals.push_back(0);
      continue;
    }
    blocks.push_back(std::make_unique<unsigned char[]>(std::max<std::size_t>(g.size, 1)));
    if (!g.init.empty()) {
      std::memcpy(blocks.back().get(), g.init.data(), std::min(g.init.size(), g.size));
    }
    const auto base = reinterpret_cast<std::uint64_t>(blocks.back().get());
    l.globals.push_back(base);
    l.memory.push_back({base, base + g.size});
  }
  for (std::size_t i = 0; i < p.globals.size(); ++i) {
    if (l.globals[i] == 0) continue;
    for (const swcu::ptx::Reloc& r : p.globals[i].relocs) {
      std::uint64_t value =
          r.function ? swcu::ptx::function_address(r.target) : l.globals[r.target];
      value += static_cast<std::uint64_t>(r.addend);
      if (std::size_t{r.offset} + r.size <= p.globals[i].size) {
        std::memcpy(reinterpret_cast<unsigned char*>(l.globals[i]) + r.offset, &value,
                    std::min<std::size_t>(r.size, sizeof value));
      }
    }
  }

  // Parameters: 8-byte ones point at the scratch buffer, the rest are zero.
  auto scratch = std::make_unique<unsigned char[]>(kScratchBytes);
  const auto scratch_base = reinterpret_cast<std::uint64_t>(scratch.get());
  l.memory.push_back({scratch_base, scratch_base + kScratchBytes});
  const swcu::ptx::Function& e = p.functions[entry];
  std::size_t needed = 0;
  for (std::size_t i = 0; i < e.params.size() && i < e.param_offsets.size(); ++i) {
    needed = std::max<std::size_t>(needed, std::size_t{e.param_offsets[i]} + e.params[i].size);
  }
  if (needed > (std::size_t{1} << 16)) return 0;
  l.params.assign(needed, 0);
  for (std::size_t i = 0; i < e.params.size() && i < e.param_offsets.size(); ++i) {
    if (e.params[i].size == 8) std::memcpy(&l.params[e.param_offsets[i]], &scratch_base, 8);
  }

  // A bounded device heap.
  std::map<std::uint64_t, std::unique_ptr<unsigned char[]>> heap;
  std::size_t heap_used = 0;
  l.malloc = [&](std::uint64_t bytes) -> std::uint64_t {
    const std::size_t rounded = (bytes + 15) / 16 * 16;
    if (bytes == 0 || bytes > kHeapBytes || heap_used + rounded > kHeapBytes) return 0;
    auto block = std::make_unique<unsigned char[]>(rounded);
    const auto address = reinterpret_cast<std::uint64_t>(block.get());
    heap.emplace(address, std::move(block));
    heap_used += rounded;
    return address;
  };
  l.free = [&](std::uint64_t address) { return heap.erase(address) != 0; };
  l.print = [](const std::string&) {};
  std::sort(l.memory.begin(), l.memory.end(),
            [](const swcu::ptx::MemoryRange& a, const swcu::ptx::MemoryRange& b) {
              return a.base < b.base;
            });
  const swcu::ptx::Outcome outcome = swcu::ptx::execute(l);
  if (outcome.fault != swcu::ptx::Fault::none && outcome.message.empty()) __builtin_trap();
  return 0;
}
