// Controls for tools that watch a process on a GPU: the profiler (cuProfilerStart,
// cuProfilerStop) and the GPU coredump settings (cuCoredumpGetAttribute[Global],
// cuCoredumpSetAttribute[Global]). No profiler runs and no coredump is ever written here: the
// calls check their arguments as documented, and the coredump settings are stored and read
// back with their documented types, sizes and defaults.
#include <unistd.h>

#include <climits>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include "core/api.hpp"

namespace swcu {
namespace {

// The longest coredump file or pipe name: "String of up to 1023 characters".
constexpr std::size_t kMaxPath = 1023;

// Every CUCoredumpGenerationFlags bit.
constexpr int kGenerationFlags = CU_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES |
                                 CU_COREDUMP_SKIP_GLOBAL_MEMORY | CU_COREDUMP_SKIP_SHARED_MEMORY |
                                 CU_COREDUMP_SKIP_LOCAL_MEMORY | CU_COREDUMP_SKIP_ABORT |
                                 CU_COREDUMP_SKIP_CONSTBANK_MEMORY;

// Coredump settings, all optional: the application's (set globally) and each context's (set
// locally) override the documented defaults.
struct Settings {
  std::optional<bool> on_exception, trigger_host, lightweight, user_trigger;
  std::optional<std::string> file, pipe;
  std::optional<int> generation_flags;
};

Settings& global_settings() noexcept {
  static auto* const settings = new Settings;  // never destroyed, like the state
  return *settings;
}

// By context id (unique for the life of the process), so a destroyed context's settings are
// never another's.
std::map<unsigned long long, Settings>& context_settings() noexcept {
  static auto* const settings = new std::map<unsigned long long, Settings>;
  return *settings;
}

enum class Type { boolean, integer, string };

// The type of a coredump attribute; false for a value that is not one.
bool type_of(int attrib, Type& out) noexcept {
  switch (attrib) {
    case CU_COREDUMP_ENABLE_ON_EXCEPTION:
    case CU_COREDUMP_TRIGGER_HOST:
    case CU_COREDUMP_LIGHTWEIGHT:
    case CU_COREDUMP_ENABLE_USER_TRIGGER: out = Type::boolean; return true;
    case CU_COREDUMP_FILE:
    case CU_COREDUMP_PIPE: out = Type::string; return true;
    case CU_COREDUMP_GENERATION_FLAGS: out = Type::integer; return true;
    default: return false;
  }
}

// The size of the memory region a value of `type` takes: a bool, an int, or a string of up to
// 1023 characters and its terminating NUL.
std::size_t size_of(Type type) noexcept {
  switch (type) {
    case Type::boolean: return sizeof(bool);
    case Type::integer: return sizeof(int);
    case Type::string: return kMaxPath + 1;
  }
  return 0;
}

// "core.cuda.HOSTNAME.PID" or "corepipe.cuda.HOSTNAME.PID", the documented defaults.
std::string default_path(const char* prefix) {
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(prefix) + ".cuda." + host + "." + std::to_string(getpid());
}

// A value as it reads: a bool, an int, or a string.
struct Value {
  bool flag = false;
  int number = 0;
  std::string text;
};

// The value of `attrib` for a context (`local`, with its creation flags) or the application.
Value read(int attrib, const Settings* local, unsigned ctx_flags) {
  const Settings& global = global_settings();
  const auto pick = [&](auto member, auto fallback) {
    if (local != nullptr && (local->*member).has_value()) return *(local->*member);
    if ((global.*member).has_value()) return *(global.*member);
    return fallback;
  };
  // CU_CTX_USER_COREDUMP_ENABLE implies CU_CTX_COREDUMP_ENABLE (cuCtxCreate).
  const bool user_flag = (ctx_flags & CU_CTX_USER_COREDUMP_ENABLE) != 0;
  const bool exception_flag = user_flag || (ctx_flags & CU_CTX_COREDUMP_ENABLE) != 0;
  Value v;
  switch (attrib) {
    case CU_COREDUMP_ENABLE_ON_EXCEPTION:
      v.flag = pick(&Settings::on_exception, false) ||
               (local != nullptr && exception_flag && !local->on_exception.has_value());
      break;
    case CU_COREDUMP_TRIGGER_HOST: v.flag = pick(&Settings::trigger_host, true); break;
    case CU_COREDUMP_LIGHTWEIGHT: v.flag = pick(&Settings::lightweight, false); break;
    case CU_COREDUMP_ENABLE_USER_TRIGGER:
      v.flag = pick(&Settings::user_trigger, false) || (local != nullptr && user_flag);
      break;
    case CU_COREDUMP_FILE: v.text = pick(&Settings::file, default_path("core")); break;
    case CU_COREDUMP_PIPE: v.text = pick(&Settings::pipe, default_path("corepipe")); break;
    default: v.number = pick(&Settings::generation_flags, int{CU_COREDUMP_DEFAULT_FLAGS}); break;
  }
  return v;
}

// cuCoredumpGetAttribute(Global): `local` is the current context's settings (nullptr: the
// application's).
CUresult get(int attrib, void* value, std::size_t* size, const Settings* local, unsigned flags) {
  Type type{};
  if (size == nullptr || !type_of(attrib, type)) return CUDA_ERROR_INVALID_VALUE;
  if (value == nullptr) {  // "the size of the memory region expected for attrib"
    *size = size_of(type);
    return CUDA_SUCCESS;
  }
  const Value v = read(attrib, local, flags);
  switch (type) {
    case Type::boolean:
      if (*size < sizeof(bool)) return CUDA_ERROR_INVALID_VALUE;
      std::memcpy(value, &v.flag, sizeof(bool));
      return CUDA_SUCCESS;
    case Type::integer:
      if (*size < sizeof(int)) return CUDA_ERROR_INVALID_VALUE;
      std::memcpy(value, &v.number, sizeof(int));
      return CUDA_SUCCESS;
    case Type::string:
      if (*size < v.text.size() + 1) return CUDA_ERROR_INVALID_VALUE;  // with its NUL
      std::memcpy(value, v.text.c_str(), v.text.size() + 1);
      return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// cuCoredumpSetAttribute(Global) into `into`. A string is the bytes of `value` up to its first
// NUL or `*size`, 1 to 1023 characters.
CUresult set(int attrib, const void* value, std::size_t* size, Settings& into) {
  Type type{};
  if (size == nullptr || !type_of(attrib, type)) return CUDA_ERROR_INVALID_VALUE;
  if (value == nullptr) {
    *size = size_of(type);
    return CUDA_SUCCESS;
  }
  if (type == Type::string) {
    const auto* chars = static_cast<const char*>(value);
    const std::size_t length = strnlen(chars, *size);
    if (length == 0 || length > kMaxPath) return CUDA_ERROR_INVALID_VALUE;
    (attrib == CU_COREDUMP_FILE ? into.file : into.pipe) = std::string(chars, length);
    return CUDA_SUCCESS;
  }
  if (*size < size_of(type)) return CUDA_ERROR_INVALID_VALUE;
  if (type == Type::integer) {
    int flags = 0;
    std::memcpy(&flags, value, sizeof flags);
    if ((flags & ~kGenerationFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
    into.generation_flags = flags;
    return CUDA_SUCCESS;
  }
  unsigned char byte = 0;  // read as a byte: any bit pattern of a bool argument is defined here
  std::memcpy(&byte, value, 1);
  const bool flag = byte != 0;
  switch (attrib) {
    case CU_COREDUMP_ENABLE_ON_EXCEPTION: into.on_exception = flag; break;
    case CU_COREDUMP_TRIGGER_HOST: into.trigger_host = flag; break;
    case CU_COREDUMP_LIGHTWEIGHT: into.lightweight = flag; break;
    default: into.user_trigger = flag; break;
  }
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::Context;
using swcu::State;
using swcu::Sym;

// "Enables profile collection by the active profiling tool for the current context. If
// profiling is already enabled, then cuProfilerStart() has no effect." No tool is active here.
CUresult cuProfilerStart(void) {
  return swcu::call(Sym::cuProfilerStart, [](State& s) -> CUresult {
    Context* ctx = nullptr;
    return swcu::current_context(s, ctx);
  });
}

// "Disables profile collection by the active profiling tool for the current context."
CUresult cuProfilerStop(void) {
  return swcu::call(Sym::cuProfilerStop, [](State& s) -> CUresult {
    Context* ctx = nullptr;
    return swcu::current_context(s, ctx);
  });
}

CUresult cuCoredumpGetAttribute(CUcoredumpSettings attrib, void* value, size_t* size) {
  return swcu::call(Sym::cuCoredumpGetAttribute, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    const auto& all = swcu::context_settings();
    const auto it = all.find(ctx->id);
    static const swcu::Settings kNone;
    return swcu::get(swcu::raw(attrib), value, size, it != all.end() ? &it->second : &kNone,
                     ctx->flags);
  });
}

CUresult cuCoredumpGetAttributeGlobal(CUcoredumpSettings attrib, void* value, size_t* size) {
  return swcu::call(Sym::cuCoredumpGetAttributeGlobal, [=](State&) -> CUresult {
    return swcu::get(swcu::raw(attrib), value, size, nullptr, 0);
  });
}

// "CU_COREDUMP_ENABLE_USER_TRIGGER and CU_COREDUMP_PIPE cannot be set on a per-context basis."
CUresult cuCoredumpSetAttribute(CUcoredumpSettings attrib, void* value, size_t* size) {
  return swcu::call(Sym::cuCoredumpSetAttribute, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    const int a = swcu::raw(attrib);
    if (a == CU_COREDUMP_ENABLE_USER_TRIGGER || a == CU_COREDUMP_PIPE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::Settings local = swcu::context_settings()[ctx->id];  // applied when it is valid
    const CUresult r = swcu::set(a, value, size, local);
    if (r == CUDA_SUCCESS) swcu::context_settings()[ctx->id] = std::move(local);
    return r;
  });
}

CUresult cuCoredumpSetAttributeGlobal(CUcoredumpSettings attrib, void* value, size_t* size) {
  return swcu::call(Sym::cuCoredumpSetAttributeGlobal, [=](State&) -> CUresult {
    return swcu::set(swcu::raw(attrib), value, size, swcu::global_settings());
  });
}

}  // extern "C"
