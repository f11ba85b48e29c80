// The parser at module level (parser.hpp): the two passes; .version, .target and the other
// module directives; functions' declarations with their parameter lists; module variables
// (.global, .const, .shared) and their initializers; symbol lookup; and, once every body is
// decoded, the built-ins for extern functions and what each function may reach.
#include <algorithm>
#include <cstring>
#include <functional>

#include "ptx/parser.hpp"

namespace swcu::ptx::detail {

std::shared_ptr<Program> Parser::run() {
  p_ = std::make_shared<Program>();
  // Pass 1: declarations.
  declare_pass();
  // Pass 2: bodies.
  i_ = 0;
  body_pass();
  finish();
  return p_;
}

// ---- pass 1
void Parser::declare_pass() {
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

std::vector<std::pair<std::string, ParamDecl>> Parser::param_list() {
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

void Parser::declare_function(bool external) {
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

// `.space [.align N] [.vN] .type name[dims] [= init];` with the cursor at the space.
Parser::VarDecl Parser::variable_decl() {
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

void Parser::declare_variable(bool external) {
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
      p_->dynamic_shared_align = std::max<std::size_t>(p_->dynamic_shared_align, v.align);
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

void Parser::read_initializers() {
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
void Parser::body_pass() {
  read_initializers();
  p_->static_shared = shared_end_;
  const std::size_t dyn_align = p_->dynamic_shared_align;
  p_->dynamic_shared_offset = (shared_end_ + dyn_align - 1) / dyn_align * dyn_align;
  for (const auto& [index, at] : bodies_) {
    i_ = at;
    function_body(index);
  }
}

Operand Parser::resolve_symbol(std::string_view name, int line) {
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

Operand Parser::fix_shared(Operand o) const {
  if (o.sym_kind == SymKind::shared && o.sym == kDynamicShared) o.sym = p_->dynamic_shared_offset;
  return o;
}

void Parser::finish() {
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
    else if (f.name == "cudaGraphSetConditional")  // cuda_device_runtime_api.h
      f.builtin = Builtin::set_conditional;
    else if (f.name == "cudaGraphLaunch")  // the device runtime's (device graph launch)
      f.builtin = Builtin::graph_launch;
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
        if (o.kind == Operand::Kind::sym && o.sym_kind == SymKind::function && in.op != Op::call) {
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

}  // namespace swcu::ptx::detail

namespace swcu::ptx {

const Function* Program::entry(std::string_view name) const noexcept {
  for (const Function& f : functions) {
    if (f.entry && f.defined && f.name == name) return &f;
  }
  return nullptr;
}

std::shared_ptr<const Program> parse_program(std::string_view text, std::string& error) {
  try {
    detail::Parser parser(detail::tokenize(text));
    return parser.run();
  } catch (const detail::ParseError& e) {
    error = "line " + std::to_string(e.line) + ": " + e.what;
    return nullptr;
  }
}

}  // namespace swcu::ptx
