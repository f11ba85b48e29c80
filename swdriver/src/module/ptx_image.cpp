// PTX text: the module-level statements that matter to a driver that never compiles anything.
//
//   .version M.m / .target sm_NN / .address_size 64
//   [.visible|.weak|.extern] .entry NAME ( .param ..., ... ) [header directives] { body }
//   [.visible|.weak|.extern] .func [(ret)] NAME (...) { body }      -- a device function: skipped
//   [.visible|.extern|.weak|.common] .global/.const/.shared [.align A] [.vN] .TYPE NAME[[N]...]
//
// A parameter is `.param [.align A] .TYPE [.ptr [.SPACE] [.align N]] NAME[[N]]`: its size is the
// element size times the array length, its alignment A or the element size (the `.align` after
// `.ptr` is the pointee's), and it starts at the first multiple of its alignment after the
// previous one. Inside a body only .shared and .local declarations are read (static shared and
// local memory); the `.param` declarations there are call sequences, not kernel parameters.
#include <algorithm>
#include <charconv>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "module/image.hpp"
#include "ptx/program.hpp"

namespace swcu {
namespace {

struct Token {
  enum class Kind { identifier, directive, number, punct, string, end };
  Kind kind = Kind::end;
  std::string_view text;
  int line = 0;
};

bool ident_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%';
}
bool ident_char(char c) noexcept { return ident_start(c) || (c >= '0' && c <= '9'); }
bool digit(char c) noexcept { return c >= '0' && c <= '9'; }

// Splits PTX into tokens, dropping // and /* */ comments (not inside strings). False with a
// message for an unterminated comment or string.
bool tokenize(std::string_view text, std::vector<Token>& out, std::string& error) {
  int line = 1;
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      const int start = line;
      i += 2;
      while (i + 1 < n && !(text[i] == '*' && text[i + 1] == '/')) {
        if (text[i] == '\n') ++line;
        ++i;
      }
      if (i + 1 >= n) {
        error = "line " + std::to_string(start) + ": unterminated /* comment";
        return false;
      }
      i += 2;
    } else if (c == '"') {
      const std::size_t start = i++;
      while (i < n && text[i] != '"' && text[i] != '\n') i += text[i] == '\\' ? 2 : 1;
      if (i >= n || text[i] != '"') {
        error = "line " + std::to_string(line) + ": unterminated string";
        return false;
      }
      ++i;
      out.push_back({Token::Kind::string, text.substr(start, i - start), line});
    } else if (c == '.' && i + 1 < n && ident_char(text[i + 1])) {
      const std::size_t start = i++;
      while (i < n && ident_char(text[i])) ++i;
      out.push_back({Token::Kind::directive, text.substr(start, i - start), line});
    } else if (ident_start(c)) {
      const std::size_t start = i++;
      while (i < n && ident_char(text[i])) ++i;
      out.push_back({Token::Kind::identifier, text.substr(start, i - start), line});
    } else if (digit(c)) {
      const std::size_t start = i++;
      while (i < n && (ident_char(text[i]) || text[i] == '.')) ++i;
      out.push_back({Token::Kind::number, text.substr(start, i - start), line});
    } else {
      out.push_back({Token::Kind::punct, text.substr(i, 1), line});
      ++i;
    }
  }
  out.push_back({Token::Kind::end, {}, line});
  return true;
}

// The size in bytes of a PTX fundamental type (".u32"), or 0 for anything else.
std::size_t type_size(std::string_view t) noexcept {
  static const std::unordered_map<std::string_view, std::size_t> sizes = {
      {".b8", 1},     {".u8", 1},         {".s8", 1},      {".b16", 2},    {".u16", 2},
      {".s16", 2},    {".f16", 2},        {".bf16", 2},    {".b32", 4},    {".u32", 4},
      {".s32", 4},    {".f32", 4},        {".f16x2", 4},   {".bf16x2", 4}, {".tf32", 4},
      {".b64", 8},    {".u64", 8},        {".s64", 8},     {".f64", 8},    {".b128", 16},
      {".pred", 1},   {".e4m3", 1},       {".e5m2", 1},    {".e4m3x2", 2}, {".e5m2x2", 2},
      {".texref", 8}, {".samplerref", 8}, {".surfref", 8},
  };
  const auto it = sizes.find(t);
  return it == sizes.end() ? 0 : it->second;
}

bool is_space(std::string_view t) noexcept {
  return t == ".global" || t == ".const" || t == ".shared" || t == ".local" || t == ".param";
}

std::size_t align_up(std::size_t value, std::size_t align) noexcept {
  return align <= 1 ? value : (value + align - 1) / align * align;
}

std::optional<unsigned long long> parse_number(std::string_view text) noexcept {
  unsigned long long value = 0;
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (!text.empty() && (text.back() == 'U' || text.back() == 'u')) text.remove_suffix(1);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A declared variable: `[.align A] [.vN] .TYPE NAME[dims]...` after the state space.
struct Declarator {
  std::string_view name;
  std::size_t size = 0;
  std::size_t align = 1;
  bool unsized = false;             ///< an array with an empty dimension (`scratch[]`)
  std::vector<unsigned char> init;  ///< initial bytes; empty: zeros
};

class Parser {
 public:
  Parser(std::vector<Token> tokens, const LoadOptions& options, Image& out)
      : t_(std::move(tokens)), options_(options), out_(out) {}

  LoadLog run() {
    LoadLog log;
    try {
      header();
      while (peek().kind != Token::Kind::end) statement();
      finish();
    } catch (const Failure& f) {
      log.error = f.error;
      log.error_log = f.message;
    }
    return log;
  }

 private:
  struct Failure {
    ImageError error;
    std::string message;
  };

  [[noreturn]] void fail(const Token& at, const std::string& what) const {
    throw Failure{ImageError::invalid_ptx, "line " + std::to_string(at.line) + ": " + what};
  }
  [[noreturn]] void fail_here(const std::string& what) const { fail(peek(), what); }

  const Token& peek(std::size_t ahead = 0) const noexcept {
    return t_[std::min(i_ + ahead, t_.size() - 1)];
  }
  const Token& next() noexcept {
    const Token& t = peek();
    if (i_ + 1 < t_.size()) ++i_;
    return t;
  }
  bool is(std::string_view text) const noexcept { return peek().text == text; }
  bool accept(std::string_view text) noexcept {
    if (!is(text)) return false;
    next();
    return true;
  }
  void expect(std::string_view text) {
    if (!accept(text)) fail_here("expected '" + std::string(text) + "', got " + describe(peek()));
  }
  static std::string describe(const Token& t) {
    return t.kind == Token::Kind::end ? std::string("the end of the text")
                                      : "'" + std::string(t.text) + "'";
  }
  unsigned long long number(const char* what) {
    const Token& t = next();
    const auto value = t.kind == Token::Kind::number ? parse_number(t.text) : std::nullopt;
    if (!value) fail(t, std::string("expected ") + what + ", got " + describe(t));
    return *value;
  }

  // .version must come first; .target and .address_size follow it.
  void header() {
    if (!is(".version")) {
      throw Failure{ImageError::not_an_image,
                    "not a PTX, cubin or fatbin image: PTX must start with a .version directive"};
    }
    next();
    const Token& v = next();
    const auto dot = v.text.find('.');
    const auto major = v.kind == Token::Kind::number && dot != std::string_view::npos
                           ? parse_number(v.text.substr(0, dot))
                           : std::nullopt;
    const auto minor = major ? parse_number(v.text.substr(dot + 1)) : std::nullopt;
    if (!minor || *minor > 9 || *major > 99)
      fail(v, "expected a PTX ISA version M.m after .version");
    out_.ptx_isa = static_cast<int>(*major * 10 + *minor);
    if (out_.ptx_isa > options_.max_ptx_isa) {
      throw Failure{ImageError::unsupported_ptx_version,
                    "PTX ISA " + std::string(v.text) + " is newer than this driver supports (" +
                        std::to_string(options_.max_ptx_isa / 10) + "." +
                        std::to_string(options_.max_ptx_isa % 10) + ")"};
    }
  }

  void statement() {
    const Token& t = peek();
    if (t.kind != Token::Kind::directive) {
      fail(t, "expected a directive, got " + describe(t));
    }
    bool external = false;
    bool linkage = false;
    while (is(".visible") || is(".weak") || is(".extern") || is(".common")) {
      external = external || is(".extern");
      linkage = true;
      next();
    }
    const Token& d = peek();
    if (d.text == ".target") {
      target();
    } else if (d.text == ".address_size") {
      next();
      const auto bits = number("an address size");
      if (bits != 32 && bits != 64) fail(d, ".address_size must be 32 or 64");
    } else if (d.text == ".entry") {
      next();
      entry();
    } else if (d.text == ".func") {
      next();
      skip_function();
    } else if (d.text == ".global" || d.text == ".const" || d.text == ".shared") {
      next();
      module_variable(d.text, external);
    } else if (d.text == ".version") {
      fail(d, ".version may appear only once, first");
    } else if (linkage && d.kind != Token::Kind::directive) {
      fail(d, "expected .entry, .func or a variable after a linkage directive");
    } else {
      skip_statement();  // .file, .section, .alias, .pragma, ...
    }
  }

  void target() {
    const Token& at = next();
    bool any = false;
    do {
      const Token& t = next();
      if (t.kind != Token::Kind::identifier) fail(t, "expected a target after .target");
      if (t.text.starts_with("sm_")) {
        int arch = 0;
        std::string_view digits = t.text.substr(3);
        while (!digits.empty() && !digit(digits.back())) digits.remove_suffix(1);  // sm_90a
        if (std::from_chars(digits.data(), digits.data() + digits.size(), arch).ec != std::errc{}) {
          fail(t, "unknown target " + std::string(t.text));
        }
        if (arch > kDeviceArch) {
          fail(t, "target " + std::string(t.text) + " is newer than the device (sm_" +
                      std::to_string(kDeviceArch) + ")");
        }
        out_.virtual_arch = arch;
        any = true;
      }
    } while (accept(","));
    if (!any) fail(at, ".target names no sm_ architecture");
    have_target_ = true;
  }

  // Skips to the end of a statement: its ';' or its balanced { } group.
  void skip_statement() {
    int depth = 0;
    for (;;) {
      const Token& t = next();
      if (t.kind == Token::Kind::end) {
        if (depth != 0) fail(t, "unbalanced brackets");
        return;
      }
      if (t.text == "(" || t.text == "[") ++depth;
      if (t.text == ")" || t.text == "]") --depth;
      if (t.text == ";" && depth == 0) return;
      if (t.text == "{") {
        skip_group();
        if (depth == 0) return;
      }
    }
  }

  // After a '{': skips to its matching '}'.
  void skip_group() {
    int depth = 1;
    while (depth > 0) {
      const Token& t = next();
      if (t.kind == Token::Kind::end) fail(t, "a '{' is never closed");
      if (t.text == "{") ++depth;
      if (t.text == "}") --depth;
    }
  }

  // Skips a balanced ( ) group starting at the current '('.
  void skip_parens() {
    expect("(");
    int depth = 1;
    while (depth > 0) {
      const Token& t = next();
      if (t.kind == Token::Kind::end) fail(t, "a '(' is never closed");
      if (t.text == "(") ++depth;
      if (t.text == ")") --depth;
    }
  }

  // .func [(return params)] NAME [(params)] [directives] { body } | ;
  void skip_function() {
    if (is("(")) skip_parens();
    if (peek().kind != Token::Kind::identifier) fail_here("expected a function name after .func");
    next();
    if (is("(")) skip_parens();
    while (!is("{") && !is(";")) {
      if (peek().kind == Token::Kind::end) fail_here("a .func has no body");
      next();
    }
    if (accept("{")) {
      skip_group();
    } else {
      next();
    }
  }

  // `[.attribute(...)] [.align A] [.vN] [.ptr ...] .TYPE NAME[dims] [= init]` and
  // comma-separated further names, through the ';'. `.ptr` (parameters only) is rejected here.
  std::vector<Declarator> declarators(bool& managed) {
    std::size_t align = 0;
    std::size_t elem = 0;
    std::size_t vec = 1;
    for (;;) {
      const Token& t = peek();
      if (t.kind != Token::Kind::directive) break;
      next();
      if (t.text == ".align") {
        align = number("an alignment");
      } else if (t.text == ".attribute") {
        const std::size_t start = i_;
        skip_parens();
        for (std::size_t k = start; k < i_; ++k) managed = managed || t_[k].text == ".managed";
      } else if (t.text == ".v2" || t.text == ".v4" || t.text == ".v8") {
        vec = static_cast<std::size_t>(t.text[2] - '0');
      } else if (const std::size_t s = type_size(t.text); s != 0) {
        elem = s;
      } else {
        fail(t, "unexpected " + describe(t) + " in a variable declaration");
      }
    }
    if (elem == 0) fail_here("a variable declaration has no type");
    elem *= vec;
    std::vector<Declarator> out;
    for (;;) {
      const Token& name = next();
      if (name.kind != Token::Kind::identifier) fail(name, "expected a variable name");
      Declarator d{name.text, elem, align != 0 ? align : elem, false, {}};
      while (accept("[")) {
        if (accept("]")) {
          d.unsized = true;
          continue;
        }
        d.size *= number("an array length");
        expect("]");
      }
      if (accept("=")) initializer(d, elem);
      // `.reg .b32 %r<6>` style ranges (registers only, but harmless here)
      if (accept("<")) {
        d.size *= number("a count");
        expect(">");
      }
      out.push_back(d);
      if (accept(";")) return out;
      expect(",");
    }
  }

  // `= value` or `= { ... }`: numeric elements become the initial bytes (little-endian, each
  // of the element size); anything else (addresses of other variables) leaves them zero. An
  // unsized array takes its length from the elements.
  void initializer(Declarator& d, std::size_t elem) {
    std::vector<unsigned long long> values;
    bool numeric = true;
    const auto element = [&](bool negative, const Token& t) {
      const auto v = t.kind == Token::Kind::number ? literal(t.text) : std::nullopt;
      if (!v) {
        numeric = false;
        return;
      }
      values.push_back(negative ? 0 - *v : *v);
    };
    if (!is("{")) {
      const bool negative = accept("-");
      element(negative, next());
      while (!is(",") && !is(";")) {
        if (peek().kind == Token::Kind::end) fail_here("an initializer is not terminated");
        numeric = false;
        next();
      }
    } else {
      next();
      int depth = 1;
      bool negative = false;
      while (depth > 0) {
        const Token& t = next();
        if (t.kind == Token::Kind::end) fail(t, "an initializer's '{' is never closed");
        if (t.text == "{") {
          ++depth;
        } else if (t.text == "}") {
          --depth;
        } else if (t.text == "-") {
          negative = true;
        } else if (t.text != ",") {
          element(negative, t);
          negative = false;
        }
      }
    }
    if (d.unsized) {
      d.size = values.size() * elem;
      d.unsized = false;
    }
    if (!numeric || values.size() * elem > d.size) return;
    // Only the bytes the initializer gives: the rest of the variable is zero anyway (a huge
    // array with a short initializer must not allocate its size here).
    d.init.assign(values.size() * elem, 0);
    for (std::size_t i = 0; i < values.size(); ++i) {
      for (std::size_t b = 0; b < elem && b < sizeof(unsigned long long); ++b) {
        d.init[i * elem + b] = static_cast<unsigned char>(values[i] >> (8 * b));
      }
    }
    if (std::all_of(d.init.begin(), d.init.end(), [](unsigned char c) { return c == 0; })) {
      d.init.clear();
    }
  }

  // An integer literal, or a float given by its bits (0fXXXXXXXX, 0dXXXXXXXXXXXXXXXX).
  static std::optional<unsigned long long> literal(std::string_view text) {
    if (text.size() > 2 && text[0] == '0' &&
        (text[1] == 'f' || text[1] == 'F' || text[1] == 'd' || text[1] == 'D')) {
      unsigned long long bits = 0;
      const std::string_view hex = text.substr(2);
      const auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16);
      if (ec != std::errc{} || end != hex.data() + hex.size()) return std::nullopt;
      return bits;
    }
    return parse_number(text);
  }

  void module_variable(std::string_view space, bool external) {
    bool managed = false;
    const std::vector<Declarator> decls = declarators(managed);
    if (external) return;  // declared here, defined elsewhere (`.extern .shared` is dynamic)
    for (const Declarator& d : decls) {
      if (space == ".shared") {
        if (!d.unsized) module_shared_.push_back(d);
        continue;
      }
      if (!global_names_.emplace(d.name).second)
        fail_here("variable " + std::string(d.name) + " is defined twice");
      GlobalDesc g;
      g.name = std::string(d.name);
      g.size = d.size;
      g.align = d.align;
      g.constant = space == ".const";
      g.managed = managed;
      g.init = d.init;
      if (g.constant) out_.const_bytes = align_up(out_.const_bytes, g.align) + g.size;
      out_.globals.push_back(std::move(g));
    }
  }

  // One `.param ...` of an entry's parameter list.
  ParamLayout param(std::size_t& end) {
    const Token& at = peek();
    expect(".param");
    std::size_t align = 0;
    std::size_t elem = 0;
    std::size_t vec = 1;
    bool ptr = false;
    for (;;) {
      const Token& t = peek();
      if (t.kind != Token::Kind::directive) break;
      next();
      if (t.text == ".align") {
        const auto a = number("an alignment");
        if (a == 0 || (a & (a - 1)) != 0) fail(t, "an alignment must be a power of two");
        if (!ptr) align = a;  // after .ptr it is the pointee's alignment
      } else if (t.text == ".ptr") {
        if (elem == 0) fail(t, ".ptr must follow the parameter's type");
        ptr = true;
      } else if (ptr && is_space(t.text)) {
        // the pointee's state space
      } else if (t.text == ".attribute") {
        skip_parens();
      } else if (t.text == ".v2" || t.text == ".v4") {
        vec = static_cast<std::size_t>(t.text[2] - '0');
      } else if (const std::size_t s = type_size(t.text); s != 0 && elem == 0) {
        elem = s;
      } else {
        fail(t, "unexpected " + describe(t) + " in a .param declaration");
      }
    }
    if (elem == 0) fail(at, "a .param has no type");
    elem *= vec;
    const Token& name = next();
    if (name.kind != Token::Kind::identifier) fail(name, "expected a parameter name");
    std::size_t count = 1;
    while (accept("[")) {
      const auto n = number("an array length");
      if (n == 0) fail(name, "parameter " + std::string(name.text) + " has an empty array");
      count *= n;
      expect("]");
    }
    ParamLayout p;
    p.size = elem * count;
    p.offset = align_up(end, align != 0 ? align : elem);
    end = p.offset + p.size;
    return p;
  }

  // `.maxntid 256, 1, 1` and friends: up to three numbers.
  std::array<unsigned long long, 3> dims(const Token& at) {
    std::array<unsigned long long, 3> d{1, 1, 1};
    std::size_t k = 0;
    do {
      if (k == 3) fail(at, std::string(at.text) + " takes at most three values");
      d[k++] = number("a number");
    } while (accept(","));
    return d;
  }

  void entry() {
    const Token& name = next();
    if (name.kind != Token::Kind::identifier) fail(name, "expected a kernel name after .entry");
    KernelDesc k;
    k.name = std::string(name.text);
    std::size_t end = 0;
    if (accept("(")) {
      if (!accept(")")) {
        do {
          k.params.push_back(param(end));
        } while (accept(","));
        expect(")");
      }
    }
    k.params_size = end;
    // Performance-tuning directives between the parameter list and the body.
    while (peek().kind == Token::Kind::directive) {
      const Token& d = next();
      if (d.text == ".maxntid" || d.text == ".reqntid") {
        const auto v = dims(d);
        const unsigned long long threads = v[0] * v[1] * v[2];
        if (threads == 0 || threads > 1024)
          fail(d, std::string(d.text) + " must be 1 to 1024 threads");
        if (k.max_threads == 0 || threads < k.max_threads)
          k.max_threads = static_cast<unsigned>(threads);
      } else if (d.text == ".reqnctapercluster") {
        const auto v = dims(d);
        for (std::size_t i = 0; i < 3; ++i) k.cluster[i] = static_cast<unsigned>(v[i]);
      } else if (d.text == ".explicitcluster") {
        k.explicit_cluster = true;
      } else if (d.text == ".minnctapersm") {
        k.min_blocks_per_sm = static_cast<unsigned>(number("a block count"));
      } else if (d.text == ".maxnreg") {
        k.max_regs = static_cast<int>(number("a register count"));
      } else if (d.text == ".pragma") {
        while (!accept(";")) {
          if (peek().kind == Token::Kind::end) fail(d, ".pragma is not terminated");
          next();
        }
      } else {
        // .maxnctapersm, .maxclusterrank, .noreturn, ...: values only
        while (peek().kind == Token::Kind::number || is(",")) next();
      }
    }
    const bool defined = accept("{");
    if (defined) {
      body(k);
    } else if (!accept(";")) {
      fail_here("expected the body of kernel " + k.name + ", got " + describe(peek()));
    }
    // A prototype and the definition name one kernel; the definition describes it.
    if (defined && !defined_.insert(k.name).second)
      fail(name, "kernel " + k.name + " is defined twice");
    // By name through an index, so that a module with many kernels loads in linear time.
    const auto [at, added] = kernel_index_.emplace(k.name, out_.kernels.size());
    if (!added) {
      if (defined) out_.kernels[at->second] = std::move(k);
      return;
    }
    out_.kernels.push_back(std::move(k));
  }

  // An entry's body after its '{': static .shared and .local declarations, and the identifiers
  // it uses (for module-level .shared variables).
  void body(KernelDesc& k) {
    int depth = 1;
    std::set<std::string_view> used;
    bool statement_start = true;
    while (depth > 0) {
      const Token& t = peek();
      if (t.kind == Token::Kind::end) fail(t, "the body of kernel " + k.name + " is never closed");
      if (statement_start && (t.text == ".shared" || t.text == ".local")) {
        const bool shared = t.text == ".shared";
        next();
        bool managed = false;
        for (const Declarator& d : declarators(managed)) {
          if (d.unsized) continue;
          if (shared) {
            k.static_shared = align_up(k.static_shared, d.align) + d.size;
          } else {
            k.local_bytes = align_up(k.local_bytes, d.align) + d.size;
          }
        }
        statement_start = true;
        continue;
      }
      next();
      if (t.kind == Token::Kind::identifier) used.insert(t.text);
      if (t.text == "{") ++depth;
      if (t.text == "}") --depth;
      statement_start = t.text == ";" || t.text == "{" || t.text == "}" || t.text == ":";
    }
    for (const Declarator& d : module_shared_) {
      if (used.contains(d.name)) k.static_shared = align_up(k.static_shared, d.align) + d.size;
    }
  }

  void finish() {
    if (!have_target_) {
      throw Failure{ImageError::invalid_ptx, "the PTX has no .target directive"};
    }
  }

  std::vector<Token> t_;
  std::size_t i_ = 0;
  const LoadOptions& options_;
  Image& out_;
  bool have_target_ = false;
  std::vector<Declarator> module_shared_;
  std::unordered_set<std::string> defined_;
  std::unordered_map<std::string, std::size_t> kernel_index_;  // name -> index in out_.kernels
  std::unordered_set<std::string> global_names_;
};

}  // namespace

LoadLog parse_ptx(std::string_view text, const LoadOptions& options, Image& out) {
  out = Image{};
  out.code = ImageCode::ptx;
  std::vector<Token> tokens;
  LoadLog log;
  if (!tokenize(text, tokens, log.error_log)) {
    // Unterminated comments and strings only count as bad PTX in something that starts as PTX.
    const bool looks_like_ptx = text.find(".version") != std::string_view::npos;
    log.error = looks_like_ptx ? ImageError::invalid_ptx : ImageError::not_an_image;
    return log;
  }
  log = Parser(std::move(tokens), options, out).run();
  if (log.error != ImageError::none) return log;
  // The bodies, decoded for the interpreter; what it refuses, NVIDIA's PTX JIT refuses too.
  std::string why;
  out.program = ptx::parse_program(text, why);
  if (out.program == nullptr) {
    log.error = ImageError::invalid_ptx;
    log.error_log = "ptxas application ptx input, " + why;
    return log;
  }
  // Initializers by name, looked up by hash: loading stays linear in the number of globals.
  std::unordered_map<std::string_view, GlobalDesc*> by_name;
  by_name.reserve(out.globals.size());
  for (GlobalDesc& d : out.globals) by_name.emplace(d.name, &d);
  for (const ptx::Global& g : out.program->globals) {
    if (g.init.empty()) continue;
    if (const auto it = by_name.find(g.name); it != by_name.end()) it->second->init = g.init;
  }
  out.arch = kDeviceArch;  // "compiled" for the device
  log.info_log = "swcuda: PTX ISA " + std::to_string(out.ptx_isa / 10) + "." +
                 std::to_string(out.ptx_isa % 10) + " for sm_" + std::to_string(out.virtual_arch) +
                 " loaded for sm_" + std::to_string(kDeviceArch) + ": " +
                 std::to_string(out.kernels.size()) + " kernel(s), " +
                 std::to_string(out.globals.size()) + " global(s)";
  return log;
}

const KernelDesc* Image::kernel(std::string_view name) const noexcept {
  for (const KernelDesc& k : kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

const GlobalDesc* Image::global(std::string_view name) const noexcept {
  for (const GlobalDesc& g : globals) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

}  // namespace swcu
