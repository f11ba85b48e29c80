// The virtual-memory resource (cuwrap/mr/virtual_memory_resource.hpp): one reservation per
// allocation, physical chunks mapped at its end as it grows.
#include "cuwrap/mr/virtual_memory_resource.hpp"

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cuwrap/virtual_memory.hpp"

namespace cuwrap::mr {

namespace {

// One allocation: its reservation and the chunks mapped from its start, in order.
struct segment {
  address_reservation reservation;
  std::vector<memory_mapping> chunks;
  std::size_t mapped = 0;
};

std::size_t round_up(std::size_t bytes, std::size_t unit) {
  return (bytes + unit - 1) / unit * unit;
}

[[noreturn]] void unknown_pointer(const char* operation, const void* p,
                                  std::source_location where) {
  throw usage_error{"cuwrap::mr::virtual_memory_resource::" + std::string{operation} + ": " +
                        std::to_string(reinterpret_cast<std::uintptr_t>(p)) +
                        " is not an allocation of this resource",
                    where};
}

}  // namespace

struct virtual_memory_resource::state {
  cuwrap::device dev;
  std::size_t granularity = 0;
  std::size_t max_bytes = 0;
  mutable std::mutex mutex;
  std::map<const void*, segment> segments;

  explicit state(cuwrap::device d) : dev{d} {}

  segment& find(const void* p, const char* operation, std::source_location where) {
    const auto it = segments.find(p);
    if (it == segments.end()) unknown_pointer(operation, p, where);
    return it->second;
  }

  // Maps chunks until `s` holds `bytes` (one chunk for the whole difference), or unmaps the
  // chunks past it.
  void resize(segment& s, std::size_t bytes, std::source_location where) {
    const std::size_t wanted = round_up(bytes, granularity);
    if (wanted > max_bytes) {
      detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE),
                          "cuwrap::mr::virtual_memory_resource::resize",
                          std::to_string(bytes) + " bytes exceed the resource's max_bytes of " +
                              std::to_string(max_bytes),
                          where);
    }
    if (wanted > s.mapped) {
      s.chunks.reserve(s.chunks.size() + 1);  // before the mapping: push_back cannot throw
      const physical_memory memory{dev, wanted - s.mapped, {}, where};
      memory_mapping chunk = s.reservation.map(s.mapped, memory, where);
      chunk.set_access(dev, memory_access::read_write, where);
      s.chunks.push_back(std::move(chunk));
      s.mapped = wanted;
      return;
    }
    while (!s.chunks.empty() && s.mapped - s.chunks.back().size() >= wanted) {
      const std::size_t size = s.chunks.back().size();
      s.chunks.back().unmap(where);
      s.chunks.pop_back();
      s.mapped -= size;
    }
  }
};

virtual_memory_resource::virtual_memory_resource(cuwrap::device d, std::size_t max_bytes,
                                                 std::source_location where)
    : state_{std::make_shared<state>(d)} {
  state_->granularity =
      allocation_granularity(memory_location::on(d), granularity_kind::minimum, {}, where);
  state_->max_bytes = round_up(max_bytes, state_->granularity);
  if (state_->max_bytes == 0) {
    detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE),
                        "cuwrap::mr::virtual_memory_resource", "max_bytes must be more than 0",
                        where);
  }
}

void* virtual_memory_resource::allocate(std::size_t bytes, std::size_t alignment,
                                        std::source_location where) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE),
                        "cuwrap::mr::virtual_memory_resource::allocate",
                        "alignment " + std::to_string(alignment) + " is not a power of two", where);
  }
  const std::lock_guard lock{state_->mutex};
  segment s{address_reservation{state_->max_bytes, alignment > state_->granularity ? alignment : 0,
                                0, where},
            {},
            0};
  state_->resize(s, bytes, where);
  const void* const p = reinterpret_cast<const void*>(s.reservation.address());  // NOLINT
  state_->segments.emplace(p, std::move(s));
  return const_cast<void*>(p);
}

void virtual_memory_resource::deallocate(void* p, std::size_t, std::size_t) noexcept {
  std::lock_guard lock{state_->mutex};
  const auto it = state_->segments.find(p);
  if (it == state_->segments.end()) {
    check_nothrow(CUDA_ERROR_INVALID_VALUE, "cuwrap::mr::virtual_memory_resource::deallocate");
    return;
  }
  // Chunks first, last to first, then the reservation (the mappings hold it anyway).
  auto s = std::move(it->second);
  state_->segments.erase(it);
  while (!s.chunks.empty()) s.chunks.pop_back();
}

void virtual_memory_resource::resize(void* p, std::size_t bytes, std::source_location where) {
  const std::lock_guard lock{state_->mutex};
  state_->resize(state_->find(p, "resize", where), bytes, where);
}

void virtual_memory_resource::grow(void* p, std::size_t bytes, std::source_location where) {
  const std::lock_guard lock{state_->mutex};
  segment& s = state_->find(p, "grow", where);
  if (bytes > s.mapped) state_->resize(s, bytes, where);
}

std::size_t virtual_memory_resource::mapped_bytes(const void* p, std::source_location where) const {
  const std::lock_guard lock{state_->mutex};
  return state_->find(p, "mapped_bytes", where).mapped;
}

std::size_t virtual_memory_resource::chunk_count(const void* p, std::source_location where) const {
  const std::lock_guard lock{state_->mutex};
  return state_->find(p, "chunk_count", where).chunks.size();
}

std::size_t virtual_memory_resource::max_bytes() const noexcept { return state_->max_bytes; }
std::size_t virtual_memory_resource::granularity() const noexcept { return state_->granularity; }
cuwrap::device virtual_memory_resource::device() const noexcept { return state_->dev; }
std::size_t virtual_memory_resource::allocation_count() const {
  const std::lock_guard lock{state_->mutex};
  return state_->segments.size();
}

}  // namespace cuwrap::mr
