// The parser of PTX text (parse_program(), program.hpp), shared by its files and not part of
// the interpreter's interface. Two passes over the tokens: the first declares every function
// and module variable (so calls and addresses may name what is defined later), the second
// decodes bodies. Module level: parse_module.cpp; function bodies and their declarations:
// parse_function.cpp; instructions: parse_instruction.cpp, asynchronous copies and mbarriers:
// parse_async.cpp; operands: parse_operand.cpp; the ISA's structural checks: parse_checks.cpp;
// warp-level matrix instructions: parse_matrix.cpp.
// Errors are thrown as ParseError with the PTX line.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ptx/parse_tokens.hpp"
#include "ptx/program.hpp"

namespace swcu::ptx {
struct Fragment;
}

namespace swcu::ptx::detail {

/// Registers, variables and labels declared in one `{ }` block of a function (a label is
/// visible in its block and the blocks inside it, as ptxas scopes it: inline asm that defines the
/// same label in each of its `{ }` blocks is valid PTX).
struct Scope {
  std::unordered_map<std::string, std::uint32_t> regs;
  std::unordered_map<std::string, Operand> syms;          // local/shared/param variables
  std::unordered_map<std::string, std::uint32_t> labels;  // label -> pc
};

/// A function's index and its formal parameters' and return values' names.
struct FuncInfo {
  std::uint32_t index;
  std::unordered_map<std::string, std::uint32_t> param_index;  // formal name -> index
  std::unordered_map<std::string, std::uint32_t> ret_index;
};

/// Parses one module's tokens into a Program.
class Parser {
 public:
  /// Takes the module's tokens (tokenize()).
  explicit Parser(std::vector<Tok> toks) : t_(std::move(toks)) {}

  /// Both passes; the decoded program, or a ParseError.
  std::shared_ptr<Program> run();

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

  // ---- pass 1 and module level (parse_module.cpp)
  void declare_pass();
  std::vector<std::pair<std::string, ParamDecl>> param_list();
  void declare_function(bool external);

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
  VarDecl variable_decl();
  void declare_variable(bool external);

  // ---- initializers (parse_module.cpp; after pass 1: may name any global or function)
  struct Init {
    std::uint32_t global;
    std::size_t at;
    Type type;
  };

  void read_initializers();

  // ---- pass 2 (parse_module.cpp)
  void body_pass();

  static constexpr std::uint64_t kDynamicShared = ~0ull;

  Operand resolve_symbol(std::string_view name, int line);
  Operand fix_shared(Operand o) const;
  // Built-ins for extern functions, and what each function may reach.
  void finish();

  // ---- function bodies (parse_function.cpp)
  void function_body(std::uint32_t index);
  // Statements up to the matching '}'.
  void block();
  void declare_regs();
  void declare_frame_variable();
  void statement();

  // ---- operands (parse_operand.cpp)
  std::optional<std::uint32_t> find_reg(std::string_view name) const;
  Operand operand(Type type, Inst& inst, int operand_index);

  // ---- instructions (parse_instruction.cpp)
  void modifiers(Inst& inst, const std::vector<std::string_view>& mods, int line);
  void instruction();
  // call[.uni] [(ret,...),] target, [(args...)] [, proto];
  // ops[0]: target (sym function or reg); ops[1]: vec of return symbols; ops[2]: vec of args.
  // st.async / red.async: their particular qualifiers (parse_instruction.cpp).
  void async_store(Inst& inst, std::string_view base, std::vector<std::string_view>& parts,
                   int line);
  void call_operands(Inst& inst, int line);
  // A valid instruction the interpreter does not run, named `name` (a launch that can reach it
  // fails); skips its operands.
  void unsupported_instruction(Inst& inst, std::string name);

  // ---- warp-level matrix instructions (parse_matrix.cpp)
  // Whether `base` is one: mma, wmma, ldmatrix, stmatrix, movmatrix, wgmma.
  static bool is_matrix_opcode(std::string_view base) {
    return base == "mma" || base == "wmma" || base == "ldmatrix" || base == "stmatrix" ||
           base == "movmatrix" || base == "wgmma";
  }
  // Decodes and checks one, from its modifiers `parts` to its ';'.
  void matrix_instruction(Inst& inst, std::string_view opcode, std::string_view base,
                          const std::vector<std::string_view>& parts, int line);
  // Fails unless `o` is `fr.regs` registers of the fragment's container width.
  void matrix_vector(const Operand& o, const Fragment& fr, std::string_view opcode,
                     const char* what, int line) const;

  // ---- asynchronous copies, mbarriers, setmaxnreg (parse_async.cpp)
  // Decodes a cp.*, mbarrier.* or setmaxnreg instruction and appends it: true; false (nothing
  // read) for a form the interpreter does not run, which the caller records as unsupported.
  bool async_instruction(Inst& inst, std::string_view opcode, std::string_view base,
                         const std::vector<std::string_view>& parts, int line);
  // cp.reduce.async.bulk{.tensor}, as async_instruction; `parts` are its modifiers.
  bool bulk_reduction(Inst& inst, const std::vector<std::string_view>& parts, int line);
  // Drops fence's proxy qualifiers (.proxy.async, .mbarrier_init, .sync_restrict::...): the
  // fences the interpreter runs order every access of the thread, whatever its proxy.
  static void strip_fence_proxy(std::vector<std::string_view>& parts);

  // ---- textures and surfaces (parse_texture.cpp)
  // Decodes a tex, tld4, txq, suld, sust, sured or suq instruction in the unified mode and
  // appends it: true; false (nothing read) for a form the interpreter does not run (independent
  // mode, multisample geometries, f16 results, depth compare, offsets), left unsupported.
  bool texture_instruction(Inst& inst, std::string_view opcode, std::string_view base,
                           const std::vector<std::string_view>& parts, int line);

  // ---- structural checks (parse_checks.cpp)
  // Predicate registers only where the ISA takes a predicate, and a predicate where it needs one.
  void check_predicates(const Inst& inst, int line) const;
  // Checks the ISA forbids by structure.
  void check(const Inst& inst, int line);

  // cp.async.bulk.tensor's [tensorMap, {coords}] operand: operand() takes the coordinates
  // after the address while allowed, into tensor_coords_.
  bool allow_tensor_coords_ = false;
  Operand tensor_coords_;

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
    std::size_t depth;  // the innermost open block that may define the label (scopes_ size)
  };
  // At the end of a block: resolves the branches inside it to the labels it defines; the others
  // look in the enclosing block next.
  void resolve_labels();
  std::vector<Fixup> fixups_;
  std::unordered_map<std::string, std::uint32_t> tables_;
  struct TableFixup {
    std::uint32_t table;
    int line;
    std::vector<std::string> names;
  };
  std::vector<TableFixup> table_fixups_;
};

}  // namespace swcu::ptx::detail
