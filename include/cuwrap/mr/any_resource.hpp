// any_resource: a type-erased, owning, copyable memory resource carrying its properties in its
// type (any_resource<device_accessible>), and its stream-ordered sibling.
#pragma once

#include <cstddef>
#include <source_location>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "cuwrap/error.hpp"
#include "cuwrap/mr/concepts.hpp"
#include "cuwrap/mr/erased.hpp"
#include "cuwrap/mr/resource_base.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::mr {

template <bool Ordered, class... Properties>
class basic_resource_ref;

/// Owns a heap copy of any resource with at least `Properties` (and, when `Ordered`, a
/// stream-ordered one), behind one table of functions: each call is one indirect call to the
/// resource's own. Copyable (copies the resource; the resource must be copy-constructible, as
/// cuwrap's resources are), and cheap to move: a moved-from any_resource holds nothing and its
/// allocate() throws cuwrap::usage_error (deallocate() does nothing). It converts to an
/// any_resource of fewer properties (and from stream-ordered to synchronous) without a second
/// level of erasure. Two any_resources are equal when they hold resources of the same type that
/// compare equal. Use the aliases any_resource and any_stream_ordered_resource.
template <bool Ordered, class... Properties>
class basic_any_resource
    : public detail::cccl_async_names<basic_any_resource<Ordered, Properties...>>,
      public detail::with_property<Properties>...,
      public detail::erased_calls<basic_any_resource<Ordered, Properties...>, Ordered> {
 public:
  /// The name in moved-from errors.
  static constexpr const char* erased_name = "any_resource";

  /// Takes a copy of `r` (moved in when an rvalue). Only resources with every one of
  /// `Properties` convert: a missing property is a compile-time error. A resource_ref is taken
  /// as a resource like any other: the any_resource then holds the reference, not the resource,
  /// which must outlive it.
  template <class R, class D = std::remove_cvref_t<R>>
  requires(!detail::is_any_resource<D>::value) && resource_with<D, Properties...> &&
      (!Ordered || stream_ordered_resource<D>)&&std::copy_constructible<D> basic_any_resource(
          R&& r)  // NOLINT: converting, as CCCL's any_resource
      : vtable_{&detail::vtable_for<D>},
  resource_{new D(std::forward<R>(r))} {}

  /// A copy of the resource `other` holds, promising fewer properties.
  template <bool O, class... Others>
  requires(O || !Ordered) && detail::has_all<basic_any_resource<O, Others...>, Properties...> &&
      (!std::is_same_v<basic_any_resource<O, Others...>, basic_any_resource>)
          basic_any_resource(const basic_any_resource<O, Others...>& other)  // NOLINT: converting
      : vtable_{other.vtable_},
  resource_{other.clone()} {}
  /// Takes the resource `other` holds, promising fewer properties.
  template <bool O, class... Others>
  requires(O || !Ordered) && detail::has_all<basic_any_resource<O, Others...>, Properties...> &&
      (!std::is_same_v<basic_any_resource<O, Others...>, basic_any_resource>)basic_any_resource(
          basic_any_resource<O, Others...>&& other) noexcept  // NOLINT: converting
      : vtable_{std::exchange(other.vtable_, nullptr)},
  resource_{std::exchange(other.resource_, nullptr)} {}

  /// A copy of the resource.
  basic_any_resource(const basic_any_resource& other)
      : vtable_{other.vtable_}, resource_{other.clone()} {}
  /// Takes the resource; `other` holds nothing after.
  basic_any_resource(basic_any_resource&& other) noexcept
      : vtable_{std::exchange(other.vtable_, nullptr)},
        resource_{std::exchange(other.resource_, nullptr)} {}
  basic_any_resource& operator=(const basic_any_resource& other) {
    if (this != &other) {
      basic_any_resource copy{other};
      swap(copy);
    }
    return *this;
  }
  basic_any_resource& operator=(basic_any_resource&& other) noexcept {
    basic_any_resource moved{std::move(other)};
    swap(moved);
    return *this;
  }
  ~basic_any_resource() {
    if (resource_ != nullptr) {
      vtable_->destroy(resource_);
    }
  }

  /// Exchanges the held resources.
  void swap(basic_any_resource& other) noexcept {
    std::swap(vtable_, other.vtable_);
    std::swap(resource_, other.resource_);
  }

 private:
  template <bool, class...>
  friend class basic_any_resource;
  template <bool, class...>
  friend class basic_resource_ref;
  friend detail::erased_calls<basic_any_resource, Ordered>;

  [[nodiscard]] void* clone() const {
    return resource_ != nullptr ? vtable_->clone(resource_) : nullptr;
  }

  const detail::resource_vtable* vtable_;
  void* resource_;
};

namespace detail {
template <bool Ordered, class... Properties>
struct is_erased<basic_any_resource<Ordered, Properties...>> : std::true_type {};
template <bool Ordered, class... Properties>
struct is_erased<basic_resource_ref<Ordered, Properties...>> : std::true_type {};
template <bool Ordered, class... Properties>
struct is_any_resource<basic_any_resource<Ordered, Properties...>> : std::true_type {};
}  // namespace detail

/// An owning, type-erased synchronous resource with `Properties`.
template <class... Properties>
using any_resource = basic_any_resource<false, Properties...>;
/// An owning, type-erased stream-ordered resource with `Properties`.
template <class... Properties>
using any_stream_ordered_resource = basic_any_resource<true, Properties...>;

}  // namespace cuwrap::mr
