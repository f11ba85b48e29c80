// The checks the PTX ISA makes by structure (parser.hpp), applied to each decoded instruction:
// a type where one is needed, a register destination, predicate registers exactly where a
// predicate is taken, enough operands (a malformed module fails to load instead of faulting).
#include <string>

#include "ptx/alu.hpp"
#include "ptx/parser.hpp"

namespace swcu::ptx::detail {

// Predicate registers only where the ISA takes a predicate, and a predicate where it needs one.
void Parser::check_predicates(const Inst& inst, int line) const {
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
void Parser::check(const Inst& inst, int line) {
  const bool typed = is_alu(inst.op) || inst.op == Op::mov || inst.op == Op::ld ||
                     inst.op == Op::ldu || inst.op == Op::st || inst.op == Op::atom ||
                     inst.op == Op::red || inst.op == Op::st_async || inst.op == Op::red_async ||
                     inst.op == Op::cvta || inst.op == Op::shfl || inst.op == Op::redux ||
                     inst.op == Op::match || inst.op == Op::isspacep;
  if (typed && inst.type == Type::none && inst.op != Op::isspacep) {
    fail_at(line, "the instruction needs a type (such as .b32)");
  }
  const bool writes = typed && inst.op != Op::st && inst.op != Op::red && inst.op != Op::st_async &&
                      inst.op != Op::red_async;
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
    case Op::st_async:
    case Op::red_async:
      need(3);
      if (inst.nops != 3) fail_at(line, "too many operands");
      if (inst.ops[0].kind != Operand::Kind::addr || inst.ops[2].kind != Operand::Kind::addr) {
        fail_at(line, "needs [address], value, [mbarrier]");
      }
      if (inst.op == Op::red_async && inst.sub == Sub::none) fail_at(line, "needs an operation");
      break;
    case Op::bra:
      need(1);
      if (inst.ops[0].kind != Operand::Kind::label) fail_at(line, "bra needs a label");
      break;
    case Op::brx:  // brx.idx index, table (found by fuzzing: an address in the table's place)
      need(2);
      if (inst.ops[1].kind != Operand::Kind::label) fail_at(line, "brx.idx needs a branch table");
      break;
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
  if ((inst.op == Op::add || inst.op == Op::sub || inst.op == Op::mul) && inst.type == Type::pred) {
    fail_at(line, "arithmetic on .pred is not allowed");
  }
}

}  // namespace swcu::ptx::detail
