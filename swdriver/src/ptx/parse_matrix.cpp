// The warp-level matrix instructions (parser.hpp): mma, wmma.load/.mma/.store, ldmatrix,
// stmatrix and movmatrix decoded into a MatrixForm (program.hpp) and checked when the module
// loads against the PTX ISA 9.0's valid combinations of shape, layouts and types, and their
// operands against the fragment sizes (matrix.hpp). Valid forms the interpreter does not run
// (sub-byte and single-bit integers, fp8, block scaling, sparse mma, the sm_100 ldmatrix and
// stmatrix shapes, wgmma) load as unsupported instructions, which a launch refuses.
#include <charconv>
#include <string>

#include "ptx/matrix.hpp"
#include "ptx/parser.hpp"

namespace swcu::ptx::detail {
namespace {

bool parse_shape(std::string_view m, MatrixForm& f) {
  // .mMnN or .mMnNkK
  if (m.size() < 5 || m[0] != '.' || m[1] != 'm') return false;
  unsigned v[3] = {0, 0, 0};
  const char keys[3] = {'m', 'n', 'k'};
  std::size_t at = 1;
  int count = 0;
  for (int d = 0; d < 3 && at < m.size(); ++d) {
    if (m[at] != keys[d]) return false;
    ++at;
    const auto [end, ec] = std::from_chars(m.data() + at, m.data() + m.size(), v[d]);
    if (ec != std::errc{} || end == m.data() + at || v[d] > 255) return false;
    at = static_cast<std::size_t>(end - m.data());
    ++count;
  }
  if (at != m.size() || count < 2) return false;
  f.m = static_cast<std::uint8_t>(v[0]);
  f.n = static_cast<std::uint8_t>(v[1]);
  f.k = static_cast<std::uint8_t>(v[2]);
  return true;
}

bool shape_is(const MatrixForm& f, unsigned m, unsigned n, unsigned k) {
  return f.m == m && f.n == n && f.k == k;
}

bool int8(Type t) { return t == Type::s8 || t == Type::u8; }

// Modifiers of valid PTX that name forms the interpreter does not run.
bool unsupported_modifier(std::string_view m) {
  return m == ".s4" || m == ".u4" || m == ".b1" || m == ".xor" || m == ".and" || m == ".popc" ||
         m == ".e4m3" || m == ".e5m2" || m == ".e3m2" || m == ".e2m3" || m == ".e2m1" ||
         m == ".ue8m0" || m == ".ue4m3" || m.starts_with(".kind::") || m == ".block_scale" ||
         m.starts_with(".scale_vec") || m == ".sp" || m.starts_with(".sp::") || m == ".b8" ||
         m == ".b8x16" || m == ".b6x16_p32" || m == ".b4x16_p64";
}

// Why a decoded mma form is not one of the ISA's, or empty.
std::string check_mma(const MatrixForm& f) {
  const Type a = f.atype, b = f.btype, c = f.ctype, d = f.dtype;
  const bool rowcol = f.a_row && !f.b_row;
  const bool f16 = a == Type::f16 && b == Type::f16;
  const bool f16acc = (c == Type::f16 || c == Type::f32) && (d == Type::f16 || d == Type::f32);
  const bool f32acc = c == Type::f32 && d == Type::f32;
  const bool f64 = a == Type::f64 && b == Type::f64 && c == Type::f64 && d == Type::f64;
  if (f.satfinite && !int8(a)) return ".satfinite is only for integer mma";
  if (f.round != Round::rn && !f64) return "a rounding modifier is only for .f64 mma";
  if (shape_is(f, 8, 8, 4)) {
    if (f16) {
      if (!f16acc) return "m8n8k4 with .f16 takes .f16 or .f32 accumulators";
      if (c == Type::f32 && d == Type::f16)
        return "m8n8k4: when .ctype is .f32, .dtype must be .f32";
      return {};
    }
    if (f64) return rowcol ? std::string{} : "m8n8k4 with .f64 needs .row.col";
    return "m8n8k4 takes .f16 or .f64 multiplicands";
  }
  if (!rowcol) return "this shape needs .row.col";
  if (shape_is(f, 16, 8, 8) || shape_is(f, 16, 8, 16)) {
    if (f16) {
      if (!f16acc || c != d) return ".dtype and .ctype must be the same, .f16 or .f32";
      return {};
    }
    if (a == Type::bf16 && b == Type::bf16) return f32acc ? "" : ".bf16 mma accumulates in .f32";
    if (f64) return {};
    if (shape_is(f, 16, 8, 8) && a == Type::tf32 && b == Type::tf32) {
      return f32acc ? "" : ".tf32 mma accumulates in .f32";
    }
  }
  if (shape_is(f, 16, 8, 4)) {
    if (a == Type::tf32 && b == Type::tf32) return f32acc ? "" : ".tf32 mma accumulates in .f32";
    if (f64) return {};
  }
  if (shape_is(f, 8, 8, 16) || shape_is(f, 16, 8, 16) || shape_is(f, 16, 8, 32)) {
    if (int8(a) && int8(b)) {
      return c == Type::s32 && d == Type::s32 ? "" : "integer mma accumulates in .s32";
    }
  }
  return "not a valid combination of shape and types";
}

// Why a decoded wmma form is not one of the ISA's, or empty.
std::string check_wmma(const MatrixForm& f) {
  const bool big = shape_is(f, 16, 16, 16) || shape_is(f, 32, 8, 16) || shape_is(f, 8, 32, 16);
  const bool tf32 = shape_is(f, 16, 16, 8);
  const bool f64 = shape_is(f, 8, 8, 4);
  if (!big && !tf32 && !f64) return "not a wmma shape";
  if (f.kind == MatrixForm::Kind::wmma_mma) {
    const Type a = f.atype, b = f.btype, c = f.ctype, d = f.dtype;
    if (f.satfinite && !int8(a)) return ".satfinite is only for integer wmma.mma";
    if (f.round != Round::rn && a != Type::f64) return "a rounding modifier is only for .f64";
    if (big && a == Type::f16 && b == Type::f16 && (c == Type::f16 || c == Type::f32) &&
        (d == Type::f16 || d == Type::f32)) {
      return {};
    }
    if (big && a == Type::bf16 && b == Type::bf16 && c == Type::f32 && d == Type::f32) return {};
    if (big && int8(a) && a == b && c == Type::s32 && d == Type::s32) return {};
    if (tf32 && a == Type::tf32 && b == Type::tf32 && c == Type::f32 && d == Type::f32) return {};
    if (f64 && a == Type::f64 && b == Type::f64 && c == Type::f64 && d == Type::f64) return {};
    return "not a valid combination of shape and types";
  }
  const Type t = f.matrix == 'a'   ? f.atype
                 : f.matrix == 'b' ? f.btype
                 : f.matrix == 'c' ? f.ctype
                                   : f.dtype;
  const bool multiplicand = f.matrix == 'a' || f.matrix == 'b';
  if (multiplicand) {
    if (big && (t == Type::f16 || t == Type::bf16 || int8(t))) return {};
    if (tf32 && t == Type::tf32) return {};
  } else {
    if (big && (t == Type::f16 || t == Type::f32 || t == Type::s32)) return {};
    if (tf32 && t == Type::f32) return {};
  }
  if (f64 && t == Type::f64) return {};
  return "not a valid combination of shape, matrix and type";
}

const char* role_name(MatrixRole r) {
  switch (r) {
    case MatrixRole::a: return "a";
    case MatrixRole::b: return "b";
    case MatrixRole::c: return "c";
    case MatrixRole::d: return "d";
  }
  return "?";
}

}  // namespace

void Parser::unsupported_instruction(Inst& inst, std::string name) {
  inst.op = Op::unsupported;
  inst.name = static_cast<std::uint32_t>(p_->names.size());
  p_->names.push_back(std::move(name));
  skip_to_semicolon();
  p_->code.push_back(inst);
}

// A braced list of exactly `fr.regs` registers of the fragment's container width (one register
// without braces when the fragment has one).
void Parser::matrix_vector(const Operand& o, const Fragment& fr, std::string_view opcode,
                           const char* what, int line) const {
  const std::string where = std::string(opcode) + ": operand " + what;
  const unsigned width = fr.bits == 64 ? 8 : 4;
  const auto check_reg = [&](std::uint32_t r) {
    if (r == UINT32_MAX) fail_at(line, where + " may not hold '_'");
    const Type t = reg_types_[r];
    if (t == Type::pred || type_size(t) != width) {
      fail_at(line, where + " needs " + std::to_string(width * 8) + "-bit registers");
    }
  };
  if (o.kind == Operand::Kind::reg && fr.regs == 1) {
    check_reg(o.reg);
    return;
  }
  if (o.kind != Operand::Kind::vec) {
    fail_at(line, where + " must be a vector of " + std::to_string(fr.regs) + " registers");
  }
  if (o.count != fr.regs) {
    fail_at(line, where + " must be a vector of " + std::to_string(fr.regs) + " registers, not " +
                      std::to_string(o.count));
  }
  for (unsigned e = 0; e < o.count; ++e) check_reg(p_->vec_regs[o.reg + e]);
}

void Parser::matrix_instruction(Inst& inst, std::string_view opcode, std::string_view base,
                                const std::vector<std::string_view>& parts, int line) {
  if (base == "wgmma") {
    unsupported_instruction(inst, std::string(opcode) +
                                      " (sm_90a warpgroup MMA; the software driver runs mma.sync "
                                      "and wmma, not wgmma)");
    return;
  }
  MatrixForm f;
  const std::vector<std::string_view>& rest = parts;
  std::size_t pos = 0;
  if (base == "mma") {
    f.kind = MatrixForm::Kind::mma;
  } else if (base == "wmma") {
    const std::string_view what = rest.empty() ? std::string_view{} : rest[0];
    if (what == ".load" || what == ".store") {
      f.kind = what == ".load" ? MatrixForm::Kind::wmma_load : MatrixForm::Kind::wmma_store;
      const std::string_view mat = rest.size() > 1 ? rest[1] : std::string_view{};
      const bool ok = what == ".load" ? (mat == ".a" || mat == ".b" || mat == ".c") : mat == ".d";
      if (!ok) fail_at(line, std::string(opcode) + ": expected .a, .b or .c (load) or .d (store)");
      f.matrix = mat[1];
      pos = 2;
    } else if (what == ".mma") {
      f.kind = MatrixForm::Kind::wmma_mma;
      pos = 1;
    } else {
      fail_at(line, std::string(opcode) + ": expected wmma.load, wmma.mma or wmma.store");
    }
  } else if (base == "ldmatrix" || base == "stmatrix") {
    f.kind = base == "ldmatrix" ? MatrixForm::Kind::ldmatrix : MatrixForm::Kind::stmatrix;
    f.num = 0;  // .x1, .x2 or .x4 is required
  } else {
    f.kind = MatrixForm::Kind::movmatrix;
  }
  const bool wmma_mem =
      f.kind == MatrixForm::Kind::wmma_load || f.kind == MatrixForm::Kind::wmma_store;
  const bool moves = f.kind == MatrixForm::Kind::ldmatrix || f.kind == MatrixForm::Kind::stmatrix ||
                     f.kind == MatrixForm::Kind::movmatrix;
  bool sync = false, shape = false, unsupported = false;
  std::vector<bool> layouts;
  std::vector<Type> types;
  for (; pos < rest.size(); ++pos) {
    const std::string_view m = rest[pos];
    if (m == ".sync") {
      sync = true;
    } else if (m == ".aligned") {
    } else if (m == ".row" || m == ".col") {
      layouts.push_back(m == ".row");
    } else if (!shape && parse_shape(m, f)) {
      shape = true;
    } else if (m == ".satfinite" && !moves) {
      f.satfinite = true;
    } else if ((m == ".rn" || m == ".rz" || m == ".rm" || m == ".rp") && !moves) {
      f.round = m == ".rn"   ? Round::rn
                : m == ".rz" ? Round::rz
                : m == ".rm" ? Round::rm
                             : Round::rp;
    } else if ((m == ".x1" || m == ".x2" || m == ".x4") && moves) {
      f.num = static_cast<std::uint8_t>(m[2] - '0');
    } else if (m == ".trans" && moves) {
      f.trans = true;
    } else if (auto s = space_of(m); s && (wmma_mem || moves)) {
      if (*s != Space::global && *s != Space::shared) {
        fail_at(line, std::string(opcode) + ": only .global, .shared or generic addresses");
      }
      if (*s == Space::global && moves) fail_at(line, std::string(opcode) + " needs .shared");
      inst.space = *s;
    } else if (unsupported_modifier(m)) {
      unsupported = true;
    } else if (auto t = type_of(m)) {
      types.push_back(*t);
    } else {
      fail_at(line, "unknown modifier " + std::string(m) + " on " + std::string(base));
    }
  }
  const auto bad = [&](const std::string& why) {
    fail_at(line, std::string(opcode) + ": " + why + " (PTX ISA, " + std::string(base) + ")");
  };
  if (!sync) bad("needs .sync");
  if (!shape) bad("needs a shape");
  if (unsupported) {
    unsupported_instruction(inst, std::string(opcode));
    return;
  }
  if (moves) {
    const bool m8n8 = f.m == 8 && f.n == 8 && f.k == 0;
    if (!m8n8) {
      // the sm_100 shapes .m16n16, .m8n16, .m16n8: valid, not run
      if (f.k == 0 && (f.m == 16 || f.n == 16)) {
        unsupported_instruction(inst, std::string(opcode));
        return;
      }
      bad("the shape must be .m8n8");
    }
    if (types.size() != 1 || types[0] != Type::b16) bad("the type must be .b16");
    if (f.kind == MatrixForm::Kind::movmatrix && !f.trans) bad("movmatrix needs .trans");
    if (f.kind != MatrixForm::Kind::movmatrix && f.num == 0) bad("needs .x1, .x2 or .x4");
    if (!layouts.empty()) bad("takes no layout");
    f.atype = Type::b16;
  } else if (f.kind == MatrixForm::Kind::mma || f.kind == MatrixForm::Kind::wmma_mma) {
    if (layouts.size() != 2) bad("needs .alayout and .blayout (.row or .col)");
    f.a_row = layouts[0];
    f.b_row = layouts[1];
    if (types.size() == 4) {
      f.dtype = types[0];
      f.atype = types[1];
      f.btype = types[2];
      f.ctype = types[3];
    } else if (types.size() == 2) {  // .dtype.ctype: .f16 multiplicands
      f.dtype = types[0];
      f.ctype = types[1];
      f.atype = f.btype = Type::f16;
    } else {
      bad("needs .dtype.atype.btype.ctype");
    }
    const std::string why = f.kind == MatrixForm::Kind::mma ? check_mma(f) : check_wmma(f);
    if (!why.empty()) bad(why);
  } else {
    if (layouts.size() != 1) bad("needs one layout, .row or .col");
    f.row = layouts[0];
    if (types.size() != 1) bad("needs one element type");
    Type& t = f.matrix == 'a'   ? f.atype
              : f.matrix == 'b' ? f.btype
              : f.matrix == 'c' ? f.ctype
                                : f.dtype;
    t = types[0];
    const std::string why = check_wmma(f);
    if (!why.empty()) bad(why);
  }
  inst.op = Op::matrix;
  // Operands.
  int k = 0;
  while (!at(";")) {
    if (k >= 4) fail_at(line, std::string(opcode) + ": too many operands");
    inst.ops[k] = operand(Type::u32, inst, k);
    ++k;
    if (!accept(",")) break;
  }
  inst.nops = static_cast<std::uint8_t>(k);
  expect(";");
  const auto need = [&](int lo, int hi) {
    if (k < lo || k > hi) {
      fail_at(line, std::string(opcode) + " takes " + std::to_string(lo) +
                        (lo == hi ? "" : " or " + std::to_string(hi)) + " operands, not " +
                        std::to_string(k));
    }
  };
  const auto need_addr = [&](int index) {
    if (inst.ops[index].kind != Operand::Kind::addr) {
      fail_at(line, std::string(opcode) + ": operand " + std::to_string(index + 1) +
                        " must be an address [p]");
    }
  };
  const auto need_value = [&](int index) {
    const Operand& o = inst.ops[index];
    if (o.kind == Operand::Kind::imm) return;
    if (o.kind != Operand::Kind::reg || reg_types_[o.reg] == Type::pred ||
        type_size(reg_types_[o.reg]) != 4) {
      fail_at(line, std::string(opcode) + ": operand " + std::to_string(index + 1) +
                        " must be a 32-bit register or a number");
    }
  };
  Fragment word;  // one 32-bit register per lane and matrix
  word.bits = 32;
  word.regs = 1;
  switch (f.kind) {
    case MatrixForm::Kind::mma:
    case MatrixForm::Kind::wmma_mma: {
      need(4, 4);
      const MatrixRole roles[4] = {MatrixRole::d, MatrixRole::a, MatrixRole::b, MatrixRole::c};
      for (int index = 0; index < 4; ++index) {
        matrix_vector(inst.ops[index], fragment(f, roles[index]), opcode, role_name(roles[index]),
                      line);
      }
      break;
    }
    case MatrixForm::Kind::wmma_load:
      need(2, 3);
      matrix_vector(inst.ops[0], fragment(f, MatrixRole::a), opcode, "r", line);
      need_addr(1);
      if (k == 3) need_value(2);
      break;
    case MatrixForm::Kind::wmma_store:
      need(2, 3);
      need_addr(0);
      matrix_vector(inst.ops[1], fragment(f, MatrixRole::d), opcode, "r", line);
      if (k == 3) need_value(2);
      break;
    case MatrixForm::Kind::ldmatrix:
      need(2, 2);
      word.regs = f.num;
      matrix_vector(inst.ops[0], word, opcode, "r", line);
      need_addr(1);
      break;
    case MatrixForm::Kind::stmatrix:
      need(2, 2);
      need_addr(0);
      word.regs = f.num;
      matrix_vector(inst.ops[1], word, opcode, "r", line);
      break;
    case MatrixForm::Kind::movmatrix:
      need(2, 2);
      matrix_vector(inst.ops[0], word, opcode, "d", line);
      matrix_vector(inst.ops[1], word, opcode, "a", line);
      break;
  }
  std::size_t index = 0;
  while (index < p_->matrix_forms.size() && !(p_->matrix_forms[index] == f)) ++index;
  if (index == p_->matrix_forms.size()) {
    if (index > UINT16_MAX) fail_at(line, "too many different matrix instruction forms");
    p_->matrix_forms.push_back(f);
  }
  inst.form = static_cast<std::uint16_t>(index);
  p_->code.push_back(inst);
}

}  // namespace swcu::ptx::detail
