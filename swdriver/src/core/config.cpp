// The SWCUDA_* settings: reading and checking them, and the event clock they choose.
#include "core/config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

namespace swcu {
namespace {

std::optional<unsigned long long> parse_unsigned(std::string_view text) {
  unsigned long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "4G", "512MiB", "81920M", "1073741824": binary multiples, case-insensitive, optional B/iB.
std::optional<unsigned long long> parse_bytes(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const auto number = parse_unsigned(text.substr(0, digits));
  if (!number) return std::nullopt;
  std::string suffix;
  for (const char c : text.substr(digits)) {
    suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (suffix.ends_with("IB")) {
    suffix.resize(suffix.size() - 2);
    if (suffix.empty()) return std::nullopt;  // "iB" alone
  } else if (suffix.ends_with('B')) {
    suffix.pop_back();
  }
  int shift = 0;
  if (suffix == "K") {
    shift = 10;
  } else if (suffix == "M") {
    shift = 20;
  } else if (suffix == "G") {
    shift = 30;
  } else if (suffix == "T") {
    shift = 40;
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  if (*number > (~0ULL >> shift)) return std::nullopt;
  return *number << shift;
}

// "all" (every ordered pair of distinct devices), "none", or "a-b,c-d,..." (blanks around
// the pairs and their numbers are ignored).
std::optional<std::vector<bool>> parse_p2p(std::string_view text, int devices) {
  std::vector<bool> allowed(Config::kMaxDevices * Config::kMaxDevices, false);
  if (text == "all") return std::vector<bool>(allowed.size(), true);
  if (text == "none") return allowed;
  while (true) {
    const auto comma = text.find(',');
    const std::string_view pair = text.substr(0, comma);
    const auto dash = pair.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    const auto from = parse_unsigned(trim_blanks(pair.substr(0, dash)));
    const auto to = parse_unsigned(trim_blanks(pair.substr(dash + 1)));
    if (!from || !to || *from == *to || *from >= static_cast<unsigned long long>(devices) ||
        *to >= static_cast<unsigned long long>(devices)) {
      return std::nullopt;
    }
    allowed[*from * Config::kMaxDevices + *to] = true;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return allowed;
}

std::string invalid(const char* variable, std::string_view value, std::string_view expected) {
  return std::string(variable) + "=\"" + std::string(value) + "\" is invalid: expected " +
         std::string(expected);
}

std::optional<std::string> setting_from(const char* (*getenv)(const char*), const char* name) {
  const char* const value = getenv(name);
  if (value == nullptr) return std::nullopt;
  const std::string_view trimmed = trim_blanks(value);
  if (trimmed.empty()) return std::nullopt;
  return std::string(trimmed);
}

}  // namespace

std::string_view trim_blanks(std::string_view text) noexcept {
  constexpr std::string_view kBlanks = " \t\r\n\v\f";
  const auto first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kBlanks) - first + 1);
}

std::optional<std::string> setting(const char* name) {
  return setting_from([](const char* n) -> const char* { return std::getenv(n); }, name);
}

Config read_config(const char* (*getenv)(const char*)) {
  Config c;
  // Only the first problem is reported; later variables are still read.
  const auto fail = [&c](std::string message) {
    if (c.error.empty()) c.error = std::move(message);
  };
  const auto get = [getenv](const char* name) { return setting_from(getenv, name); };

  if (const auto value = get("SWCUDA_DEVICES")) {
    const auto n = parse_unsigned(*value);
    if (n && *n <= static_cast<unsigned long long>(Config::kMaxDevices)) {
      c.devices = static_cast<int>(*n);
    } else {
      fail(invalid("SWCUDA_DEVICES", *value, "a number of devices from 0 to 16"));
    }
  }
  if (const auto value = get("SWCUDA_DRIVER_VERSION")) {
    const auto v = parse_unsigned(*value);
    if (v && *v >= static_cast<unsigned long long>(Config::kMinDriverVersion) && *v <= 99990 &&
        *v % 10 == 0) {
      c.driver_version = static_cast<int>(*v);
    } else {
      fail(invalid("SWCUDA_DRIVER_VERSION", *value,
                   "a CUDA version from 12000 (12.0, the oldest driver API this driver "
                   "implements) as 1000*major + 10*minor, e.g. 12040"));
    }
  }
  if (const auto value = get("SWCUDA_DEVICE_MEMORY")) {
    const auto bytes = parse_bytes(*value);
    if (bytes && *bytes >= Config::kMinDeviceMemory) {
      c.device_memory = *bytes;
    } else {
      fail(invalid("SWCUDA_DEVICE_MEMORY", *value,
                   "at least 16M (room for a context's 8 MiB device heap and 1 MiB printf FIFO), "
                   "a number of bytes, optionally with K, M, G or T (binary), e.g. 4G"));
    }
  }
  if (const auto value = get("SWCUDA_EXEC")) {
    if (*value == "immediate") {
      c.exec = ExecMode::immediate;
    } else if (*value == "deferred") {
      c.exec = ExecMode::deferred;
    } else {
      fail(invalid("SWCUDA_EXEC", *value, "immediate or deferred"));
    }
  }
  if (const auto value = get("SWCUDA_EVENT_TIME")) {
    if (*value == "host") {
      c.event_time = EventTime::host;
    } else if (*value == "simulated") {
      c.event_time = EventTime::simulated;
    } else {
      fail(invalid("SWCUDA_EVENT_TIME", *value, "host or simulated"));
    }
  }
  if (const auto value = get("SWCUDA_LAUNCH_LOG")) {
    const auto n = parse_unsigned(*value);
    if (n && *n <= (1ull << 32)) {
      c.launch_log = static_cast<std::size_t>(*n);
    } else {
      fail(invalid("SWCUDA_LAUNCH_LOG", *value, "how many launches the log keeps, e.g. 4096"));
    }
  }
  if (const auto value = get("SWCUDA_KERNEL_TIMEOUT")) {
    char* end = nullptr;
    const double seconds = std::strtod(value->c_str(), &end);
    if (end != value->c_str() && *end == '\0' && seconds >= 0 && seconds < 1e9) {
      c.kernel_timeout = seconds;
    } else {
      fail(invalid("SWCUDA_KERNEL_TIMEOUT", *value, "seconds a kernel may run, e.g. 10 or 0.5"));
    }
  }
  if (const auto value = get("SWCUDA_STREAM_WAIT_TIMEOUT")) {
    char* end = nullptr;
    const double seconds = std::strtod(value->c_str(), &end);
    if (end != value->c_str() && *end == '\0' && seconds >= 0 && seconds < 1e9) {
      c.stream_wait_timeout = seconds;
    } else {
      fail(invalid("SWCUDA_STREAM_WAIT_TIMEOUT", *value,
                   "seconds a stream memory wait may block a synchronizing call, e.g. 10 or 0.5"));
    }
  }
  c.workers = std::clamp(std::thread::hardware_concurrency(), 1u, Config::kMaxWorkers);
  if (const auto value = get("SWCUDA_WORKERS")) {
    const auto n = parse_unsigned(*value);
    if (n && *n >= 1 && *n <= Config::kMaxWorkers) {
      c.workers = static_cast<unsigned>(*n);
    } else {
      fail(invalid("SWCUDA_WORKERS", *value,
                   "a number of host threads that run a launch's blocks, from 1 to 1024"));
    }
  }
  if (const auto value = get("SWCUDA_P2P")) {
    if (auto p2p = parse_p2p(*value, c.devices)) {
      c.p2p = std::move(*p2p);
    } else {
      fail(invalid("SWCUDA_P2P", *value,
                   "all, none, or ordered pairs of distinct device ordinals such as 0-1,1-0"));
    }
  }
  if (const auto value = get("SWCUDA_FAULTS")) {
    std::string message;
    if (!parse_fault_rules(*value, c.faults, message)) fail("SWCUDA_FAULTS: " + message);
  }
  return c;
}

const Config& config() {
  static const Config* const instance =
      new Config(read_config([](const char* name) -> const char* { return std::getenv(name); }));
  return *instance;
}

unsigned long long event_time_ns(unsigned long long device_clock_ns) {
  if (config().event_time == EventTime::simulated) return device_clock_ns;
  return static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::steady_clock::now().time_since_epoch())
                                             .count());
}

}  // namespace swcu
