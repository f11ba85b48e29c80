// PTX text to the decoded program (program.hpp).
//
// Two passes over the tokens: the first declares every function and module variable (so calls
// and addresses may name what is defined later), the second decodes bodies. Errors are thrown as
// ParseError with the PTX line and turned into one message by parse_program().
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "ptx/alu.hpp"
#include "ptx/program.hpp"

namespace swcu::ptx {
namespace {

struct ParseError {
  int line;
  std::string what;
};

struct Tok {
  enum class K : std::uint8_t { ident, number, punct, string, end };
  K kind = K::end;
  std::string_view text;
  int line = 0;
};

bool ident_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%' ||
         c == '.';
}
bool ident_char(char c) noexcept { return ident_start(c) || (c >= '0' && c <= '9'); }

std::vector<Tok> tokenize(std::string_view s) {
  std::vector<Tok> out;
  int line = 1;
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\0') {
      ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      const int start = line;
      i += 2;
      while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) {
        if (s[i] == '\n') ++line;
        ++i;
      }
      if (i + 1 >= n) throw ParseError{start, "unterminated comment"};
      i += 2;
    } else if (c == '"') {
      const std::size_t b = i++;
      while (i < n && s[i] != '"' && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n) ++i;
        ++i;
      }
      if (i >= n || s[i] != '"') throw ParseError{line, "unterminated string"};
      ++i;
      out.push_back({Tok::K::string, s.substr(b, i - b), line});
    } else if (c >= '0' && c <= '9') {
      const std::size_t b = i;
      while (i < n && (ident_char(s[i]) && s[i] != '%' && s[i] != '$')) {
        // 1.5e-3 style exponents
        if ((s[i] == 'e' || s[i] == 'E') && i + 1 < n && (s[i + 1] == '-' || s[i + 1] == '+') &&
            !(s[b] == '0' && b + 1 < n &&
              (s[b + 1] == 'x' || s[b + 1] == 'X' || s[b + 1] == 'f' || s[b + 1] == 'F' ||
               s[b + 1] == 'd' || s[b + 1] == 'D')))
          ++i;
        ++i;
      }
      out.push_back({Tok::K::number, s.substr(b, i - b), line});
    } else if (ident_start(c)) {
      const std::size_t b = i;
      while (i < n) {
        if (ident_char(s[i])) {
          ++i;
        } else if (s[i] == ':' && i + 1 < n && s[i + 1] == ':') {
          i += 2;
        } else {
          break;
        }
      }
      out.push_back({Tok::K::ident, s.substr(b, i - b), line});
    } else {
      out.push_back({Tok::K::punct, s.substr(i, 1), line});
      ++i;
    }
  }
  out.push_back({Tok::K::end, {}, line});
  return out;
}

std::optional<Type> type_of(std::string_view t) {
  static const std::unordered_map<std::string_view, Type> kTypes = {
      {".pred", Type::pred},   {".b8", Type::b8},      {".b16", Type::b16},
      {".b32", Type::b32},     {".b64", Type::b64},    {".b128", Type::b128},
      {".u8", Type::u8},       {".u16", Type::u16},    {".u32", Type::u32},
      {".u64", Type::u64},     {".s8", Type::s8},      {".s16", Type::s16},
      {".s32", Type::s32},     {".s64", Type::s64},    {".f16", Type::f16},
      {".f16x2", Type::f16x2}, {".bf16", Type::bf16},  {".bf16x2", Type::bf16x2},
      {".tf32", Type::tf32},   {".f32", Type::f32},    {".f64", Type::f64},
      {".u16x2", Type::u16x2}, {".s16x2", Type::s16x2}};
  const auto it = kTypes.find(t);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

std::optional<Space> space_of(std::string_view t) {
  if (t == ".global") return Space::global;
  if (t == ".shared" || t == ".shared::cta") return Space::shared;
  if (t == ".local") return Space::local;
  if (t == ".const") return Space::constant;
  if (t == ".param" || t == ".param::entry" || t == ".param::func") return Space::param;
  return std::nullopt;
}

// Integer literal (decimal, 0x hex, 0 octal, 0b binary, optional U suffix).
std::optional<std::uint64_t> parse_int(std::string_view t) {
  if (!t.empty() && (t.back() == 'U' || t.back() == 'u')) t.remove_suffix(1);
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    t.remove_prefix(2);
  } else if (t.size() > 2 && t[0] == '0' && (t[1] == 'b' || t[1] == 'B')) {
    base = 2;
    t.remove_prefix(2);
  } else if (t.size() > 1 && t[0] == '0') {
    base = 8;
    t.remove_prefix(1);
  }
  std::uint64_t v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return std::nullopt;
  return v;
}

// The bits of `d` as a value of floating-point `type` (f32 rounds to nearest; else f64).
std::uint64_t float_bits(double d, Type type) {
  if (type == Type::f32) return std::bit_cast<std::uint32_t>(static_cast<float>(d));
  return std::bit_cast<std::uint64_t>(d);
}

// A numeric literal as it should appear in an operand of `type`: 0fXXXXXXXX (f32 bits) and
// 0dXXXXXXXXXXXXXXXX (f64 bits) converted to the operand's precision, decimal floats, and
// integers (their value, for f32/f64 operands).
std::optional<std::uint64_t> parse_literal(std::string_view t, bool negative, Type type) {
  const bool is_f32_bits = t.size() == 10 && t[0] == '0' && (t[1] == 'f' || t[1] == 'F');
  const bool is_f64_bits = t.size() == 18 && t[0] == '0' && (t[1] == 'd' || t[1] == 'D');
  if (is_f32_bits || is_f64_bits) {
    const auto v = parse_int("0x" + std::string(t.substr(2)));
    if (!v) return std::nullopt;
    double d = is_f32_bits
                   ? static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(*v)))
                   : std::bit_cast<double>(*v);
    if (negative) d = -d;
    const bool same_width = is_f32_bits ? type != Type::f64 : type != Type::f32;
    if (same_width) {  // the bits as written (NaN payloads kept), sign flipped for '-'
      const std::uint64_t sign = is_f32_bits ? 0x80000000ull : 0x8000000000000000ull;
      return negative ? (*v ^ sign) : *v;
    }
    return float_bits(d, type);
  }
  const bool looks_float = t.find_first_of(".eE") != std::string_view::npos &&
                           !(t.size() > 1 && (t[1] == 'x' || t[1] == 'X'));
  if (looks_float) {
    const double d = std::strtod(std::string(t).c_str(), nullptr);
    return float_bits(negative ? -d : d, type);
  }
  const auto v = parse_int(t);
  if (!v) return std::nullopt;
  if (type == Type::f32 || type == Type::f64) {
    const double d = static_cast<double>(*v);
    return float_bits(negative ? -d : d, type);
  }
  return negative ? ~*v + 1 : *v;
}

struct SRegName {
  std::string_view name;
  SReg reg;
};
constexpr SRegName kSRegs[] = {
    {"%tid.x", SReg::tid_x},
    {"%tid.y", SReg::tid_y},
    {"%tid.z", SReg::tid_z},
    {"%ntid.x", SReg::ntid_x},
    {"%ntid.y", SReg::ntid_y},
    {"%ntid.z", SReg::ntid_z},
    {"%ctaid.x", SReg::ctaid_x},
    {"%ctaid.y", SReg::ctaid_y},
    {"%ctaid.z", SReg::ctaid_z},
    {"%nctaid.x", SReg::nctaid_x},
    {"%nctaid.y", SReg::nctaid_y},
    {"%nctaid.z", SReg::nctaid_z},
    {"%laneid", SReg::laneid},
    {"%warpid", SReg::warpid},
    {"%nwarpid", SReg::nwarpid},
    {"%smid", SReg::smid},
    {"%nsmid", SReg::nsmid},
    {"%gridid", SReg::gridid},
    {"%lanemask_eq", SReg::lanemask_eq},
    {"%lanemask_le", SReg::lanemask_le},
    {"%lanemask_lt", SReg::lanemask_lt},
    {"%lanemask_ge", SReg::lanemask_ge},
    {"%lanemask_gt", SReg::lanemask_gt},
    {"%clock", SReg::clock},
    {"%clock_hi", SReg::clock_hi},
    {"%clock64", SReg::clock64},
    {"%globaltimer", SReg::globaltimer},
    {"%globaltimer_lo", SReg::globaltimer_lo},
    {"%globaltimer_hi", SReg::globaltimer_hi},
    {"%dynamic_smem_size", SReg::dynamic_smem_size},
    {"%total_smem_size", SReg::total_smem_size},
    {"%cluster_ctarank", SReg::cluster_ctarank},
    {"%cluster_nctarank", SReg::cluster_nctarank},
    {"%is_explicit_cluster", SReg::is_explicit_cluster},
    {"%cluster_ctaid.x", SReg::cluster_ctaid_x},
    {"%cluster_ctaid.y", SReg::cluster_ctaid_y},
    {"%cluster_ctaid.z", SReg::cluster_ctaid_z},
    {"%cluster_nctaid.x", SReg::cluster_nctaid_x},
    {"%cluster_nctaid.y", SReg::cluster_nctaid_y},
    {"%cluster_nctaid.z", SReg::cluster_nctaid_z},
    {"%clusterid.x", SReg::clusterid_x},
    {"%clusterid.y", SReg::clusterid_y},
    {"%clusterid.z", SReg::clusterid_z},
    {"%nclusterid.x", SReg::nclusterid_x},
    {"%nclusterid.y", SReg::nclusterid_y},
    {"%nclusterid.z", SReg::nclusterid_z},
};

struct OpName {
  std::string_view name;
  Op op;
};
constexpr OpName kOps[] = {
    {"add", Op::add},
    {"sub", Op::sub},
    {"mul", Op::mul},
    {"mad", Op::mad},
    {"mul24", Op::mul24},
    {"mad24", Op::mad24},
    {"sad", Op::sad},
    {"div", Op::div},
    {"rem", Op::rem},
    {"abs", Op::abs},
    {"neg", Op::neg},
    {"min", Op::min},
    {"max", Op::max},
    {"popc", Op::popc},
    {"clz", Op::clz},
    {"bfind", Op::bfind},
    {"brev", Op::brev},
    {"bfe", Op::bfe},
    {"bfi", Op::bfi},
    {"prmt", Op::prmt},
    {"shf", Op::shf},
    {"shl", Op::shl},
    {"shr", Op::shr},
    {"and", Op::and_},
    {"or", Op::or_},
    {"xor", Op::xor_},
    {"not", Op::not_},
    {"cnot", Op::cnot},
    {"lop3", Op::lop3},
    {"dp4a", Op::dp4a},
    {"dp2a", Op::dp2a},
    {"addc", Op::addc},
    {"subc", Op::subc},
    {"madc", Op::madc},
    {"fns", Op::fns},
    {"bmsk", Op::bmsk},
    {"szext", Op::szext},
    {"fma", Op::fma},
    {"rcp", Op::rcp},
    {"sqrt", Op::sqrt},
    {"rsqrt", Op::rsqrt},
    {"sin", Op::sin},
    {"cos", Op::cos},
    {"lg2", Op::lg2},
    {"ex2", Op::ex2},
    {"tanh", Op::tanh},
    {"copysign", Op::copysign},
    {"testp", Op::testp},
    {"setp", Op::setp},
    {"set", Op::set},
    {"selp", Op::selp},
    {"slct", Op::slct},
    {"mov", Op::mov},
    {"cvt", Op::cvt},
    {"cvta", Op::cvta},
    {"isspacep", Op::isspacep},
    {"ld", Op::ld},
    {"ldu", Op::ldu},
    {"st", Op::st},
    {"prefetch", Op::prefetch},
    {"prefetchu", Op::prefetch},
    {"atom", Op::atom},
    {"red", Op::red},
    {"fence", Op::fence},
    {"membar", Op::membar},
    {"bra", Op::bra},
    {"brx", Op::brx},
    {"call", Op::call},
    {"ret", Op::ret},
    {"exit", Op::exit},
    {"trap", Op::trap},
    {"brkpt", Op::brkpt},
    {"nanosleep", Op::nanosleep},
    {"pmevent", Op::pmevent},
    {"bar", Op::bar_sync},
    {"barrier", Op::bar_sync},
    {"shfl", Op::shfl},
    {"vote", Op::vote},
    {"match", Op::match},
    {"redux", Op::redux},
    {"activemask", Op::activemask},
    {"elect", Op::elect},
    {"griddepcontrol", Op::griddepcontrol},
    {"discard", Op::prefetch},
    {"applypriority", Op::prefetch},
    {"createpolicy", Op::unsupported},
};

// Valid PTX opcodes the interpreter does not run yet: they load, and a launch that can reach
// one fails naming it.
constexpr std::string_view kUnsupported[] = {"mma",
                                             "wmma",
                                             "wgmma",
                                             "ldmatrix",
                                             "stmatrix",
                                             "movmatrix",
                                             "tex",
                                             "tld4",
                                             "txq",
                                             "suld",
                                             "sust",
                                             "sured",
                                             "suq",
                                             "cp",
                                             "mbarrier",
                                             "cp.async",
                                             "tensormap",
                                             "multimem",
                                             "setmaxnreg",
                                             "stackrestore",
                                             "stacksave",
                                             "alloca",
                                             "getctarank",
                                             "mapa",
                                             "clusterlaunchcontrol",
                                             "tcgen05",
                                             "istypep",
                                             "cvt.pack",
                                             "ld.global.nc.L2",
                                             "st.async",
                                             "red.async",
                                             "elect.sync",
                                             "barrier.cluster",
                                             "vabsdiff",
                                             "vadd",
                                             "vsub",
                                             "vmad",
                                             "vmax",
                                             "vmin",
                                             "vset",
                                             "vshl",
                                             "vshr",
                                             "vabsdiff2",
                                             "vabsdiff4",
                                             "vadd2",
                                             "vadd4",
                                             "vsub2",
                                             "vsub4",
                                             "vavrg2",
                                             "vavrg4",
                                             "vmax2",
                                             "vmax4",
                                             "vmin2",
                                             "vmin4",
                                             "vset2",
                                             "vset4",
                                             "abs",
                                             "bar.cta"};

struct Scope {
  std::unordered_map<std::string, std::uint32_t> regs;
  std::unordered_map<std::string, Operand> syms;  // local/shared/param variables
};

struct FuncInfo {
  std::uint32_t index;
  std::unordered_map<std::string, std::uint32_t> param_index;  // formal name -> index
  std::unordered_map<std::string, std::uint32_t> ret_index;
};

class Parser {
 public:
  explicit Parser(std::vector<Tok> toks) : t_(std::move(toks)) {}

  std::shared_ptr<Program> run() {
    p_ = std::make_shared<Program>();
    // Pass 1: declarations.
    declare_pass();
    // Pass 2: bodies.
    i_ = 0;
    body_pass();
    finish();
    return p_;
  }

 private:
  // ---- token helpers
  const Tok& peek(std::size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  const Tok& next() {
    const Tok& t = t_[i_];
    if (i_ + 1 < t_.size()) ++i_;
    return t;
  }
  bool at(std::string_view s) const { return peek().text == s && peek().kind != Tok::K::string; }
  bool accept(std::string_view s) {
    if (at(s)) {
      next();
      return true;
    }
    return false;
  }
  [[noreturn]] void fail(const std::string& what) const { throw ParseError{peek().line, what}; }
  [[noreturn]] void fail_at(int line, const std::string& what) const {
    throw ParseError{line, what};
  }
  void expect(std::string_view s) {
    if (!accept(s)) {
      fail("expected '" + std::string(s) + "' but found '" + std::string(peek().text) + "'");
    }
  }
  std::string_view ident() {
    if (peek().kind != Tok::K::ident) {
      fail("expected a name but found '" + std::string(peek().text) + "'");
    }
    return next().text;
  }
  std::uint64_t number() {
    bool neg = accept("-");
    if (peek().kind != Tok::K::number) fail("expected a number");
    auto v = parse_int(next().text);
    if (!v) fail("bad number");
    return neg ? ~*v + 1 : *v;
  }
  void skip_line(int line) {
    while (peek().kind != Tok::K::end && peek().line == line) next();
  }
  void skip_to_semicolon() {
    while (peek().kind != Tok::K::end && !at(";")) next();
    accept(";");
  }
  void skip_braced() {  // at '{'
    int depth = 0;
    do {
      if (at("{")) ++depth;
      if (at("}")) --depth;
      next();
    } while (depth > 0 && peek().kind != Tok::K::end);
  }

  // ---- pass 1
  void declare_pass() {
    while (peek().kind != Tok::K::end) {
      const Tok& t = peek();
      if (t.text == ".version" || t.text == ".target" || t.text == ".address_size" ||
          t.text == ".file") {
        skip_line(t.line);
        continue;
      }
      if (t.text == ".section") {
        next();
        next();
        if (at("{")) skip_braced();
        continue;
      }
      if (t.text == ".pragma") {
        skip_to_semicolon();
        continue;
      }
      bool external = false;
      while (at(".visible") || at(".extern") || at(".weak") || at(".common")) {
        if (at(".extern")) external = true;
        next();
      }
      if (at(".entry") || at(".func")) {
        declare_function(external);
        continue;
      }
      if (at(".global") || at(".const") || at(".shared") || at(".local")) {
        declare_variable(external);
        continue;
      }
      if (at(".alias")) {
        skip_to_semicolon();
        continue;
      }
      fail("unexpected '" + std::string(t.text) + "' at module level");
    }
  }

  std::vector<std::pair<std::string, ParamDecl>> param_list() {
    std::vector<std::pair<std::string, ParamDecl>> out;
    expect("(");
    while (!at(")")) {
      if (!accept(".param") && !accept(".reg")) fail("expected .param in a parameter list");
      ParamDecl d;
      std::uint32_t align = 0;
      Type ty = Type::b8;
      bool got_type = false;
      while (peek().kind == Tok::K::ident && peek().text.front() == '.') {
        const std::string_view m = next().text;
        if (m == ".align") {
          const auto a = static_cast<std::uint32_t>(number());
          if (!got_type) align = a;
        } else if (m == ".ptr") {
          // .ptr [.space] [.align N]: describes the pointee
        } else if (auto tt = type_of(m)) {
          ty = *tt;
          got_type = true;
        }
      }
      const std::string name(ident());
      std::uint64_t count = 1;
      if (accept("[")) {
        count = at("]") ? 0 : number();
        expect("]");
      }
      const unsigned es = std::max(1u, type_size(ty));
      d.size = static_cast<std::uint32_t>(es * count);
      d.align = align != 0 ? align : es;
      out.emplace_back(name, d);
      if (!accept(",")) break;
    }
    expect(")");
    return out;
  }

  void declare_function(bool external) {
    const bool entry = at(".entry");
    next();
    std::vector<std::pair<std::string, ParamDecl>> rets;
    if (!entry && at("(")) rets = param_list();
    const std::string name(ident());
    std::vector<std::pair<std::string, ParamDecl>> params;
    if (at("(")) params = param_list();
    // Header directives up to the body or ';'.
    while (!at("{") && !at(";") && peek().kind != Tok::K::end) {
      if (at(".pragma")) {
        skip_to_semicolon();  // a header pragma ends with its own ';'
        continue;
      }
      next();
    }
    const bool has_body = at("{");
    std::uint32_t index;
    if (const auto it = funcs_.find(name); it != funcs_.end()) {
      index = it->second.index;
    } else {
      index = static_cast<std::uint32_t>(p_->functions.size());
      p_->functions.emplace_back();
      FuncInfo info{index, {}, {}};
      funcs_.emplace(name, std::move(info));
    }
    Function& f = p_->functions[index];
    FuncInfo& info = funcs_.at(name);
    if (has_body && f.defined) fail("function " + name + " is defined twice");
    f.name = name;
    f.entry = entry;
    if (has_body || f.params.empty()) {
      f.params.clear();
      f.rets.clear();
      info.param_index.clear();
      info.ret_index.clear();
      std::uint32_t off = 0;
      f.param_offsets.clear();
      for (auto& [n, d] : params) {
        info.param_index[n] = static_cast<std::uint32_t>(f.params.size());
        off = (off + d.align - 1) / d.align * d.align;
        f.param_offsets.push_back(off);
        off += d.size;
        f.params.push_back(d);
      }
      for (auto& [n, d] : rets) {
        info.ret_index[n] = static_cast<std::uint32_t>(f.rets.size());
        f.rets.push_back(d);
      }
    }
    if (has_body) {
      f.defined = true;
      bodies_.push_back({index, i_});
      skip_braced();
    } else {
      expect(";");
      (void)external;
    }
  }

  struct VarDecl {
    Space space = Space::global;
    std::size_t align = 0;
    Type type = Type::b8;
    unsigned vec = 1;
    std::string name;
    std::size_t count = 1;
    bool unsized = false;
    bool has_init = false;
    std::size_t init_at = 0;  // token index of the initializer
  };

  // `.space [.align N] [.vN] .type name[dims] [= init];` with the cursor at the space.
  VarDecl variable_decl() {
    VarDecl v;
    v.space = *space_of(next().text);
    while (peek().kind == Tok::K::ident && peek().text.front() == '.') {
      const std::string_view m = next().text;
      if (m == ".align") {
        v.align = number();
      } else if (m == ".v2") {
        v.vec = 2;
      } else if (m == ".v4") {
        v.vec = 4;
      } else if (m == ".v8") {
        v.vec = 8;
      } else if (auto ty = type_of(m)) {
        v.type = *ty;
      } else if (m == ".attribute") {
        expect("(");
        while (!at(")")) next();
        expect(")");
      }
      // .ptr etc. ignored
    }
    v.name = std::string(ident());
    while (accept("[")) {
      if (at("]")) {
        v.unsized = true;
      } else {
        v.count *= number();
      }
      expect("]");
    }
    if (accept("=")) {
      v.has_init = true;
      v.init_at = i_;
      // skip the initializer
      int depth = 0;
      while (peek().kind != Tok::K::end) {
        if (at("{")) ++depth;
        if (at("}")) --depth;
        if (at(";") && depth == 0) break;
        next();
      }
    }
    expect(";");
    const unsigned es = std::max(1u, type_size(v.type)) * v.vec;
    if (v.align == 0) v.align = es;
    return v;
  }

  void declare_variable(bool external) {
    if (at(".local")) {  // module-scope .local: per-thread, rare; treat as a frame-less global
      fail("module-scope .local variables are not supported");
    }
    VarDecl v = variable_decl();
    const unsigned es = std::max(1u, type_size(v.type)) * v.vec;
    if (v.space == Space::shared) {
      Operand o;
      o.kind = Operand::Kind::sym;
      o.sym_kind = SymKind::shared;
      if (v.unsized || (external && v.count == 0)) {
        o.sym = kDynamicShared;
      } else {
        shared_end_ = (shared_end_ + v.align - 1) / v.align * v.align;
        o.sym = shared_end_;
        shared_end_ += es * v.count;
      }
      module_syms_[v.name] = o;
      return;
    }
    Global g;
    g.name = v.name;
    g.constant = v.space == Space::constant;
    g.external = external;
    g.size = es * v.count;
    g.align = v.align;
    const auto index = static_cast<std::uint32_t>(p_->globals.size());
    if (const auto it = global_index_.find(v.name); it != global_index_.end()) {
      // a declaration followed by a definition
      Global& old = p_->globals[it->second];
      if (!external) old = g;
      return;
    }
    p_->globals.push_back(std::move(g));
    global_index_[v.name] = index;
    Operand o;
    o.kind = Operand::Kind::sym;
    o.sym_kind = SymKind::global;
    o.sym = index;
    module_syms_[v.name] = o;
    if (v.has_init) inits_.push_back({index, v.init_at, v.type});
  }

  // ---- initializers (after pass 1: may name any global or function)
  struct Init {
    std::uint32_t global;
    std::size_t at;
    Type type;
  };

  void read_initializers() {
    for (const Init& in : inits_) {
      i_ = in.at;
      Global& g = p_->globals[in.global];
      const unsigned es = std::max(1u, type_size(in.type));
      std::vector<unsigned char> bytes;
      std::function<void()> element = [&]() {
        if (accept("{")) {
          while (!at("}")) {
            element();
            if (!accept(",")) break;
          }
          expect("}");
          return;
        }
        const std::size_t off = bytes.size();
        bytes.resize(off + es, 0);
        bool neg = accept("-");
        if (peek().kind == Tok::K::number) {
          auto v = parse_literal(next().text, neg, in.type);
          if (!v) fail("bad initializer value");
          std::memcpy(bytes.data() + off, &*v, std::min<unsigned>(es, 8));
          return;
        }
        // generic(sym) / sym / sym+N
        bool generic = false;
        std::string_view name;
        if (at("generic")) {
          next();
          expect("(");
          name = ident();
          expect(")");
          generic = true;
        } else {
          name = ident();
        }
        std::int64_t addend = 0;
        if (accept("+")) addend = static_cast<std::int64_t>(number());
        Reloc r;
        r.offset = static_cast<std::uint32_t>(off);
        r.size = static_cast<std::uint8_t>(es);
        r.generic = generic;
        r.addend = addend;
        const std::string key(name);
        if (auto it = global_index_.find(key); it != global_index_.end()) {
          r.target = it->second;
        } else if (auto f = funcs_.find(key); f != funcs_.end()) {
          r.function = true;
          r.target = f->second.index;
        } else {
          fail("initializer names unknown symbol " + key);
        }
        g.relocs.push_back(r);
      };
      element();
      if (bytes.size() > g.size) {
        if (g.size == 0) {
          g.size = bytes.size();  // unsized array: its initializer sizes it
        } else {
          fail("initializer of " + g.name + " is larger than the variable");
        }
      }
      g.init = std::move(bytes);  // what it does not cover is zero (the module's memory is)
    }
  }

  // ---- pass 2
  void body_pass() {
    read_initializers();
    p_->static_shared = shared_end_;
    const std::size_t dyn_align = 16;
    p_->dynamic_shared_offset = (shared_end_ + dyn_align - 1) / dyn_align * dyn_align;
    for (const auto& [index, at] : bodies_) {
      i_ = at;
      function_body(index);
    }
  }

  static constexpr std::uint64_t kDynamicShared = ~0ull;

  Operand resolve_symbol(std::string_view name, int line) {
    const std::string key(name);
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      if (auto it = s->syms.find(key); it != s->syms.end()) return fix_shared(it->second);
    }
    if (auto it = fn_->param_index.find(key); it != fn_->param_index.end()) {
      Operand o;
      o.kind = Operand::Kind::sym;
      const Function& f = p_->functions[fn_->index];
      if (f.entry) {
        o.sym_kind = SymKind::kernel_param;
        o.sym = f.param_offsets[it->second];
      } else {
        o.sym_kind = SymKind::func_param;
        o.sym = it->second;
      }
      return o;
    }
    if (auto it = fn_->ret_index.find(key); it != fn_->ret_index.end()) {
      Operand o;
      o.kind = Operand::Kind::sym;
      o.sym_kind = SymKind::func_ret;
      o.sym = it->second;
      return o;
    }
    if (auto it = module_syms_.find(key); it != module_syms_.end()) return fix_shared(it->second);
    if (auto it = funcs_.find(key); it != funcs_.end()) {
      Operand o;
      o.kind = Operand::Kind::sym;
      o.sym_kind = SymKind::function;
      o.sym = it->second.index;
      return o;
    }
    fail_at(line, "undefined symbol " + key);
  }

  Operand fix_shared(Operand o) const {
    if (o.sym_kind == SymKind::shared && o.sym == kDynamicShared) o.sym = p_->dynamic_shared_offset;
    return o;
  }

  void function_body(std::uint32_t index) {
    const std::string name = p_->functions[index].name;
    fn_ = &funcs_.at(name);
    Function& f = p_->functions[index];
    f.begin = static_cast<std::uint32_t>(p_->code.size());
    regs_ = 0;
    reg_types_.clear();
    local_ = 0;
    params_ = 0;
    labels_.clear();
    fixups_.clear();
    scopes_.clear();
    expect("{");
    scopes_.emplace_back();
    block();
    // an implicit ret at the end (falling off a function)
    Inst r;
    r.op = Op::ret;
    r.line = static_cast<std::uint32_t>(peek().line);
    p_->code.push_back(r);
    Function& g = p_->functions[index];
    g.end = static_cast<std::uint32_t>(p_->code.size());
    g.regs = regs_;
    g.local_bytes = static_cast<std::uint32_t>((local_ + 15) / 16 * 16);
    g.param_bytes = static_cast<std::uint32_t>((params_ + 15) / 16 * 16);
    for (const auto& [pc, label, line, operand] : fixups_) {
      const auto it = labels_.find(label);
      if (it == labels_.end()) fail_at(line, "undefined label " + label);
      p_->code[pc].ops[operand].reg = it->second;
    }
    for (auto& [tbl, line, names] : table_fixups_) {
      for (const std::string& l : names) {
        const auto it = labels_.find(l);
        if (it == labels_.end()) fail_at(line, "undefined label " + l);
        p_->branch_tables[tbl].push_back(it->second);
      }
    }
    table_fixups_.clear();
  }

  // Statements up to the matching '}'.
  void block() {
    while (!accept("}")) {
      if (peek().kind == Tok::K::end) fail("unterminated function body");
      statement();
    }
  }

  void declare_regs() {
    const int line = peek().line;
    next();  // .reg
    Type ty = Type::none;
    unsigned vec = 1;
    while (peek().kind == Tok::K::ident && peek().text.front() == '.') {
      const std::string_view m = next().text;
      if (m == ".v2")
        vec = 2;
      else if (m == ".v4")
        vec = 4;
      else if (auto t = type_of(m))
        ty = *t;
      else if (m == ".align")
        number();
    }
    if (ty == Type::none) fail_at(line, ".reg without a type");
    if (vec != 1) fail_at(line, "vector registers are not supported");
    for (;;) {
      const std::string base(ident());
      if (accept("<")) {
        const auto count = number();
        expect(">");
        if (count > 1u << 20) fail_at(line, "too many registers");
        for (std::uint64_t k = 0; k < count; ++k) {
          scopes_.back().regs[base + std::to_string(k)] = regs_++;
          reg_types_.push_back(ty);
        }
      } else {
        scopes_.back().regs[base] = regs_++;
        reg_types_.push_back(ty);
      }
      if (!accept(",")) break;
    }
    expect(";");
  }

  void declare_frame_variable() {
    const int line = peek().line;
    const bool is_param = at(".param");
    VarDecl v = variable_decl();
    const unsigned es = std::max(1u, type_size(v.type)) * v.vec;
    const std::size_t size = es * v.count;
    Operand o;
    o.kind = Operand::Kind::sym;
    if (v.space == Space::shared) {
      o.sym_kind = SymKind::shared;
      if (v.unsized) {
        o.sym = p_->dynamic_shared_offset;
      } else {
        // function-scope shared variables: placed after the module's (static part grows)
        std::size_t off = (p_->static_shared + v.align - 1) / v.align * v.align;
        o.sym = off;
        p_->static_shared = off + size;
        if (p_->static_shared > p_->dynamic_shared_offset) {
          p_->dynamic_shared_offset = (p_->static_shared + 15) / 16 * 16;
        }
      }
    } else if (v.space == Space::local) {
      local_ = (local_ + v.align - 1) / v.align * v.align;
      o.sym_kind = SymKind::local;
      o.sym = local_;
      local_ += size;
    } else if (is_param) {
      params_ = (params_ + v.align - 1) / v.align * v.align;
      o.sym_kind = SymKind::call_param;
      o.sym = params_;
      params_ += size;
    } else {
      fail_at(line, "variables of this space cannot be declared in a function");
    }
    if (v.has_init && v.space != Space::shared) fail_at(line, "initialized frame variables");
    scopes_.back().syms[v.name] = o;
  }

  void statement() {
    const Tok& t = peek();
    if (t.text == "{") {
      next();
      scopes_.emplace_back();
      block();
      scopes_.pop_back();
      return;
    }
    if (t.text == ".reg") return declare_regs();
    if (t.text == ".local" || t.text == ".shared" || t.text == ".param") {
      return declare_frame_variable();
    }
    if (t.text == ".loc" || t.text == ".file") return skip_line(t.line);
    if (t.text == ".pragma" || t.text == ".maxnreg" || t.text == ".maxntid" ||
        t.text == ".reqntid" || t.text == ".minnctapersm") {
      return skip_to_semicolon();
    }
    if (t.kind == Tok::K::ident && peek(1).text == ":" && t.text.front() != '.') {
      const std::string label(t.text);
      next();
      next();
      if (at(".branchtargets")) {
        next();
        const auto tbl = static_cast<std::uint32_t>(p_->branch_tables.size());
        p_->branch_tables.emplace_back();
        std::vector<std::string> names;
        for (;;) {
          names.emplace_back(ident());
          if (!accept(",")) break;
        }
        expect(";");
        tables_[label] = tbl;
        table_fixups_.push_back({tbl, t.line, std::move(names)});
        return;
      }
      if (at(".callprototype")) {
        skip_to_semicolon();
        return;
      }
      if (labels_.contains(label)) fail_at(t.line, "label " + label + " is defined twice");
      labels_[label] = static_cast<std::uint32_t>(p_->code.size());
      return;
    }
    instruction();
  }

  // ---- instructions
  std::optional<std::uint32_t> find_reg(std::string_view name) const {
    const std::string key(name);
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      if (auto it = s->regs.find(key); it != s->regs.end()) return it->second;
    }
    return std::nullopt;
  }

  Operand operand(Type type, Inst& inst, int operand_index) {
    Operand o;
    const int line = peek().line;
    if (accept("_")) {
      o.kind = Operand::Kind::sink;
      return o;
    }
    if (at("[")) {
      next();
      o.kind = Operand::Kind::addr;
      if (peek().kind == Tok::K::number || at("-")) {
        o.imm = static_cast<std::int64_t>(number());
      } else {
        const std::string_view name = ident();
        if (auto r = find_reg(name)) {
          o.has_reg = true;
          o.reg = *r;
        } else {
          const Operand s = resolve_symbol(name, line);
          o.has_sym = true;
          o.sym_kind = s.sym_kind;
          o.sym = s.sym;
        }
        if (accept("+")) {
          if (peek().kind == Tok::K::ident) {
            // [sym + reg]
            const auto r = find_reg(ident());
            if (!r || o.has_reg) fail_at(line, "bad address");
            o.has_reg = true;
            o.reg = *r;
          } else {
            o.imm = static_cast<std::int64_t>(number());
          }
        } else if (accept("-")) {
          o.imm = -static_cast<std::int64_t>(number());
        }
      }
      expect("]");
      return o;
    }
    if (at("{")) {
      next();
      o.kind = Operand::Kind::vec;
      o.reg = static_cast<std::uint32_t>(p_->vec_regs.size());
      while (!at("}")) {
        if (accept("_")) {
          p_->vec_regs.push_back(UINT32_MAX);
        } else {
          const std::string_view name = ident();
          const auto r = find_reg(name);
          if (!r) fail_at(line, "undefined register " + std::string(name));
          p_->vec_regs.push_back(*r);
        }
        ++o.count;
        if (!accept(",")) break;
      }
      expect("}");
      return o;
    }
    const bool neg_pred = accept("!");
    const bool neg_num = !neg_pred && accept("-");
    if (peek().kind == Tok::K::number) {
      o.kind = Operand::Kind::imm;
      const auto v = parse_literal(next().text, neg_num, type);
      if (!v) fail_at(line, "bad number");
      o.imm = static_cast<std::int64_t>(*v);
      return o;
    }
    const std::string_view name = ident();
    if (auto r = find_reg(name)) {
      o.kind = Operand::Kind::reg;
      o.reg = *r;
      o.neg = neg_pred;
      if (neg_num) fail_at(line, "'-' before a register");
      return o;
    }
    if (!name.empty() && name.front() == '%') {
      for (const SRegName& s : kSRegs) {
        if (s.name == name) {
          o.kind = Operand::Kind::sreg;
          o.reg = static_cast<std::uint32_t>(s.reg);
          return o;
        }
      }
      if (name.starts_with("%envreg")) {
        o.kind = Operand::Kind::sreg;
        o.reg = static_cast<std::uint32_t>(SReg::envreg);
        o.imm = static_cast<std::int64_t>(parse_int(name.substr(7)).value_or(0));
        return o;
      }
      if (name.starts_with("%pm") || name.starts_with("%reserved_smem")) {
        o.kind = Operand::Kind::sreg;
        o.reg = static_cast<std::uint32_t>(SReg::pm);
        return o;
      }
      fail_at(line, "undefined register " + std::string(name));
    }
    // A label (branch target), a symbol (address), a function.
    if (inst.op == Op::bra || (inst.op == Op::brx && operand_index == 1)) {
      o.kind = Operand::Kind::label;
      if (inst.op == Op::brx) {
        auto it = tables_.find(std::string(name));
        if (it == tables_.end()) fail_at(line, "undefined branch table " + std::string(name));
        o.reg = it->second;
        return o;
      }
      fixups_.push_back(
          {static_cast<std::uint32_t>(p_->code.size()), std::string(name), line, operand_index});
      return o;
    }
    o = resolve_symbol(name, line);
    o.kind = Operand::Kind::sym;
    if (accept("+")) o.imm = static_cast<std::int64_t>(number());
    return o;
  }

  void modifiers(Inst& inst, const std::vector<std::string_view>& mods, int line) {
    std::vector<Type> types;
    for (std::string_view m : mods) {
      if (auto t = type_of(m)) {
        types.push_back(*t);
        continue;
      }
      if (auto s = space_of(m)) {
        inst.space = *s;
        continue;
      }
      static const std::unordered_map<std::string_view, Round> kRound = {
          {".rn", Round::rn},   {".rz", Round::rz},   {".rm", Round::rm},
          {".rp", Round::rp},   {".rna", Round::rna}, {".rni", Round::rni},
          {".rzi", Round::rzi}, {".rmi", Round::rmi}, {".rpi", Round::rpi}};
      if (auto it = kRound.find(m); it != kRound.end()) {
        inst.round = it->second;
        continue;
      }
      static const std::unordered_map<std::string_view, Cmp> kCmp = {
          {".eq", Cmp::eq},   {".ne", Cmp::ne},   {".lt", Cmp::lt},   {".le", Cmp::le},
          {".gt", Cmp::gt},   {".ge", Cmp::ge},   {".lo", Cmp::lo},   {".ls", Cmp::ls},
          {".hi", Cmp::hi},   {".hs", Cmp::hs},   {".equ", Cmp::equ}, {".neu", Cmp::neu},
          {".ltu", Cmp::ltu}, {".leu", Cmp::leu}, {".gtu", Cmp::gtu}, {".geu", Cmp::geu},
          {".num", Cmp::num}, {".nan", Cmp::nan}};
      if ((inst.op == Op::setp || inst.op == Op::set) && kCmp.contains(m)) {
        inst.cmp = kCmp.at(m);
        continue;
      }
      if (m == ".hi" && inst.op != Op::setp && inst.op != Op::set) {
        inst.flags |= kHi;
        continue;
      }
      static const std::unordered_map<std::string_view, Sub> kSub = {
          {".up", Sub::up},           {".down", Sub::down},
          {".bfly", Sub::bfly},       {".idx", Sub::idx},
          {".all", Sub::all},         {".any", Sub::any},
          {".uni", Sub::uni},         {".ballot", Sub::ballot},
          {".add", Sub::a_add},       {".min", Sub::a_min},
          {".max", Sub::a_max},       {".inc", Sub::a_inc},
          {".dec", Sub::a_dec},       {".exch", Sub::a_exch},
          {".cas", Sub::a_cas},       {".popc", Sub::a_popc},
          {".finite", Sub::t_finite}, {".infinite", Sub::t_infinite},
          {".number", Sub::t_number}, {".notanumber", Sub::t_notanumber},
          {".normal", Sub::t_normal}, {".subnormal", Sub::t_subnormal},
          {".f4e", Sub::p_f4e},       {".b4e", Sub::p_b4e},
          {".rc8", Sub::p_rc8},       {".ecl", Sub::p_ecl},
          {".ecr", Sub::p_ecr},       {".rc16", Sub::p_rc16}};
      if (inst.op == Op::video) {
        if (m == ".add") {
          inst.flags |= kVideoAdd;
          continue;
        }
        if (m == ".sat") {
          inst.flags |= kSat;
          continue;
        }
        if (m == ".b3210" || m == ".h10") continue;  // every lane: the default mask
        fail_at(line, "video instruction modifier " + std::string(m) + " is not supported");
      }
      if (m == ".and" || m == ".or" || m == ".xor") {
        const Sub s = m == ".and" ? Sub::b_and : m == ".or" ? Sub::b_or : Sub::b_xor;
        if (inst.op == Op::setp || inst.op == Op::set) {
          inst.combine = s;
        } else {
          inst.sub = m == ".and" ? Sub::a_and : m == ".or" ? Sub::a_or : Sub::a_xor;
        }
        continue;
      }
      if (inst.op == Op::match && (m == ".any" || m == ".all")) {
        inst.sub = m == ".any" ? Sub::m_any : Sub::m_all;
        continue;
      }
      if (inst.op == Op::vote && m == ".uni") {
        inst.sub = Sub::uni;
        continue;
      }
      if (auto it = kSub.find(m); it != kSub.end() && inst.op != Op::bra && inst.op != Op::call) {
        inst.sub = it->second;
        continue;
      }
      if (m == ".ftz")
        inst.flags |= kFtz;
      else if (m == ".sat")
        inst.flags |= kSat;
      else if (m == ".satfinite")
        inst.flags |= kSatFinite;
      else if (m == ".noftz")
        inst.flags |= kNoFtz;
      else if (m == ".approx")
        inst.flags |= kApprox;
      else if (m == ".full")
        inst.flags |= kFull;
      else if (m == ".lo")
        inst.flags |= kLo;
      else if (m == ".wide")
        inst.flags |= kWide;
      else if (m == ".cc")
        inst.flags |= kCc;
      else if (m == ".uni")
        inst.flags |= kUni;
      else if (m == ".clamp")
        inst.flags |= kClamp;
      else if (m == ".wrap")
        inst.flags &= ~kClamp;
      else if (m == ".l")
        inst.flags |= kShiftLeft;
      else if (m == ".r")
        inst.flags &= ~kShiftLeft;
      else if (m == ".NaN")
        inst.flags |= kNan;
      else if (m == ".xorsign")
        inst.flags |= kXorsign;
      else if (m == ".relu")
        inst.flags |= kRelu;
      else if (m == ".shiftamt")
        inst.flags |= kReverse;
      else if (m == ".to")
        inst.flags |= kTo;
      else if (m == ".volatile")
        inst.flags |= kVolatile;
      else if (m == ".aligned")
        inst.flags |= kAligned;
      else if (m == ".v2")
        inst.vec = 2;
      else if (m == ".v4")
        inst.vec = 4;
      else if (m == ".v8")
        inst.vec = 8;
      else if (m == ".sync" || m == ".nc" || m == ".ca" || m == ".cg" || m == ".cs" || m == ".lu" ||
               m == ".cv" || m == ".wb" || m == ".wt" || m == ".weak" || m == ".relaxed" ||
               m == ".acquire" || m == ".release" || m == ".acq_rel" || m == ".sc" || m == ".cta" ||
               m == ".gpu" || m == ".sys" || m == ".cluster" || m == ".gl" || m == ".L1" ||
               m == ".L2" || m == ".mmio" || m == ".arrive" || m == ".red" || m == ".warp" ||
               m == ".unified" || m == ".level::eviction_priority" || m.starts_with(".L1::") ||
               m.starts_with(".L2::") || m == ".shared::cluster" || m == ".b4e" ||
               m == ".op_restrict" || m == ".sem" || m == ".proxy" || m == ".alias" ||
               m == ".mode" || m == ".uniform" || m == ".collector::a" || m == ".ecl" ||
               m == ".ecr" || m == ".launch_dependents" || m == ".wait" || m == ".s" ||
               m == ".mask" || m == ".bf16" || m == ".bf16x2")
        ;  // cache, memory-order and scope qualifiers: no effect on a sequential machine
      else
        fail_at(line, "unknown modifier " + std::string(m) + " on this instruction");
    }
    if (!types.empty()) inst.type = types[0];
    if (types.size() > 1) inst.type2 = types[1];
    if (types.size() > 2) inst.type3 = types[2];
  }

  void instruction() {
    const int line = peek().line;
    Inst inst;
    inst.line = static_cast<std::uint32_t>(line);
    if (accept("@")) {
      inst.guarded = true;
      inst.guard_neg = accept("!");
      const std::string_view p = ident();
      const auto r = find_reg(p);
      if (!r) fail_at(line, "undefined predicate " + std::string(p));
      inst.guard = *r;
      if (reg_types_[*r] != Type::pred) {
        fail_at(line, "the guard " + std::string(p) + " is not a .pred register");
      }
    }
    const std::string_view opcode = ident();
    std::vector<std::string_view> parts;
    std::size_t pos = opcode.find('.');
    const std::string_view base = opcode.substr(0, pos);
    while (pos != std::string_view::npos) {
      const std::size_t nextp = opcode.find('.', pos + 1);
      parts.push_back(opcode.substr(pos, nextp == std::string_view::npos ? nextp : nextp - pos));
      pos = nextp;
    }
    const OpName* found = nullptr;
    for (const OpName& o : kOps) {
      if (o.name == base) found = &o;
    }
    static const OpName kVideo[] = {{"vadd", Op::video},  {"vsub", Op::video},
                                    {"vavrg", Op::video}, {"vabsdiff", Op::video},
                                    {"vmin", Op::video},  {"vmax", Op::video}};
    if (found == nullptr && (base.ends_with('4') || base.ends_with('2'))) {
      const std::string_view stem = base.substr(0, base.size() - 1);
      for (const OpName& o : kVideo) {
        if (o.name != stem) continue;
        found = &o;
        inst.vec = base.back() == '4' ? 4 : 2;
        inst.sub = stem == "vadd"    ? Sub::a_add
                   : stem == "vsub"  ? Sub::v_sub
                   : stem == "vavrg" ? Sub::v_avrg
                   : stem == "vmin"  ? Sub::a_min
                   : stem == "vmax"  ? Sub::a_max
                                     : Sub::v_absdiff;
      }
    }
    bool unsupported = found == nullptr || found->op == Op::unsupported;
    if (!unsupported) inst.op = found->op;
    // Forms that stay unsupported for now.
    if (!unsupported) {
      const auto has = [&](std::string_view m) {
        return std::find(parts.begin(), parts.end(), m) != parts.end();
      };
      if ((base == "cvt" && has(".pack")) || (base == "barrier" && has(".cluster")) ||
          (base == "bar" && has(".cluster")) || has(".shared::cluster") ||
          (has(".async") && base != "fence") || has(".multimem") ||
          (base == "cvt" && (has(".e4m3x2") || has(".e5m2x2") || has(".e2m1x2")))) {
        unsupported = true;
      }
    }
    if (unsupported) {
      bool known = false;
      for (std::string_view u : kUnsupported) {
        if (u == base) known = true;
      }
      if (found != nullptr) known = true;
      if (!known) fail_at(line, "unknown instruction " + std::string(opcode));
      inst.op = Op::unsupported;
      inst.name = static_cast<std::uint32_t>(p_->names.size());
      p_->names.emplace_back(opcode);
      skip_to_semicolon();
      p_->code.push_back(inst);
      return;
    }
    if (base == "bar" || base == "barrier") {
      // bar.sync / bar.arrive / bar.red / bar.warp.sync; barrier.sync[.aligned] / .arrive / .red
      const auto has = [&](std::string_view m) {
        return std::find(parts.begin(), parts.end(), m) != parts.end();
      };
      if (has(".warp"))
        inst.op = Op::bar_warp_sync;
      else if (has(".arrive"))
        inst.op = Op::bar_arrive;
      else if (has(".red"))
        inst.op = Op::bar_red;
      else
        inst.op = Op::bar_sync;
      std::vector<std::string_view> rest;
      for (std::string_view m : parts) {
        if (m != ".sync" && m != ".arrive" && m != ".red" && m != ".warp" && m != ".cta") {
          rest.push_back(m);
        }
      }
      parts = std::move(rest);
    }
    modifiers(inst, parts, line);
    if (inst.op == Op::cvt && inst.type2 == Type::none) fail_at(line, "cvt needs two types");
    // Operands.
    int k = 0;
    const auto operand_type = [&](int index) {
      if (inst.op == Op::cvt && index == 1) return inst.type2;
      if ((inst.op == Op::setp || inst.op == Op::set) && index >= 1) {
        return inst.op == Op::set ? inst.type2 : inst.type;
      }
      if (inst.op == Op::slct && index == 3) return inst.type2;
      if ((inst.op == Op::mul || inst.op == Op::mad) && (inst.flags & kWide) && index == 3) {
        // mad.wide: c is double width
        switch (inst.type) {
          case Type::s16: return Type::s32;
          case Type::u16: return Type::u32;
          case Type::s32: return Type::s64;
          case Type::u32: return Type::u64;
          default: return inst.type;
        }
      }
      return inst.type;
    };
    if (inst.op == Op::call) {
      call_operands(inst, line);
    } else {
      while (!at(";")) {
        if (k >= 6) fail_at(line, "too many operands");
        inst.ops[k] = operand(operand_type(k), inst, k);
        if (accept("|")) {
          // d|p: the predicate is the second destination
          inst.out2 = operand(Type::pred, inst, 5);
        }
        ++k;
        if (!accept(",")) break;
      }
      inst.nops = static_cast<std::uint8_t>(k);
    }
    expect(";");
    check(inst, line);
    for (int index = 0; index < inst.nops; ++index) {
      const Operand& o = inst.ops[index];
      if (o.kind == Operand::Kind::sreg && static_cast<SReg>(o.reg) == SReg::envreg &&
          (o.imm == 1 || o.imm == 2)) {
        // cooperative groups' grid workspace: grid.sync() needs co-resident CTAs
        inst.op = Op::unsupported;
        inst.name = static_cast<std::uint32_t>(p_->names.size());
        p_->names.push_back(std::string(opcode) + " %envreg" + std::to_string(o.imm) +
                            " (cooperative groups' grid workspace, for grid.sync)");
        break;
      }
    }
    p_->code.push_back(inst);
  }

  // call[.uni] [(ret,...),] target, [(args...)] [, proto];
  // ops[0]: target (sym function or reg); ops[1]: vec of return symbols; ops[2]: vec of args.
  void call_operands(Inst& inst, int line) {
    Operand rets;
    rets.kind = Operand::Kind::vec;
    rets.reg = static_cast<std::uint32_t>(p_->vec_regs.size());
    if (accept("(")) {
      while (!at(")")) {
        const Operand s = resolve_symbol(ident(), line);
        if (s.sym_kind != SymKind::call_param) fail_at(line, "call returns into a non-.param");
        p_->vec_regs.push_back(static_cast<std::uint32_t>(s.sym));
        ++rets.count;
        if (!accept(",")) break;
      }
      expect(")");
      expect(",");
    }
    const std::string_view target = ident();
    if (auto r = find_reg(target)) {
      inst.ops[0].kind = Operand::Kind::reg;
      inst.ops[0].reg = *r;
    } else {
      const auto it = funcs_.find(std::string(target));
      if (it == funcs_.end()) fail_at(line, "call to undefined function " + std::string(target));
      inst.ops[0].kind = Operand::Kind::sym;
      inst.ops[0].sym_kind = SymKind::function;
      inst.ops[0].sym = it->second.index;
    }
    Operand args;
    args.kind = Operand::Kind::vec;
    if (accept(",")) {
      if (accept("(")) {
        args.reg = static_cast<std::uint32_t>(p_->vec_regs.size());
        while (!at(")")) {
          const Operand s = resolve_symbol(ident(), line);
          if (s.sym_kind != SymKind::call_param) fail_at(line, "call argument is not a .param");
          p_->vec_regs.push_back(static_cast<std::uint32_t>(s.sym));
          ++args.count;
          if (!accept(",")) break;
        }
        expect(")");
        if (accept(",")) ident();  // prototype or target list
      } else {
        ident();  // prototype / .callprototype label
      }
    }
    // The argument offsets are in vec_regs; record the sizes from the callee when known.
    inst.ops[1] = rets;
    inst.ops[2] = args;
    inst.nops = 3;
  }

  // Predicate registers only where the ISA takes a predicate, and a predicate where it needs one.
  void check_predicates(const Inst& inst, int line) const {
    const auto is_pred = [&](const Operand& o) {
      return o.kind == Operand::Kind::reg && reg_types_[o.reg] == Type::pred;
    };
    const auto is_value_reg = [&](const Operand& o) {
      return o.kind == Operand::Kind::reg && reg_types_[o.reg] != Type::pred;
    };
    if ((inst.op == Op::setp || inst.op == Op::testp) && is_value_reg(inst.ops[0])) {
      fail_at(line, "the destination of " + std::string(inst.op == Op::setp ? "setp" : "testp") +
                        " must be a .pred register");
    }
    if (inst.out2.kind == Operand::Kind::reg && !is_pred(inst.out2)) {
      fail_at(line, "the second destination (after '|') must be a .pred register");
    }
    if (!is_alu(inst.op) || inst.type == Type::pred || inst.op == Op::cvt) return;
    for (int k = 0; k < inst.nops; ++k) {
      const bool predicate_operand = (inst.op == Op::selp && k == 3) ||
                                     ((inst.op == Op::setp || inst.op == Op::set) && k == 3) ||
                                     ((inst.op == Op::setp || inst.op == Op::testp) && k == 0) ||
                                     (inst.op == Op::lop3 && k == 5);
      if (predicate_operand) {
        if (is_value_reg(inst.ops[k]))
          fail_at(line, "operand " + std::to_string(k + 1) + " must be a .pred register");
      } else if (is_pred(inst.ops[k])) {
        fail_at(line, "operand " + std::to_string(k + 1) + " is a .pred register, which this " +
                          "instruction's type does not allow");
      }
    }
  }

  // Checks the ISA forbids by structure.
  void check(const Inst& inst, int line) {
    const bool typed = is_alu(inst.op) || inst.op == Op::mov || inst.op == Op::ld ||
                       inst.op == Op::ldu || inst.op == Op::st || inst.op == Op::atom ||
                       inst.op == Op::red || inst.op == Op::cvta || inst.op == Op::shfl ||
                       inst.op == Op::redux || inst.op == Op::match || inst.op == Op::isspacep;
    if (typed && inst.type == Type::none && inst.op != Op::isspacep) {
      fail_at(line, "the instruction needs a type (such as .b32)");
    }
    const bool writes = typed && inst.op != Op::st && inst.op != Op::red;
    if (writes && inst.nops > 0) {
      const Operand::Kind k = inst.ops[0].kind;
      if (k != Operand::Kind::reg && k != Operand::Kind::sink && k != Operand::Kind::vec) {
        fail_at(line, "the destination must be a register");
      }
    }
    check_predicates(inst, line);
    const auto need = [&](int n) {
      if (inst.nops < n) fail_at(line, "too few operands");
    };
    switch (inst.op) {
      case Op::add:
      case Op::sub:
      case Op::mul:
      case Op::div:
      case Op::rem:
      case Op::min:
      case Op::max:
      case Op::and_:
      case Op::or_:
      case Op::xor_:
      case Op::shl:
      case Op::shr:
      case Op::mul24:
      case Op::copysign:
      case Op::addc:
      case Op::subc: need(3); break;
      case Op::mad:
      case Op::fma:
      case Op::mad24:
      case Op::sad:
      case Op::selp:
      case Op::slct:
      case Op::bfe:
      case Op::prmt:
      case Op::madc: need(4); break;
      case Op::bfi:
      case Op::shf:
      case Op::lop3: need(4); break;
      case Op::mov:
      case Op::cvt:
      case Op::abs:
      case Op::neg:
      case Op::not_:
      case Op::cnot:
      case Op::popc:
      case Op::clz:
      case Op::brev:
      case Op::bfind:
      case Op::rcp:
      case Op::sqrt:
      case Op::rsqrt:
      case Op::sin:
      case Op::cos:
      case Op::lg2:
      case Op::ex2:
      case Op::tanh:
      case Op::cvta:
      case Op::testp: need(2); break;
      case Op::setp: need(3); break;
      case Op::ld:
      case Op::ldu:
        need(2);
        if (inst.ops[1].kind != Operand::Kind::addr) fail_at(line, "ld needs an address");
        break;
      case Op::st:
        need(2);
        if (inst.ops[0].kind != Operand::Kind::addr) fail_at(line, "st needs an address");
        break;
      case Op::bra: need(1); break;
      // warp collectives: the member mask is always the last operand (found by fuzzing)
      case Op::shfl: need(5); break;
      case Op::vote:
      case Op::match:
      case Op::redux: need(3); break;
      case Op::elect: need(2); break;
      case Op::bar_warp_sync:
      case Op::activemask: need(1); break;
      default: break;
    }
    if ((inst.op == Op::add || inst.op == Op::sub || inst.op == Op::mul) &&
        inst.type == Type::pred) {
      fail_at(line, "arithmetic on .pred is not allowed");
    }
  }

  void finish() {
    // Built-ins for extern functions.
    for (Function& f : p_->functions) {
      if (f.defined) continue;
      if (f.name == "vprintf")
        f.builtin = Builtin::vprintf;
      else if (f.name == "__assertfail")
        f.builtin = Builtin::assertfail;
      else if (f.name == "malloc")
        f.builtin = Builtin::malloc;
      else if (f.name == "free")
        f.builtin = Builtin::free;
    }
    // What each function may reach: the first unsupported instruction, an unresolved call.
    const std::size_t n = p_->functions.size();
    std::vector<std::vector<std::uint32_t>> callees(n);
    for (std::uint32_t fi = 0; fi < n; ++fi) {
      Function& f = p_->functions[fi];
      if (!f.defined) {
        if (f.builtin == Builtin::none) f.unresolved = fi;
        continue;
      }
      for (std::uint32_t pc = f.begin; pc < f.end; ++pc) {
        const Inst& in = p_->code[pc];
        if (in.op == Op::unsupported && f.unsupported == UINT32_MAX) f.unsupported = pc;
        if (in.op == Op::call && in.ops[0].kind == Operand::Kind::sym) {
          callees[fi].push_back(static_cast<std::uint32_t>(in.ops[0].sym));
        }
        for (const Operand& o : in.ops) {
          if (o.kind == Operand::Kind::sym && o.sym_kind == SymKind::function &&
              in.op != Op::call) {
            callees[fi].push_back(static_cast<std::uint32_t>(o.sym));  // address taken
          }
        }
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (std::uint32_t fi = 0; fi < n; ++fi) {
        Function& f = p_->functions[fi];
        for (std::uint32_t c : callees[fi]) {
          const Function& g = p_->functions[c];
          if (f.unsupported == UINT32_MAX && g.unsupported != UINT32_MAX) {
            f.unsupported = g.unsupported;
            changed = true;
          }
          if (f.unresolved == UINT32_MAX && g.unresolved != UINT32_MAX) {
            f.unresolved = g.unresolved;
            changed = true;
          }
        }
      }
    }
  }

  std::vector<Tok> t_;
  std::size_t i_ = 0;
  std::shared_ptr<Program> p_;
  std::unordered_map<std::string, FuncInfo> funcs_;
  std::unordered_map<std::string, Operand> module_syms_;
  std::unordered_map<std::string, std::uint32_t> global_index_;
  std::vector<std::pair<std::uint32_t, std::size_t>> bodies_;
  std::vector<Init> inits_;
  std::size_t shared_end_ = 0;

  // per function
  FuncInfo* fn_ = nullptr;
  std::vector<Scope> scopes_;
  std::uint32_t regs_ = 0;
  std::vector<Type> reg_types_;  // of each register slot of the function
  std::size_t local_ = 0;
  std::size_t params_ = 0;
  std::unordered_map<std::string, std::uint32_t> labels_;
  struct Fixup {
    std::uint32_t pc;
    std::string label;
    int line;
    int operand;
  };
  std::vector<Fixup> fixups_;
  std::unordered_map<std::string, std::uint32_t> tables_;
  struct TableFixup {
    std::uint32_t table;
    int line;
    std::vector<std::string> names;
  };
  std::vector<TableFixup> table_fixups_;
};

}  // namespace

const Function* Program::entry(std::string_view name) const noexcept {
  for (const Function& f : functions) {
    if (f.entry && f.defined && f.name == name) return &f;
  }
  return nullptr;
}

std::shared_ptr<const Program> parse_program(std::string_view text, std::string& error) {
  try {
    Parser parser(tokenize(text));
    return parser.run();
  } catch (const ParseError& e) {
    error = "line " + std::to_string(e.line) + ": " + e.what;
    return nullptr;
  }
}

}  // namespace swcu::ptx
