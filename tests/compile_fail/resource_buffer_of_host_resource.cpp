// expect: no matching function for call to .*resource_buffer
// A resource_buffer (device memory) cannot be made from a host-only resource.
#include <cuwrap/memory_resource.hpp>
#include <new>

struct host_heap {
  void* allocate(std::size_t bytes, std::size_t alignment) {
    return ::operator new (bytes, std::align_val_t{alignment});
  }
  void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept {
    ::operator delete (p, bytes, std::align_val_t{alignment});
  }
  friend bool operator==(const host_heap&, const host_heap&) = default;
  friend constexpr void get_property(const host_heap&, cuwrap::mr::host_accessible) noexcept {}
#ifndef CUWRAP_COMPILE_FAIL
  friend constexpr void get_property(const host_heap&, cuwrap::mr::device_accessible) noexcept {}
#endif
};

std::size_t make(host_heap heap) {
  const cuwrap::mr::resource_buffer<int> buffer{heap, 4};
  return buffer.size();
}
