// Merging PTX texts into one module (ptx_merge.hpp; the rules are at the top of link.cpp).
#include "module/ptx_merge.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "module/image.hpp"

namespace swcu {
namespace {

constexpr std::string_view kBuiltins[] = {
    "vprintf", "__assertfail", "malloc", "free", "cudaGraphSetConditional", "cudaGraphLaunch"};

bool ident_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%';
}
bool ident_char(char c) noexcept { return ident_start(c) || (c >= '0' && c <= '9'); }
bool space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Skips a comment or string literal at text[i]; false when there is none. An unterminated one
// runs to the end.
bool skip_comment_or_string(std::string_view t, std::size_t& i) noexcept {
  if (t[i] == '/' && i + 1 < t.size() && t[i + 1] == '/') {
    while (i < t.size() && t[i] != '\n') ++i;
    return true;
  }
  if (t[i] == '/' && i + 1 < t.size() && t[i + 1] == '*') {
    const std::size_t end = t.find("*/", i + 2);
    i = end == std::string_view::npos ? t.size() : end + 2;
    return true;
  }
  if (t[i] == '"') {
    for (++i; i < t.size() && t[i] != '"'; ++i) {
      if (t[i] == '\\') ++i;
    }
    i = std::min(i + 1, t.size());
    return true;
  }
  return false;
}

// A directive that ends at the end of its line, without a ';'.
bool line_directive(std::string_view t) noexcept {
  for (const std::string_view d : {".version", ".target", ".address_size", ".file"}) {
    if (t.starts_with(d) && (t.size() == d.size() || !ident_char(t[d.size()]))) return true;
  }
  return false;
}

// Splits PTX into its top-level statements: each ends at a ';' outside braces, or at the '}'
// that closes a body (not an initializer `= {...}`); .version, .target, .address_size and
// .file end with their line. False with why for a truncated statement.
bool split_statements(std::string_view t, std::vector<std::string_view>& out, std::string& why) {
  std::size_t i = 0;
  while (i < t.size()) {
    if (space(t[i]) || t[i] == ';') {
      ++i;
      continue;
    }
    if (skip_comment_or_string(t, i)) continue;
    const std::size_t start = i;
    if (line_directive(t.substr(i))) {
      while (i < t.size() && t[i] != '\n' &&
             !(t[i] == '/' && i + 1 < t.size() && (t[i + 1] == '/' || t[i + 1] == '*'))) {
        ++i;
      }
      out.push_back(t.substr(start, i - start));
      continue;
    }
    int depth = 0;
    bool initializer = false;
    bool done = false;
    while (i < t.size() && !done) {
      if (skip_comment_or_string(t, i)) continue;
      const char c = t[i++];
      if (c == '{') {
        ++depth;
      } else if (c == '}') {
        if (--depth < 0) {
          why = "unbalanced '}'";
          return false;
        }
        done = depth == 0 && !initializer;
      } else if (depth == 0 && c == '=') {
        initializer = true;
      } else if (depth == 0 && c == ';') {
        done = true;
      }
    }
    if (!done) {
      why = "the text ends inside a statement";
      return false;
    }
    out.push_back(t.substr(start, i - start));
  }
  return true;
}

// The leading words of a statement (up to its body, initializer or end): directives (".x"),
// identifiers, numbers and single punctuation characters, with where each starts.
struct Word {
  std::string_view text;
  std::size_t at = 0;
};

std::vector<Word> leading_words(std::string_view t) {
  std::vector<Word> words;
  std::size_t i = 0;
  while (i < t.size()) {
    if (space(t[i])) {
      ++i;
      continue;
    }
    if (t[i] != '"' && skip_comment_or_string(t, i)) continue;
    const std::size_t start = i;
    const char c = t[i];
    if (c == '{' || c == '=' || c == ';') break;
    if ((c == '.' && i + 1 < t.size() && ident_char(t[i + 1])) || ident_start(c) ||
        (c >= '0' && c <= '9')) {
      ++i;
      while (i < t.size() && (ident_char(t[i]) || t[i] == '.')) ++i;
    } else if (c == '"') {
      skip_comment_or_string(t, i);
    } else {
      ++i;
    }
    words.push_back({t.substr(start, i - start), start});
  }
  return words;
}

enum class What { header, entry, func, variable, other };
enum class Linkage { internal, visible, weak, external, common };

struct Statement {
  std::string_view text;
  What what = What::other;
  Linkage linkage = Linkage::internal;
  std::string name;
  std::string directive;  // header: .version/.target/.address_size; variable: its space
  std::string argument;   // header: the rest of the statement
  bool body = false;      // entry/func: has a body
  std::size_t extern_at = std::string_view::npos;  // where `.extern` is, to rewrite it

  [[nodiscard]] bool defines() const noexcept {
    if (what == What::entry || what == What::func) return body && linkage != Linkage::external;
    return what == What::variable && linkage != Linkage::external && directive != ".shared";
  }
};

bool is_ident(std::string_view w) noexcept { return !w.empty() && ident_start(w[0]); }

Statement classify(std::string_view text) {
  Statement s;
  s.text = text;
  const std::vector<Word> w = leading_words(text);
  std::size_t i = 0;
  for (; i < w.size(); ++i) {
    const std::string_view d = w[i].text;
    if (d == ".visible") {
      s.linkage = Linkage::visible;
    } else if (d == ".weak") {
      s.linkage = Linkage::weak;
    } else if (d == ".common") {
      s.linkage = Linkage::common;
    } else if (d == ".extern") {
      s.linkage = Linkage::external;
      s.extern_at = w[i].at;
    } else {
      break;
    }
  }
  if (i >= w.size()) return s;
  const std::string_view d = w[i].text;
  if (d == ".version" || d == ".target" || d == ".address_size") {
    s.what = What::header;
    s.directive = std::string(d);
    std::string_view rest = text.substr(w[i].at + d.size());
    while (!rest.empty() && (space(rest.back()) || rest.back() == ';')) rest.remove_suffix(1);
    while (!rest.empty() && space(rest.front())) rest.remove_prefix(1);
    s.argument = std::string(rest);
    return s;
  }
  std::size_t j = i + 1;
  if (d == ".entry" || d == ".func") {
    s.what = d == ".entry" ? What::entry : What::func;
    if (s.what == What::func && j < w.size() && w[j].text == "(") {  // return parameters
      int parens = 0;
      for (; j < w.size(); ++j) {
        if (w[j].text == "(") ++parens;
        if (w[j].text == ")" && --parens == 0) {
          ++j;
          break;
        }
      }
    }
    if (j < w.size() && is_ident(w[j].text)) s.name = std::string(w[j].text);
    s.body = !text.empty() && text.back() == '}';  // a statement that ends with its body
    return s;
  }
  if (d == ".global" || d == ".const" || d == ".shared" || d == ".local" || d == ".tex" ||
      d == ".surfref" || d == ".texref" || d == ".samplerref") {
    s.what = What::variable;
    s.directive = std::string(d);
    for (; j < w.size(); ++j) {
      if (is_ident(w[j].text)) {
        s.name = std::string(w[j].text);
        break;
      }
    }
  }
  return s;
}

// Debug file numbers (.file N, .loc N, inlined_at N) of input K are offset by K * this, so the
// inputs' files stay apart.
constexpr int kFileOffset = 1000;

// The statement's text with identifiers renamed, file numbers offset by `file_offset`, and its
// `.extern` replaced when asked.
std::string render(std::string_view t,
                   const std::map<std::string, std::string, std::less<>>& renames,
                   std::size_t extern_at, std::string_view extern_replacement, int file_offset) {
  if (renames.empty() && extern_replacement.empty() && file_offset == 0) return std::string(t);
  std::string out;
  out.reserve(t.size() + 16);
  bool file_number_next = false;  // after .file, .loc or inlined_at
  std::size_t i = 0;
  while (i < t.size()) {
    const std::size_t start = i;
    if (skip_comment_or_string(t, i)) {
      out.append(t.substr(start, i - start));
      continue;
    }
    const char c = t[i];
    if (c == '.' && i + 1 < t.size() && ident_char(t[i + 1])) {
      ++i;
      while (i < t.size() && ident_char(t[i])) ++i;
      const std::string_view word = t.substr(start, i - start);
      out.append(start == extern_at && !extern_replacement.empty() ? extern_replacement : word);
      file_number_next = word == ".file" || word == ".loc";
    } else if (c >= '0' && c <= '9') {
      while (i < t.size() && (ident_char(t[i]) || t[i] == '.')) ++i;
      const std::string_view number = t.substr(start, i - start);
      if (file_number_next && file_offset != 0 &&
          std::all_of(number.begin(), number.end(), [](char d) { return d >= '0' && d <= '9'; })) {
        out += std::to_string(std::atol(std::string(number).c_str()) + file_offset);
      } else {
        out.append(number);
      }
      file_number_next = false;
    } else if (ident_start(c)) {
      while (i < t.size() && ident_char(t[i])) ++i;
      const std::string_view word = t.substr(start, i - start);
      const auto it = renames.find(word);
      out.append(it == renames.end() ? word : std::string_view(it->second));
      file_number_next = word == "inlined_at";
    } else {
      if (!space(c)) file_number_next = false;
      out += c;
      ++i;
    }
  }
  return out;
}

struct Parsed {
  std::vector<Statement> statements;
  int version = 0;  // 10 * major + minor
  std::string version_text;
  int arch = 0;
  std::string target_text;
};

int parse_version(std::string_view v) noexcept {
  const std::size_t dot = v.find('.');
  if (dot == std::string_view::npos) return 0;
  return std::atoi(std::string(v.substr(0, dot)).c_str()) * 10 +
         std::atoi(std::string(v.substr(dot + 1)).c_str());
}

int parse_arch(std::string_view target) noexcept {
  const std::size_t sm = target.find("sm_");
  return sm == std::string_view::npos ? 0 : std::atoi(std::string(target.substr(sm + 3)).c_str());
}

}  // namespace

Merged merge(const std::vector<PtxInput>& inputs) {
  Merged m;
  std::vector<Parsed> parsed(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    std::vector<std::string_view> texts;
    std::string why;
    if (!split_statements(inputs[k].text, texts, why)) {
      m.result = CUDA_ERROR_INVALID_PTX;
      m.errors.push_back(inputs[k].name + ": " + why);
      continue;
    }
    Parsed& p = parsed[k];
    for (std::string_view t : texts) {
      Statement s = classify(t);
      if (s.what == What::header) {
        if (s.directive == ".version") {
          p.version = parse_version(s.argument);
          p.version_text = s.argument;
        } else if (s.directive == ".target") {
          p.arch = parse_arch(s.argument);
          p.target_text = s.argument;
        }
        continue;
      }
      p.statements.push_back(std::move(s));
    }
  }
  if (m.result != CUDA_SUCCESS) return m;

  // Where each name appears: (input, statement).
  using Ref = std::pair<std::size_t, std::size_t>;
  std::map<std::string, std::vector<Ref>, std::less<>> uses;
  for (std::size_t k = 0; k < parsed.size(); ++k) {
    for (std::size_t i = 0; i < parsed[k].statements.size(); ++i) {
      const Statement& s = parsed[k].statements[i];
      if (!s.name.empty()) uses[s.name].emplace_back(k, i);
    }
  }
  // Internal symbols another input also names are renamed in their input.
  std::vector<std::map<std::string, std::string, std::less<>>> renames(parsed.size());
  for (std::size_t k = 0; k < parsed.size(); ++k) {
    for (const Statement& s : parsed[k].statements) {
      if (s.name.empty() || s.linkage != Linkage::internal || s.what == What::other) continue;
      const auto& refs = uses[s.name];
      const bool shared =
          std::any_of(refs.begin(), refs.end(), [k](const Ref& r) { return r.first != k; });
      if (shared) renames[k][s.name] = s.name + "$swlink" + std::to_string(k);
    }
  }

  // Resolution of the external names: what is dropped, what replaces a declaration.
  std::set<Ref> dropped;
  std::map<Ref, std::string> extern_rewrite;  // declaration -> linkage word
  std::map<Ref, Ref> hoisted;                 // declaration -> definition emitted in its place
  const auto statement_at = [&](const Ref& r) -> const Statement& {
    return parsed[r.first].statements[r.second];
  };
  for (const auto& [name, refs] : uses) {
    std::vector<Ref> strong;
    std::vector<Ref> soft;
    std::vector<Ref> declarations;
    std::vector<Ref> shared_externs;
    for (const Ref& r : refs) {
      const Statement& s = statement_at(r);
      if (s.linkage == Linkage::internal) continue;  // local to its input (renamed if needed)
      if (s.defines()) {
        (s.linkage == Linkage::visible ? strong : soft).push_back(r);
      } else if (s.linkage == Linkage::external && s.what == What::variable &&
                 s.directive == ".shared") {
        shared_externs.push_back(r);
      } else if (s.linkage == Linkage::external &&
                 (s.what == What::func || s.what == What::variable || s.what == What::entry)) {
        declarations.push_back(r);
      }
    }
    for (std::size_t n = 1; n < shared_externs.size(); ++n) dropped.insert(shared_externs[n]);
    if (strong.size() > 1) {
      m.result = CUDA_ERROR_INVALID_IMAGE;
      m.errors.push_back("duplicate definition of '" + name + "' in '" +
                         inputs[strong[0].first].name + "' and '" + inputs[strong[1].first].name +
                         "'");
      continue;
    }
    std::optional<Ref> chosen;
    if (!strong.empty()) {
      chosen = strong[0];
    } else if (!soft.empty()) {
      chosen = soft[0];
    }
    for (const Ref& r : strong) {
      if (r != *chosen) dropped.insert(r);
    }
    for (const Ref& r : soft) {
      if (r != *chosen) dropped.insert(r);
    }
    if (!chosen) {
      if (declarations.empty()) continue;
      const bool builtin =
          statement_at(declarations[0]).what == What::func &&
          std::find(std::begin(kBuiltins), std::end(kBuiltins), name) != std::end(kBuiltins);
      if (builtin) {
        for (std::size_t n = 1; n < declarations.size(); ++n) dropped.insert(declarations[n]);
        continue;
      }
      m.result = CUDA_ERROR_INVALID_IMAGE;
      for (const Ref& r : declarations) {
        m.errors.push_back("undefined reference to '" + name + "' in '" + inputs[r.first].name +
                           "'");
      }
      continue;
    }
    const Statement& def = statement_at(*chosen);
    bool declared = false;  // a prototype or the hoisted definition is already in place
    for (const Ref& r : declarations) {
      ++m.resolved;
      if (r > *chosen || declared) {
        dropped.insert(r);
      } else if (def.what == What::variable) {
        hoisted[r] = *chosen;
        dropped.insert(*chosen);
        declared = true;
      } else {
        extern_rewrite[r] = def.linkage == Linkage::visible ? ".visible" : ".weak";
        declared = true;
      }
    }
  }
  if (m.result != CUDA_SUCCESS) return m;

  // The header, then the statements.
  int version = 0;
  std::string version_text = "9.0";
  int arch = 0;
  std::string target_text = "sm_" + std::to_string(kDeviceArch);
  for (const Parsed& p : parsed) {
    if (p.version > version) {
      version = p.version;
      version_text = p.version_text;
    }
    if (p.arch > arch) {
      arch = p.arch;
      target_text = p.target_text;
    }
  }
  std::string& out = m.text;
  out = "//\n// Linked by the cuwrap software driver (cuLinkComplete) from " +
        std::to_string(inputs.size()) + " input(s)\n//\n\n.version " + version_text + "\n.target " +
        target_text + "\n.address_size 64\n";
  for (std::size_t k = 0; k < parsed.size(); ++k) {
    out += "\n// ---- input: " + inputs[k].name + "\n\n";
    for (std::size_t i = 0; i < parsed[k].statements.size(); ++i) {
      const Ref r{k, i};
      if (const auto h = hoisted.find(r); h != hoisted.end()) {
        const Statement& def = statement_at(h->second);
        out += render(def.text, renames[h->second.first], std::string_view::npos, {},
                      static_cast<int>(h->second.first) * kFileOffset);
        out += "\n\n";
        continue;
      }
      if (dropped.count(r) != 0) continue;
      const Statement& s = parsed[k].statements[i];
      const auto rewrite = extern_rewrite.find(r);
      out += render(s.text, renames[k], s.extern_at,
                    rewrite == extern_rewrite.end() ? std::string_view() : rewrite->second,
                    static_cast<int>(k) * kFileOffset);
      out += "\n\n";
    }
  }
  return m;
}
}  // namespace swcu
