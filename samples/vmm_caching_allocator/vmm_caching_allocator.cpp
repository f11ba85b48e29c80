// vmm_caching_allocator: a small caching allocator built on cuwrap::mr::virtual_memory_resource.
// It sub-allocates blocks from ONE segment that grows in place (the "expandable segments" pattern
// of PyTorch's allocator): when the blocks outgrow the mapped memory it maps more physical memory
// after it, so the segment's address and every block in it stay where they are. Freed blocks are
// cached by size and reused. A workload of allocations, frees and kernels (fill_pattern, update)
// runs on it; at the end every live block is checked against a host reference, the statistics
// printed, and the program exits 1 if anything is wrong.
//
//   vmm_caching_allocator [--steps=N] [--kernels=DIR]
#include <cstdint>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/mr/virtual_memory_resource.hpp>
#include <map>
#include <random>
#include <vector>

#include "options.hpp"

namespace {

/// Blocks from one growable segment, freed blocks cached by size (best fit).
class caching_allocator {
 public:
  struct statistics {
    std::size_t requests = 0;     ///< allocate calls
    std::size_t cache_hits = 0;   ///< served from freed blocks
    std::size_t grows = 0;        ///< times the segment mapped more memory
    std::size_t in_use = 0;       ///< bytes in live blocks
    std::size_t peak_in_use = 0;  ///< the most bytes in live blocks at once
    std::size_t cached = 0;       ///< bytes in freed blocks kept for reuse
  };

  caching_allocator(cuwrap::device d, std::size_t max_bytes)
      : resource_{d, max_bytes}, base_{static_cast<std::byte*>(resource_.allocate(0))} {}
  ~caching_allocator() { resource_.deallocate(base_, resource_.mapped_bytes(base_)); }
  caching_allocator(const caching_allocator&) = delete;
  caching_allocator& operator=(const caching_allocator&) = delete;

  /// `bytes` (rounded up to 256) of device memory.
  void* allocate(std::size_t bytes) {
    bytes = (bytes + 255) / 256 * 256;
    ++stats_.requests;
    std::size_t offset = 0;
    if (const auto it = free_.lower_bound(bytes); it != free_.end() && it->first < 2 * bytes) {
      offset = it->second;
      bytes = it->first;  // the whole cached block
      stats_.cached -= bytes;
      free_.erase(it);
      ++stats_.cache_hits;
    } else {
      offset = top_;
      top_ += bytes;
      if (top_ > resource_.mapped_bytes(base_)) {
        resource_.grow(base_, top_);  // in place: base_ does not move
        ++stats_.grows;
      }
    }
    sizes_[offset] = bytes;
    stats_.in_use += bytes;
    stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
    return base_ + offset;
  }
  /// Caches the block for reuse.
  void deallocate(void* p) {
    const auto offset = static_cast<std::size_t>(static_cast<std::byte*>(p) - base_);
    const auto it = sizes_.find(offset);
    if (it == sizes_.end()) throw std::invalid_argument{"not a block of this allocator"};
    free_.emplace(it->second, offset);
    stats_.in_use -= it->second;
    stats_.cached += it->second;
    sizes_.erase(it);
  }

  [[nodiscard]] const statistics& stats() const noexcept { return stats_; }
  [[nodiscard]] const void* segment() const noexcept { return base_; }
  [[nodiscard]] std::size_t mapped() const { return resource_.mapped_bytes(base_); }
  [[nodiscard]] std::size_t chunks() const { return resource_.chunk_count(base_); }

 private:
  cuwrap::mr::virtual_memory_resource resource_;
  std::byte* base_;
  std::size_t top_ = 0;                           ///< the end of the blocks ever carved
  std::map<std::size_t, std::size_t> sizes_;      ///< live blocks: offset -> bytes
  std::multimap<std::size_t, std::size_t> free_;  ///< cached blocks: bytes -> offset
  statistics stats_;
};

struct block {
  int* data = nullptr;
  int count = 0;
  std::vector<int> expected;  ///< the host reference
};

}  // namespace

int main(int argc, char** argv) try {
  const samples::options options{
      argc, argv, {{"steps", "48"}, {"kernels", CUWRAP_SAMPLE_KERNELS_DIR}}};
  const int steps = options.positive("steps");
  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::scoped_current_context current{ctx};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load_file(ctx, options.text("kernels") + "/caching.fatbin");
  const auto fill_pattern = mod.kernel<void(int*, int, int)>("fill_pattern");
  const auto update = mod.kernel<void(int*, int, int)>("update");

  caching_allocator allocator{dev, std::size_t{256} << 20};
  const void* const segment = allocator.segment();
  std::printf("vmm_caching_allocator on %s: one segment at %p, up to 256 MiB\n", dev.name().c_str(),
              segment);

  std::mt19937 random{7};
  std::vector<block> live;
  for (int step = 0; step < steps; ++step) {
    // Blocks grow with the step, so the segment has to grow; some are freed and reused.
    const int count = 4096 + static_cast<int>(random() % 16384) * (1 + step / 8);
    block b;
    b.data = static_cast<int*>(allocator.allocate(sizeof(int) * static_cast<std::size_t>(count)));
    b.count = count;
    b.expected.resize(static_cast<std::size_t>(count));
    s.launch(fill_pattern, cuwrap::launch_config::linear(static_cast<std::size_t>(count), 256),
             b.data, count, step);
    for (int i = 0; i < count; ++i) b.expected[static_cast<std::size_t>(i)] = step * 7919 + i;
    live.push_back(std::move(b));
    // Update a random live block in place (it may be in memory mapped before a grow).
    block& u = live[random() % live.size()];
    s.launch(update, cuwrap::launch_config::linear(static_cast<std::size_t>(u.count), 256), u.data,
             u.count, step);
    for (int& v : u.expected) v = v * 3 + step;
    if (step % 3 == 2) {  // free one: its memory goes to the cache
      const std::size_t victim = random() % live.size();
      s.synchronize();  // its kernels are done before the block is reused
      allocator.deallocate(live[victim].data);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(victim));
    }
  }
  s.synchronize();

  bool ok = allocator.segment() == segment;
  if (!ok) std::fprintf(stderr, "FAILED: the segment moved\n");
  for (const block& b : live) {
    std::vector<int> back(static_cast<std::size_t>(b.count));
    cuwrap::copy(back, cuwrap::device_span<int>{b.data, back.size()});
    for (std::size_t i = 0; i < back.size(); ++i) {
      if (back[i] != b.expected[i]) {
        std::fprintf(stderr, "FAILED: block at %p, element %zu is %d, expected %d\n",
                     static_cast<void*>(b.data), i, back[i], b.expected[i]);
        ok = false;
        break;
      }
    }
  }
  const auto& st = allocator.stats();
  std::printf("requests %zu, cache hits %zu, segment grows %zu (in place, %zu chunks)\n",
              st.requests, st.cache_hits, st.grows, allocator.chunks());
  std::printf("mapped %zu KiB, in use %zu KiB, peak %zu KiB, cached %zu KiB, %zu live blocks\n",
              allocator.mapped() >> 10, st.in_use >> 10, st.peak_in_use >> 10, st.cached >> 10,
              live.size());
  if (st.grows < 2) {
    std::fprintf(stderr, "FAILED: the workload was meant to grow the segment at least twice\n");
    ok = false;
  }
  for (const block& b : live) allocator.deallocate(b.data);
  std::printf("%s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "vmm_caching_allocator: %s\n", e.what());
  return 1;
}
