// Instruction operands (parser.hpp): registers, special registers (%tid.x, ...), immediates,
// addresses ([reg+imm], [symbol+reg]), braced vectors, sinks, labels, symbols and functions.
#include <string>

#include "ptx/parser.hpp"

namespace swcu::ptx::detail {
namespace {

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
    {"%current_graph_exec", SReg::current_graph_exec},
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

}  // namespace

std::optional<std::uint32_t> Parser::find_reg(std::string_view name) const {
  const std::string key(name);
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    if (auto it = s->regs.find(key); it != s->regs.end()) return it->second;
  }
  return std::nullopt;
}

Operand Parser::operand(Type type, Inst& inst, int operand_index) {
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
    if (allow_tensor_coords_ && accept(",")) {  // [tensorMap, {c0, ...}]
      if (!at("{")) fail_at(line, "the tensor coordinates must be a vector {c0, ...}");
      tensor_coords_ = operand(Type::s32, inst, operand_index);
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
      if (o.imm == 1 || o.imm == 2) p_->uses_grid_workspace = true;
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
    fixups_.push_back({static_cast<std::uint32_t>(p_->code.size()), std::string(name), line,
                       operand_index, scopes_.size()});
    return o;
  }
  o = resolve_symbol(name, line);
  o.kind = Operand::Kind::sym;
  if (accept("+")) o.imm = static_cast<std::int64_t>(number());
  return o;
}

}  // namespace swcu::ptx::detail
