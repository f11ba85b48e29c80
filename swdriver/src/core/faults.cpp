#include "core/faults.hpp"

#include <atomic>
#include <charconv>
#include <mutex>
#include <optional>

#include "core/errors.hpp"

namespace swcu {
namespace {

constexpr unsigned long long kMaxCode = 1023;

struct Rules {
  std::mutex mutex;
  std::vector<FaultRule> rules;
  std::atomic<bool> any{false};  // lets calls skip the lock while no rule is set
};

Rules& rules() {
  static Rules* const instance = new Rules;  // never destroyed: calls may come during exit
  return *instance;
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::optional<unsigned long long> positive_number(std::string_view digits) {
  unsigned long long value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || value == 0) {
    return std::nullopt;
  }
  return value;
}

// The exports a rule's name selects: every variant of a base name, or one exact export.
std::optional<std::bitset<kExportCount>> targets_of(std::string_view name) {
  std::bitset<kExportCount> targets;
  for (const Variant& v : variants_of(name)) targets.set(index(v.sym));
  if (targets.none()) {
    const auto sym = find_export(name);
    if (!sym) return std::nullopt;
    targets.set(index(*sym));
  }
  return targets;
}

// Parses one rule; returns the reason when it is malformed.
std::optional<std::string> parse_rule(std::string_view text, FaultRule& rule) {
  static constexpr const char* kShape = "expected name:when:code[:async][:sticky]";
  std::vector<std::string_view> fields;
  for (std::string_view rest = text;;) {
    const auto colon = rest.find(':');
    fields.push_back(trim(rest.substr(0, colon)));
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  if (fields.size() < 3) return kShape;
  for (std::size_t i = 3; i < fields.size(); ++i) {
    if (fields[i] == "async") {
      rule.async = true;
    } else if (fields[i] == "sticky") {
      rule.sticky = true;
    } else {
      return std::string(kShape) + ", got \"" + std::string(fields[i]) + "\" as a modifier";
    }
  }
  const std::string_view name = fields[0];
  const std::string_view when = fields[1];
  const std::string_view code = fields[2];

  const auto targets = targets_of(name);
  if (!targets) {
    return "expected a driver function (base or exported name), got \"" + std::string(name) + "\"";
  }
  rule.targets = *targets;

  const std::string when_error =
      "expected N, N+ or *%K (N, K >= 1) as 'when', got \"" + std::string(when) + "\"";
  std::string_view count = when;
  if (when.starts_with("*%")) {
    rule.when = FaultRule::When::every_kth;
    count.remove_prefix(2);
  } else if (when.ends_with('+')) {
    rule.when = FaultRule::When::nth_and_later;
    count.remove_suffix(1);
  } else {
    rule.when = FaultRule::When::nth;
  }
  const auto n = positive_number(count);
  if (!n) return when_error;
  rule.n = *n;

  if (!code.empty() && code.find_first_not_of("0123456789") == std::string_view::npos) {
    // Any value a CUresult can hold (its enumerators reach 999), known to cuda.h or not.
    const auto value = positive_number(code);
    if (!value || *value > kMaxCode) {
      return "expected an error code from 1 to 1023, got \"" + std::string(code) + "\"";
    }
    rule.code = static_cast<int>(*value);
  } else {
    const ErrorInfo* error = find_error(code);
    if (error == nullptr) {
      return "expected a CUresult name such as CUDA_ERROR_OUT_OF_MEMORY or a number, got \"" +
             std::string(code) + "\"";
    }
    if (error->value == 0) return "expected an error code, not CUDA_SUCCESS";
    rule.code = error->value;
  }
  return std::nullopt;
}

}  // namespace

bool FaultRule::fires() noexcept {
  ++matched;
  switch (when) {
    case When::nth: return matched == n;
    case When::nth_and_later: return matched >= n;
    case When::every_kth: return matched % n == 0;
  }
  return false;
}

bool parse_fault_rules(std::string_view text, std::vector<FaultRule>& out, std::string& error) {
  std::vector<FaultRule> parsed;
  while (true) {
    const auto end = text.find(';');
    const std::string_view piece = trim(text.substr(0, end));
    if (!piece.empty()) {
      FaultRule rule;
      rule.text = piece;
      if (const auto reason = parse_rule(piece, rule)) {
        error = "fault rule \"" + std::string(piece) + "\" is malformed: " + *reason;
        return false;
      }
      parsed.push_back(std::move(rule));
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  out.insert(out.end(), std::make_move_iterator(parsed.begin()),
             std::make_move_iterator(parsed.end()));
  return true;
}

void add_fault_rules(std::vector<FaultRule> added) {
  Rules& r = rules();
  std::lock_guard lock(r.mutex);
  for (FaultRule& rule : added) {
    rule.matched = 0;
    r.rules.push_back(std::move(rule));
  }
  r.any.store(!r.rules.empty(), std::memory_order_release);
}

void clear_fault_rules() noexcept {
  Rules& r = rules();
  std::lock_guard lock(r.mutex);
  r.rules.clear();
  r.any.store(false, std::memory_order_release);
}

Fault check_faults(Sym sym) noexcept {
  Rules& r = rules();
  if (!r.any.load(std::memory_order_acquire)) return {};
  std::lock_guard lock(r.mutex);
  Fault fault;
  for (FaultRule& rule : r.rules) {
    if (rule.targets.test(index(sym)) && rule.fires() && fault.code == 0) {
      fault = {rule.code, rule.async, rule.sticky};
    }
  }
  return fault;
}

}  // namespace swcu
