// Deterministic fault injection: rules that make chosen calls fail with a chosen CUresult.
// Grammar (also in include/swcuda/control.h and docs/software-driver.md):
//   rules := rule (';' rule)*        rule := name ':' when ':' code (':' modifier)*
//   when  := N | N '+' | '*%' K      code := a CUresult name or a positive number
//   modifier := 'async' | 'sticky'
#pragma once

#include <bitset>
#include <string>
#include <string_view>
#include <vector>

#include "core/prologue.hpp"
#include "core/symbols.hpp"

namespace swcu {

struct FaultRule {
  enum class When { nth, nth_and_later, every_kth };

  std::string text;                   ///< the rule as written, for messages
  std::bitset<kExportCount> targets;  ///< the exports it matches
  When when = When::nth;
  unsigned long long n = 1;        ///< N or K
  int code = 0;                    ///< the CUresult to return, never CUDA_SUCCESS
  bool async = false;              ///< ':async': fails the enqueued operation when it executes
  bool sticky = false;             ///< ':sticky': also breaks the context until destroyed
  unsigned long long matched = 0;  ///< matching calls since the rule was added

  /// Counts one matching call; true when this call must fail.
  [[nodiscard]] bool fires() noexcept;
};

/// Parses `text` (rules separated by ';'; blank pieces are ignored, so "" holds no rule). On
/// success appends to `out` and returns true; otherwise leaves `out` alone and sets `error` to
/// one line naming the malformed rule and what was expected.
[[nodiscard]] bool parse_fault_rules(std::string_view text, std::vector<FaultRule>& out,
                                     std::string& error);

/// Adds rules; they count matching calls from now on.
void add_fault_rules(std::vector<FaultRule> rules);
void clear_fault_rules() noexcept;

/// Applies the rules to a call of `sym`: no fault, or the fault of the first rule that fires.
/// Every matching rule counts the call, whether or not an earlier rule fired.
[[nodiscard]] Fault check_faults(Sym sym) noexcept;

}  // namespace swcu
