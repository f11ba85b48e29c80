// expect: no matching function for call to .*basic_any_resource
// A host-only resource is not accepted where device_accessible is required: the properties of
// any_resource are checked at compile time.
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
};

#ifdef CUWRAP_COMPILE_FAIL
using required = cuwrap::mr::any_resource<cuwrap::mr::device_accessible>;
#else
using required = cuwrap::mr::any_resource<cuwrap::mr::host_accessible>;
#endif

bool erase(host_heap heap) {
  const required erased{heap};
  return erased.empty();
}
