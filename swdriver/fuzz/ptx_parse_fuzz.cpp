// libFuzzer target: arbitrary bytes as PTX text for the interpreter's parser,
// swcu::ptx::parse_program (swdriver/src/ptx/parse_module.cpp). It must return a program or nullptr
// with a one-line error, never crash, hang or allocate without bound. A program it returns is
// checked for what the interpreter (exec_*.cpp) relies on without checking: every register, label,
// vector, branch table, symbol, name and matrix form index in range. Built and run by scripts/fuzz
// (docs/software-driver.md, "Fuzzing").
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ptx/program.hpp"

namespace {

[[noreturn]] void broken(const char* what, std::size_t pc) {
  std::fprintf(stderr, "ptx_parse_fuzz: invariant broken at instruction %zu: %s\n", pc, what);
  std::abort();
}

void check_operand(const swcu::ptx::Program& p, const swcu::ptx::Function& f,
                   const swcu::ptx::Inst& in, const swcu::ptx::Operand& o, std::size_t pc) {
  using K = swcu::ptx::Operand::Kind;
  switch (o.kind) {
    case K::reg:
      if (o.reg >= f.regs) broken("register out of range", pc);
      break;
    case K::addr:
      if (o.has_reg && o.reg >= f.regs) broken("address register out of range", pc);
      break;
    case K::vec:
      if (std::size_t{o.reg} + o.count > p.vec_regs.size()) broken("vector out of range", pc);
      if (in.op != swcu::ptx::Op::call) {  // a call's lists hold parameter offsets
        for (std::size_t k = 0; k < o.count; ++k) {
          if (p.vec_regs[o.reg + k] >= f.regs) broken("vector register out of range", pc);
        }
      }
      break;
    case K::label:
      if (o.reg < f.begin || o.reg > f.end) broken("label outside its function", pc);
      break;
    case K::sym:
      if (o.sym_kind == swcu::ptx::SymKind::function && o.sym >= p.functions.size()) {
        broken("function index out of range", pc);
      }
      if (o.sym_kind == swcu::ptx::SymKind::global && o.sym >= p.globals.size()) {
        broken("global index out of range", pc);
      }
      break;
    default: break;
  }
}

void check(const swcu::ptx::Program& p) {
  for (const swcu::ptx::Function& f : p.functions) {
    if (!f.defined) continue;
    if (f.begin > f.end || f.end > p.code.size()) broken("function bounds", f.begin);
    for (std::size_t pc = f.begin; pc < f.end; ++pc) {
      const swcu::ptx::Inst& in = p.code[pc];
      if (in.nops > 6) broken("too many operands", pc);
      if (in.guarded && in.guard >= f.regs) broken("guard register out of range", pc);
      if (in.op == swcu::ptx::Op::unsupported && in.name >= p.names.size()) {
        broken("unsupported name out of range", pc);
      }
      if (in.op == swcu::ptx::Op::matrix && in.form >= p.matrix_forms.size()) {
        broken("matrix form out of range", pc);
      }
      for (std::size_t k = 0; k < in.nops; ++k) check_operand(p, f, in, in.ops[k], pc);
      check_operand(p, f, in, in.out2, pc);
    }
  }
  for (const auto& table : p.branch_tables) {
    for (std::uint32_t target : table) {
      if (target > p.code.size()) broken("branch table target out of range", target);
    }
  }
  for (const swcu::ptx::Global& g : p.globals) {
    if (g.init.size() > g.size) broken("initializer larger than its global", 0);
    for (const swcu::ptx::Reloc& r : g.relocs) {
      if (std::size_t{r.offset} + r.size > g.size) broken("relocation outside its global", 0);
      if (r.function ? r.target >= p.functions.size() : r.target >= p.globals.size()) {
        broken("relocation target out of range", 0);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text{reinterpret_cast<const char*>(data), size};
  std::string error;
  const auto program = swcu::ptx::parse_program(text, error);
  if (program == nullptr) {
    if (error.empty()) broken("nullptr without an error", 0);
    if (error.find('\n') != std::string::npos) broken("error of more than one line", 0);
    return 0;
  }
  check(*program);
  return 0;
}
