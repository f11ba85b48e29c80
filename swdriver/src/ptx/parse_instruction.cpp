// Instructions (parser.hpp): the opcode table, the valid opcodes the interpreter does not run
// yet (kUnsupported), modifiers (types, rounding, comparisons, sub-operations, flags), guards,
// and operand lists, with call's own syntax; matrix instructions go to parse_matrix.cpp.
#include <algorithm>
#include <string>
#include <unordered_map>

#include "ptx/parser.hpp"

namespace swcu::ptx::detail {
namespace {

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
    {"mapa", Op::mapa},
    {"getctarank", Op::getctarank},
    {"discard", Op::prefetch},
    {"applypriority", Op::prefetch},
    {"createpolicy", Op::unsupported},
};

// Valid PTX opcodes the interpreter does not run yet: they load, and a launch that can reach
// one fails naming it.
constexpr std::string_view kUnsupported[] = {"tex",
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
                                             "clusterlaunchcontrol",
                                             "tcgen05",
                                             "istypep",
                                             "cvt.pack",
                                             "ld.global.nc.L2",
                                             "elect.sync",
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

}  // namespace

void Parser::modifiers(Inst& inst, const std::vector<std::string_view>& mods, int line) {
  std::vector<Type> types;
  for (std::string_view m : mods) {
    if (auto t = type_of(m)) {
      types.push_back(*t);
      continue;
    }
    if (auto s = space_of(m)) {
      inst.space = *s;
      if (m == ".shared::cluster") inst.flags |= kClusterSpace;
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
    else if (m == ".relaxed")
      inst.flags |= kRelaxed;
    else if (m == ".acquire")
      inst.flags |= kAcquire;
    else if (m == ".release")
      inst.flags |= kRelease;
    else if (m == ".acq_rel")
      inst.flags |= kAcquire | kRelease;
    else if (m == ".sc")
      inst.flags |= kSeqCst;
    else if (m == ".aligned")
      inst.flags |= kAligned;
    else if (m == ".v2")
      inst.vec = 2;
    else if (m == ".v4")
      inst.vec = 4;
    else if (m == ".v8")
      inst.vec = 8;
    else if (m == ".sync" || m == ".nc" || m == ".ca" || m == ".cg" || m == ".cs" || m == ".lu" ||
             m == ".cv" || m == ".wb" || m == ".wt" || m == ".weak" || m == ".cta" || m == ".gpu" ||
             m == ".sys" || m == ".cluster" || m == ".gl" || m == ".L1" || m == ".L2" ||
             m == ".mmio" || m == ".arrive" || m == ".red" || m == ".warp" || m == ".unified" ||
             m == ".level::eviction_priority" || m.starts_with(".L1::") || m.starts_with(".L2::") ||
             m == ".shared::cluster" || m == ".b4e" || m == ".op_restrict" || m == ".sem" ||
             m == ".proxy" || m == ".alias" || m == ".mode" || m == ".uniform" ||
             m == ".collector::a" || m == ".ecl" || m == ".ecr" || m == ".launch_dependents" ||
             m == ".wait" || m == ".s" || m == ".mask" || m == ".bf16" || m == ".bf16x2")
      ;  // cache and scope qualifiers: every scope is implemented as the widest (.sys)
    else
      fail_at(line, "unknown modifier " + std::string(m) + " on this instruction");
  }
  if (!types.empty()) inst.type = types[0];
  if (types.size() > 1) inst.type2 = types[1];
  if (types.size() > 2) inst.type3 = types[2];
}

void Parser::instruction() {
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
  if (base == "cp" || base == "mbarrier" || base == "setmaxnreg") {
    if (async_instruction(inst, opcode, base, parts, line)) return;  // decoded (parse_async.cpp)
  }
  if (base == "tex" || base == "tld4" || base == "txq" || base == "suld" || base == "sust" ||
      base == "sured" || base == "suq") {
    if (texture_instruction(inst, opcode, base, parts, line)) return;  // parse_texture.cpp
  }
  if (base == "fence") strip_fence_proxy(parts);
  // prefetch{.space}.tensormap [a]: a hint, like every prefetch (tensor maps stay in memory)
  if (base == "prefetch") std::erase(parts, std::string_view(".tensormap"));
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
  if (is_matrix_opcode(base)) {
    matrix_instruction(inst, opcode, base, parts, line);
    return;
  }
  bool unsupported = found == nullptr || found->op == Op::unsupported;
  if (!unsupported) inst.op = found->op;
  if ((base == "st" || base == "red") &&
      std::find(parts.begin(), parts.end(), ".async") != parts.end()) {
    async_store(inst, base, parts, line);
  }
  // Forms that stay unsupported for now.
  if (!unsupported) {
    const auto has = [&](std::string_view m) {
      return std::find(parts.begin(), parts.end(), m) != parts.end();
    };
    if ((base == "cvt" && has(".pack")) || (base == "bar" && has(".cluster")) ||
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
    unsupported_instruction(inst, std::string(opcode));
    return;
  }
  if (base == "barrier" && std::find(parts.begin(), parts.end(), ".cluster") != parts.end()) {
    // barrier.cluster.arrive[.release|.relaxed][.aligned], barrier.cluster.wait[.acquire][.aligned]
    const bool arrive = std::find(parts.begin(), parts.end(), ".arrive") != parts.end();
    const bool wait = std::find(parts.begin(), parts.end(), ".wait") != parts.end();
    if (arrive == wait) fail_at(line, "barrier.cluster needs .arrive or .wait");
    inst.op = arrive ? Op::cluster_arrive : Op::cluster_wait;
    std::vector<std::string_view> rest;
    for (std::string_view m : parts) {
      if (m != ".cluster" && m != ".arrive" && m != ".wait") rest.push_back(m);
    }
    parts = std::move(rest);
  } else if (base == "bar" || base == "barrier") {
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
  p_->code.push_back(inst);
}

// st.async{.weak}{.cluster}.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type [a], b,
// [mbar] red.async{.relaxed}{.cluster}.shared::cluster.mbarrier::complete_tx::bytes.op.type [a], b,
// [mbar] (PTX ISA 8.1, sm_90): a store or reduction into the shared memory of a CTA of the cluster
// that completes its bytes on an mbarrier of that CTA. The qualifiers particular to it are taken
// here; the space, vector, operation and type are those of st and red.
void Parser::async_store(Inst& inst, std::string_view base, std::vector<std::string_view>& parts,
                         int line) {
  const auto take = [&](std::string_view m) {
    const auto it = std::find(parts.begin(), parts.end(), m);
    if (it == parts.end()) return false;
    parts.erase(it);
    return true;
  };
  take(".async");
  if (!take(".mbarrier::complete_tx::bytes")) {
    fail_at(line, std::string(base) + ".async needs .mbarrier::complete_tx::bytes");
  }
  if (std::find(parts.begin(), parts.end(), ".shared::cluster") == parts.end()) {
    fail_at(line, std::string(base) + ".async needs .shared::cluster");
  }
  take(base == "st" ? ".weak" : ".relaxed");
  take(".cluster");
  inst.op = base == "st" ? Op::st_async : Op::red_async;
}

// call[.uni] [(ret,...),] target, [(args...)] [, proto];
// ops[0]: target (sym function or reg); ops[1]: vec of return symbols; ops[2]: vec of args.
void Parser::call_operands(Inst& inst, int line) {
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

}  // namespace swcu::ptx::detail
