// The ownership part of every handle owner (stream, event, graph, graph_exec, memory_pool,
// rtc::program, rtc::linker), written once: move, destroy, release, adopt, and the moved-from
// state.
#pragma once

#include <utility>

namespace cuwrap::detail {

/// The view of an owner that has no view type of its own (rtc::program, rtc::linker): the
/// handle, get() and empty(). The null handle is the empty one.
template <class Handle>
class handle_view {
 public:
  using native_handle_type = Handle;  ///< the library's handle type

  /// Views `handle` (not owned).
  constexpr explicit handle_view(Handle handle) noexcept : handle_{handle} {}
  /// The library's handle; null when empty.
  [[nodiscard]] constexpr Handle get() const noexcept { return handle_; }
  /// True for a moved-from or released owner.
  [[nodiscard]] constexpr bool empty() const noexcept { return handle_ == nullptr; }

 protected:
  Handle handle_;
};

/// An owner of one driver handle. It derives from the owner's view, Traits::ref_type, so an
/// owner is-a view and converts to one for free. Traits supplies:
///
///     using ref_type = stream_ref;        // the view; it holds `handle_` (protected)
///     using state_type = ...;             // kept beside the handle (the context's lifetime)
///     static native_handle_type empty_handle() noexcept;  // what a moved-from owner holds
///     static void destroy(native_handle_type) noexcept;   // the destroy call
///
/// A moved-from or released owner holds empty_handle() and an empty state; its views are
/// empty too (ref_type::empty()), and every operation on either throws cuwrap::usage_error
/// before any driver call. Destroying or assigning to it does nothing and never throws.
template <class Traits>
class unique_handle : public Traits::ref_type {
  using ref = typename Traits::ref_type;

 public:
  using native_handle_type = typename ref::native_handle_type;  ///< the driver's handle type
  using state_type = typename Traits::state_type;  ///< what the owner keeps beside the handle

  unique_handle(const unique_handle&) = delete;
  unique_handle& operator=(const unique_handle&) = delete;
  /// Takes `other`'s handle and state; `other` is left empty.
  unique_handle(unique_handle&& other) noexcept
      : ref{other.take()}, state_{std::exchange(other.state_, state_type{})} {}
  /// Destroys the handle owned now (if any), then takes `other`'s.
  unique_handle& operator=(unique_handle&& other) noexcept {
    if (this != &other) {
      unique_handle old{std::move(*this)};  // destroys the previous handle
      static_cast<ref&>(*this) = other.take();
      state_ = std::exchange(other.state_, state_type{});
    }
    return *this;
  }
  /// Destroys the handle, unless the owner is empty.
  ~unique_handle() {
    if (this->handle_ != Traits::empty_handle()) {
      Traits::destroy(this->handle_);
    }
  }

  /// Gives up ownership: the caller must destroy the returned handle. The owner is left empty.
  [[nodiscard]] native_handle_type release() noexcept {
    state_ = state_type{};
    return std::exchange(this->handle_, Traits::empty_handle());
  }

 protected:
  /// Adopts the handle `view` views, with `state` (the owners' constructors and adopt()).
  unique_handle(ref view, state_type state) noexcept : ref{view}, state_{std::move(state)} {}
  /// What the owner keeps beside the handle.
  [[nodiscard]] const state_type& state() const noexcept { return state_; }
  /// The same, for owners that change it (an rtc::program's name expressions).
  [[nodiscard]] state_type& state() noexcept { return state_; }

 private:
  ref take() noexcept {
    ref view = *this;
    this->handle_ = Traits::empty_handle();
    return view;
  }

  state_type state_;
};

}  // namespace cuwrap::detail
