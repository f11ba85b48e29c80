// The parser inside a function body (parser.hpp): blocks and their scopes, .reg declarations,
// .local/.shared/.param variables of the frame, labels (scoped to their block) and branch tables,
// and the resolution of branch targets as each block ends.
#include <algorithm>
#include <string>

#include "ptx/parser.hpp"

namespace swcu::ptx::detail {

void Parser::function_body(std::uint32_t index) {
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
  resolve_labels();
  if (!fixups_.empty()) fail_at(fixups_.front().line, "undefined label " + fixups_.front().label);
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
void Parser::block() {
  while (!accept("}")) {
    if (peek().kind == Tok::K::end) fail("unterminated function body");
    statement();
  }
}

void Parser::declare_regs() {
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

void Parser::declare_frame_variable() {
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
      if (v.align > p_->dynamic_shared_align) {
        p_->dynamic_shared_align = v.align;
        p_->dynamic_shared_offset = (p_->static_shared + v.align - 1) / v.align * v.align;
        o.sym = p_->dynamic_shared_offset;
      }
    } else {
      // function-scope shared variables: placed after the module's (static part grows)
      std::size_t off = (p_->static_shared + v.align - 1) / v.align * v.align;
      o.sym = off;
      p_->static_shared = off + size;
      if (p_->static_shared > p_->dynamic_shared_offset) {
        const std::size_t a = p_->dynamic_shared_align;
        p_->dynamic_shared_offset = (p_->static_shared + a - 1) / a * a;
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

void Parser::statement() {
  const Tok& t = peek();
  if (t.text == "{") {
    next();
    scopes_.emplace_back();
    block();
    resolve_labels();
    scopes_.pop_back();
    return;
  }
  if (t.text == ".reg") return declare_regs();
  if (t.text == ".local" || t.text == ".shared" || t.text == ".param") {
    return declare_frame_variable();
  }
  if (t.text == ".loc" || t.text == ".file") return skip_line(t.line);
  if (t.text == ".pragma" || t.text == ".maxnreg" || t.text == ".maxntid" || t.text == ".reqntid" ||
      t.text == ".minnctapersm") {
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
    if (scopes_.back().labels.contains(label)) {
      fail_at(t.line, "label " + label + " is defined twice");
    }
    scopes_.back().labels[label] = static_cast<std::uint32_t>(p_->code.size());
    labels_[label] = static_cast<std::uint32_t>(p_->code.size());  // for branch tables
    return;
  }
  instruction();
}

void Parser::resolve_labels() {
  const std::size_t depth = scopes_.size();
  const auto& here = scopes_.back().labels;
  std::erase_if(fixups_, [&](Fixup& f) {
    if (f.depth < depth) return false;  // a branch outside this block
    const auto it = here.find(f.label);
    if (it == here.end()) {
      f.depth = depth - 1;  // defined further out, if anywhere
      return false;
    }
    p_->code[f.pc].ops[f.operand].reg = it->second;
    return true;
  });
}

}  // namespace swcu::ptx::detail
