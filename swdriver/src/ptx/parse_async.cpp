// Asynchronous copies, mbarrier objects and setmaxnreg (parser.hpp): cp.async and its groups,
// cp.async.mbarrier.arrive, cp.async.bulk (to shared memory completing through an mbarrier, to
// global memory in bulk groups, prefetch; to shared memory of other CTAs of the cluster, and
// multicast), every mbarrier.* instruction, setmaxnreg, and the proxy qualifiers of fence. Each
// form is checked here as the PTX ISA 9.0 writes it, so a malformed one fails to load with its
// line; the forms the interpreter does not run (gather and scatter tensor copies, byte masks)
// are left to the caller as unsupported. cp.reduce.async.bulk{.tensor} is read by
// bulk_reduction.
#include <algorithm>
#include <string>

#include "ptx/parser.hpp"

namespace swcu::ptx::detail {
namespace {

// The modifiers of one instruction, consumed as they are recognized.
class Mods {
 public:
  explicit Mods(const std::vector<std::string_view>& parts) : parts_(parts) {}
  /// Takes `m` if present (anywhere).
  bool take(std::string_view m) {
    const auto it = std::find(parts_.begin(), parts_.end(), m);
    if (it == parts_.end()) return false;
    parts_.erase(it);
    return true;
  }
  /// Takes the first of `ms` present; empty when none is.
  std::string_view take_any(std::initializer_list<std::string_view> ms) {
    for (std::string_view m : ms) {
      if (take(m)) return m;
    }
    return {};
  }
  bool has(std::string_view m) const {
    return std::find(parts_.begin(), parts_.end(), m) != parts_.end();
  }
  bool empty() const { return parts_.empty(); }
  std::string_view first() const { return parts_.front(); }

 private:
  std::vector<std::string_view> parts_;
};

}  // namespace

void Parser::strip_fence_proxy(std::vector<std::string_view>& parts) {
  // fence.proxy.{alias, async{.space}, async::generic, tensormap::generic}, fence.mbarrier_init,
  // .sync_restrict::space: every fence the interpreter runs orders all memory of the thread,
  // whatever the proxy, so these narrow nothing a plain fence does not already cover.
  std::erase_if(parts, [](std::string_view m) {
    return m == ".proxy" || m == ".alias" || m == ".async" || m == ".async::generic" ||
           m == ".tensormap::generic" || m == ".mbarrier_init" || m.starts_with(".sync_restrict::");
  });
}

bool Parser::async_instruction(Inst& inst, std::string_view opcode, std::string_view base,
                               const std::vector<std::string_view>& parts, int line) {
  Mods mods(parts);
  const std::string what(opcode);
  const auto bad = [&](const std::string& why) { fail_at(line, what + ": " + why); };
  const auto done_mods = [&] {
    if (!mods.empty()) bad("unknown modifier " + std::string(mods.first()));
  };
  // Operands up to ';', the k-th read as types[k] (for its immediates), at most types.size().
  const auto operands = [&](std::initializer_list<Type> types) {
    int k = 0;
    while (!at(";")) {
      if (k >= static_cast<int>(types.size())) bad("too many operands");
      inst.ops[k] = operand(types.begin()[k], inst, k);
      ++k;
      if (!accept(",")) break;
    }
    expect(";");
    inst.nops = static_cast<std::uint8_t>(k);
  };
  const auto need = [&](int n) {
    if (inst.nops < n) bad("too few operands");
  };
  const auto is_pred = [&](const Operand& o) {
    return o.kind == Operand::Kind::reg && reg_types_[o.reg] == Type::pred;
  };
  const auto is_value = [&](const Operand& o) {
    return (o.kind == Operand::Kind::reg && reg_types_[o.reg] != Type::pred) ||
           o.kind == Operand::Kind::imm;
  };
  const auto need_addr = [&](int k) {
    if (inst.ops[k].kind != Operand::Kind::addr)
      bad("operand " + std::to_string(k + 1) + " must be an address");
  };
  const auto need_value = [&](int k) {
    if (!is_value(inst.ops[k]))
      bad("operand " + std::to_string(k + 1) + " must be a register or a constant");
  };
  const auto need_imm = [&](int k) {
    if (inst.ops[k].kind != Operand::Kind::imm)
      bad("operand " + std::to_string(k + 1) + " must be a constant");
  };
  // An mbarrier operand in generic addressing that names a .shared variable is that variable.
  const auto mbarrier_space = [&](int k) {
    const Operand& o = inst.ops[k];
    if (inst.space == Space::generic && o.has_sym && o.sym_kind == SymKind::shared) {
      inst.space = Space::shared;
    }
  };
  const auto push = [&] {
    inst.name = 0;
    p_->code.push_back(inst);
    return true;
  };

  if (base == "setmaxnreg") {
    // setmaxnreg.{inc,dec}.sync.aligned.u32 imm-reg-count; (24..256, a multiple of 8)
    if (mods.take_any({".inc", ".dec"}).empty()) bad("needs .inc or .dec");
    if (!mods.take(".sync") || !mods.take(".aligned") || !mods.take(".u32")) {
      bad("needs .sync.aligned.u32");
    }
    done_mods();
    inst.op = Op::setmaxnreg;
    operands({Type::u32});
    need(1);
    need_imm(0);
    const std::int64_t n = inst.ops[0].imm;
    if (n < 24 || n > 256 || n % 8 != 0) {
      bad("register count " + std::to_string(n) + " is not a multiple of 8 in 24..256");
    }
    return push();
  }

  if (base == "mbarrier") {
    const std::string_view kind =
        mods.take_any({".init", ".inval", ".arrive_drop", ".arrive", ".expect_tx", ".complete_tx",
                       ".test_wait", ".try_wait", ".pending_count"});
    if (kind.empty()) bad("unknown mbarrier operation");
    const bool arrive = kind == ".arrive" || kind == ".arrive_drop";
    const bool wait = kind == ".test_wait" || kind == ".try_wait";
    if (arrive && mods.take(".expect_tx")) inst.mode |= kExpectTx;
    if (arrive && mods.take(".noComplete")) inst.mode |= kNoComplete;
    if (kind == ".arrive_drop") inst.mode |= kDrop;
    if (wait && mods.take(".parity")) inst.mode |= kParity;
    if (kind == ".try_wait") inst.mode |= kTryWait;
    const std::string_view sem = mods.take_any({".release", ".acquire", ".relaxed"});
    const std::string_view scope = mods.take_any({".cta", ".cluster"});
    const bool tx_only = kind == ".expect_tx" || kind == ".complete_tx";
    if (!sem.empty() && ((arrive && sem == ".acquire") || (wait && sem == ".release") ||
                         (tx_only && sem != ".relaxed") || (!arrive && !wait && !tx_only))) {
      bad("the memory order " + std::string(sem) + " is not valid here");
    }
    if (!scope.empty() && !tx_only && !arrive && !wait) {
      bad("the scope " + std::string(scope) + " is not valid here");
    }
    const std::string_view space = mods.take_any({".shared::cluster", ".shared::cta", ".shared"});
    const bool cluster = space == ".shared::cluster";
    if (cluster && (wait || kind == ".init" || kind == ".inval")) {
      bad(".shared::cluster is not valid here");
    }
    if (!space.empty()) inst.space = Space::shared;
    if (!mods.take(".b64")) bad("needs .b64");
    done_mods();
    if (kind == ".init" || kind == ".inval" || kind == ".expect_tx" || kind == ".complete_tx") {
      inst.op = kind == ".init"        ? Op::mbarrier_init
                : kind == ".inval"     ? Op::mbarrier_inval
                : kind == ".expect_tx" ? Op::mbarrier_expect_tx
                                       : Op::mbarrier_complete_tx;
      if (kind == ".inval") {
        operands({Type::b64});
        need(1);
      } else {
        operands({Type::b64, Type::u32});
        need(2);
        need_value(1);
      }
      need_addr(0);
      mbarrier_space(0);
      return push();
    }
    if (arrive) {
      // state|_, [addr]{, count}; .expect_tx: state|_, [addr], tx-count (count 1)
      inst.op = Op::mbarrier_arrive;
      operands({Type::b64, Type::b64, Type::u32});
      need(2);
      need_addr(1);
      const Operand& state = inst.ops[0];
      if (state.kind != Operand::Kind::sink &&
          !(state.kind == Operand::Kind::reg && !is_pred(state))) {
        bad("the state must be a .b64 register or _");
      }
      if (cluster && state.kind != Operand::Kind::sink) {
        bad("an arrive on a .shared::cluster mbarrier returns no state: write _");
      }
      if ((inst.mode & kNoComplete) && inst.nops < 3) bad(".noComplete needs a count");
      if ((inst.mode & kExpectTx) && inst.nops < 3) bad(".expect_tx needs a tx-count");
      if (inst.nops == 3) need_value(2);
      if (inst.mode & kExpectTx) {  // ops: state, addr, count 1, tx-count
        inst.ops[3] = inst.ops[2];
        inst.ops[2] = Operand{};
        inst.ops[2].kind = Operand::Kind::imm;
        inst.ops[2].imm = 1;
      } else if (inst.nops == 2) {
        inst.ops[2].kind = Operand::Kind::imm;
        inst.ops[2].imm = 1;
      }
      inst.nops = (inst.mode & kExpectTx) ? 4 : 3;
      mbarrier_space(1);
      return push();
    }
    if (wait) {
      // waitComplete, [addr], state | phaseParity {, suspendTimeHint (try_wait)}
      inst.op = Op::mbarrier_wait;
      operands({Type::pred, Type::b64, (inst.mode & kParity) ? Type::u32 : Type::b64, Type::u32});
      need(3);
      if (!is_pred(inst.ops[0])) bad("the destination must be a .pred register");
      need_addr(1);
      need_value(2);
      if (inst.nops == 4) {
        if (!(inst.mode & kTryWait)) bad("only try_wait takes a suspend-time hint");
        need_value(3);
      }
      mbarrier_space(1);
      return push();
    }
    // mbarrier.pending_count.b64 count, state;
    inst.op = Op::mbarrier_pending_count;
    operands({Type::u32, Type::b64});
    need(2);
    if (inst.ops[0].kind != Operand::Kind::reg || is_pred(inst.ops[0])) {
      bad("the destination must be a register");
    }
    need_value(1);
    return push();
  }

  // base == "cp"
  const bool reduce = mods.take(".reduce");
  if (!mods.take(".async")) return false;
  if (reduce && !mods.has(".bulk")) bad("cp.reduce.async needs .bulk");
  if (mods.take(".bulk")) {
    if (reduce) return bulk_reduction(inst, parts, line);
    if (mods.take(".tensor")) {
      // cp.async.bulk.tensor.Nd.{shared::cluster,shared::cta}.global{.tile,.im2col}
      //     .mbarrier::complete_tx::bytes{.multicast::cluster}{.L2::cache_hint}
      //     [dst], [tensorMap, {coords}], [mbar] {, {im2colOffsets}} {, ctaMask} {, cache-policy}
      // cp.async.bulk.tensor.Nd.global.shared::cta{.tile,.im2col_no_offs}.bulk_group
      //     {.L2::cache_hint} [tensorMap, {coords}], [src] {, cache-policy}
      // cp.async.bulk.prefetch.tensor.Nd.L2.global{.tile,.im2col}{.L2::cache_hint}
      //     [tensorMap, {coords}] {, {im2colOffsets}} {, cache-policy}
      // (PTX ISA 8.0, sm_90). The im2col modes are 3d..5d with one 16-bit offset per spatial
      // dimension (rank - 2). The gather/scatter and cta_group forms (sm_100) are not run.
      if (mods.has(".tile::gather4") || mods.has(".tile::scatter4") || mods.has(".cta_group::1") ||
          mods.has(".cta_group::2")) {
        return false;
      }
      if (mods.has(".im2col::w") || mods.has(".im2col::w::128")) {
        bad(".im2col::w and .im2col::w::128 need sm_100a or newer (PTX ISA 8.6); the software "
            "driver's device is sm_90");
      }
      const std::string_view dim = mods.take_any({".1d", ".2d", ".3d", ".4d", ".5d"});
      if (dim.empty()) bad("needs a dimension (.1d to .5d)");
      const unsigned rank = static_cast<unsigned>(dim[1] - '0');
      inst.vec = static_cast<std::uint8_t>(rank);
      const std::string_view load_mode = mods.take_any({".tile", ".im2col", ".im2col_no_offs"});
      const bool im2col = load_mode == ".im2col" || load_mode == ".im2col_no_offs";
      if (im2col && rank < 3) bad(std::string(load_mode) + " needs .3d, .4d or .5d");
      const bool hint = mods.take(".L2::cache_hint");
      const bool multicast = mods.take(".multicast::cluster");
      const bool prefetch = mods.take(".prefetch");
      std::string_view dst, src;
      if (prefetch) {
        if (!mods.take(".L2") || !mods.take(".global")) bad("needs .L2.global");
      } else {
        const std::string_view a = mods.take_any({".shared::cluster", ".shared::cta", ".global"});
        const std::string_view b = mods.take_any({".shared::cluster", ".shared::cta", ".global"});
        const auto pos = [&](std::string_view m) {
          return std::find(parts.begin(), parts.end(), m) - parts.begin();
        };
        dst = a;
        src = b;
        if (!a.empty() && !b.empty() && pos(b) < pos(a)) std::swap(dst, src);
      }
      const bool load = dst == ".shared::cluster" || dst == ".shared::cta";
      if (!prefetch && !(load && src == ".global") &&
          !(dst == ".global" && src == ".shared::cta")) {
        bad("no such copy direction");
      }
      if (load && !mods.take(".mbarrier::complete_tx::bytes")) {
        bad("a load needs .mbarrier::complete_tx::bytes");
      }
      if (dst == ".global" && !mods.take(".bulk_group")) bad("a store needs .bulk_group");
      if (multicast && dst != ".shared::cluster") {
        bad(".multicast::cluster copies to .shared::cluster");
      }
      // loads and prefetches take .im2col (with offsets), stores .im2col_no_offs
      if (load_mode == ".im2col_no_offs" && dst != ".global") {
        bad(".im2col_no_offs is for stores (.global.shared::cta); a load takes .im2col");
      }
      if (load_mode == ".im2col" && dst == ".global") {
        bad("a store takes .im2col_no_offs, not .im2col");
      }
      done_mods();
      inst.op = prefetch ? Op::prefetch : Op::cp_async_bulk_tensor;
      if (dst == ".global") inst.mode |= kBulkToGlobal;
      if (multicast) inst.flags |= kMulticast;
      if (im2col) inst.flags |= kIm2col;
      const bool offsets = load_mode == ".im2col";  // a load's or prefetch's {im2colOffsets}
      // The im2col offsets, operand k: a vector of rank - 2 16-bit registers, kept in out2.
      const auto take_offsets = [&](int k) {
        const Operand o = inst.ops[k];
        if (o.kind != Operand::Kind::vec || o.count != rank - 2) {
          bad(".im2col." + std::string(dim.substr(1)) + " needs " + std::to_string(rank - 2) +
              " im2col offsets: {o0" + (rank > 3 ? ", ..." : "") + "} (16-bit registers)");
        }
        for (unsigned i = 0; i < o.count; ++i) {
          const std::uint32_t r = p_->vec_regs[o.reg + i];
          const Type t = r == UINT32_MAX ? Type::none : reg_types_[r];
          if (t != Type::b16 && t != Type::u16 && t != Type::s16) {
            bad("the im2col offsets must be 16-bit registers");
          }
        }
        inst.out2 = o;
        for (int i = k; i + 1 < inst.nops; ++i) inst.ops[i] = inst.ops[i + 1];
        inst.ops[--inst.nops] = Operand{};
      };
      tensor_coords_ = Operand{};
      allow_tensor_coords_ = true;
      if (load) {
        const unsigned count = 3 + (offsets ? 1 : 0) + (multicast ? 1 : 0) + (hint ? 1 : 0);
        if (offsets) {
          operands({Type::b64, Type::b64, Type::b64, Type::b16, multicast ? Type::u16 : Type::b64,
                    Type::b64});
        } else {
          operands({Type::b64, Type::b64, Type::b64, multicast ? Type::u16 : Type::b64, Type::b64});
        }
        allow_tensor_coords_ = false;
        need(count);
        if (inst.nops != count) bad("too many operands");
        if (offsets) take_offsets(3);
        need_addr(0);
        need_addr(2);
        if (multicast) need_value(3);
      } else {
        const unsigned count = (prefetch ? 1 : 2) + (offsets ? 1 : 0) + (hint ? 1 : 0);
        operands({Type::b64, Type::b64, Type::b64, Type::b64});
        allow_tensor_coords_ = false;
        need(count);
        if (inst.nops != count) bad("too many operands");
        if (offsets) take_offsets(1);
        if (!prefetch) need_addr(1);
      }
      const int map = load ? 1 : 0;
      need_addr(map);
      if (tensor_coords_.kind != Operand::Kind::vec || tensor_coords_.count != rank) {
        bad("the tensor map operand needs " + std::to_string(rank) +
            " coordinates: [tensorMap, {c0, ...}]");
      }
      inst.ops[5] = tensor_coords_;
      return push();
    }
    if (mods.has(".cp_mask")) return false;  // byte masks (sm_100)
    const bool multicast = mods.take(".multicast::cluster");
    if (mods.take(".commit_group")) {
      done_mods();
      inst.op = Op::cp_async_bulk_commit;
      operands({});
      return push();
    }
    if (mods.take(".wait_group")) {
      mods.take(".read");  // the sources may be reused: here the copies are complete
      done_mods();
      inst.op = Op::cp_async_bulk_wait;
      operands({Type::u32});
      need(1);
      need_imm(0);
      return push();
    }
    const bool hint = mods.take(".L2::cache_hint");
    if (mods.take(".prefetch")) {
      // cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [srcMem], size {, cache-policy};
      if (!mods.take(".L2") || !mods.take(".global")) bad("needs .L2.global");
      done_mods();
      inst.op = Op::prefetch;
      operands({Type::b64, Type::u32, Type::b64});
      need(hint ? 3 : 2);
      if (inst.nops != (hint ? 3 : 2)) bad("too many operands");
      need_addr(0);
      need_value(1);
      return push();
    }
    // The first space is the destination, the second the source.
    const std::string_view first = mods.take_any({".shared::cluster", ".shared::cta", ".global"});
    const std::string_view second = mods.take_any({".shared::cluster", ".shared::cta", ".global"});
    // take_any takes by preference, not position: order them by where they were written
    const auto pos = [&](std::string_view m) {
      return std::find(parts.begin(), parts.end(), m) - parts.begin();
    };
    std::string_view dst = first, src = second;
    if (!first.empty() && !second.empty() && pos(second) < pos(first)) std::swap(dst, src);
    inst.op = Op::cp_async_bulk;
    if (dst == ".global" && src == ".shared::cta") {
      // cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint} [dst], [src], size {, policy}
      if (!mods.take(".bulk_group")) bad("a copy to global memory needs .bulk_group");
      if (multicast) bad(".multicast::cluster copies from .global to .shared::cluster");
      inst.mode |= kBulkToGlobal;
      inst.space = Space::shared;
      done_mods();
      operands({Type::b64, Type::b64, Type::u32, Type::b64});
      need(hint ? 4 : 3);
      if (inst.nops != (hint ? 4 : 3)) bad("too many operands");
    } else if ((dst == ".shared::cluster" || dst == ".shared::cta") &&
               (src == ".global" || (src == ".shared::cta" && dst == ".shared::cluster"))) {
      // ... .mbarrier::complete_tx::bytes{.L2::cache_hint} [dst], [src], size, [mbar] {, policy}
      if (!mods.take(".mbarrier::complete_tx::bytes")) {
        bad("a copy to shared memory needs .mbarrier::complete_tx::bytes");
      }
      if (src != ".global" && hint) bad(".L2::cache_hint needs a global source");
      if (multicast && (src != ".global" || dst != ".shared::cluster")) {
        bad(".multicast::cluster copies from .global to .shared::cluster");
      }
      inst.space = src == ".global" ? Space::global : Space::shared;
      done_mods();
      // ... [dst], [src], size, [mbar] {, ctaMask (.multicast::cluster)} {, cache-policy}
      const unsigned count = 4 + (multicast ? 1 : 0) + (hint ? 1 : 0);
      operands({Type::b64, Type::b64, Type::u32, Type::b64, multicast ? Type::u16 : Type::b64,
                Type::b64});
      need(count);
      if (inst.nops != count) bad("too many operands");
      need_addr(3);
      if (multicast) {
        need_value(4);
        inst.flags |= kMulticast;
      }
    } else {
      bad("no such copy direction");
    }
    need_addr(0);
    need_addr(1);
    need_value(2);
    return push();
  }
  if (mods.take(".commit_group")) {
    done_mods();
    inst.op = Op::cp_async_commit;
    operands({});
    return push();
  }
  if (mods.take(".wait_all")) {
    done_mods();
    inst.op = Op::cp_async_wait;
    operands({});
    return push();
  }
  if (mods.take(".wait_group")) {
    done_mods();
    inst.op = Op::cp_async_wait;
    operands({Type::u32});
    need(1);
    need_imm(0);
    return push();
  }
  if (mods.take(".mbarrier")) {
    // cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr];
    if (!mods.take(".arrive")) bad("needs .arrive");
    if (mods.take(".noinc")) inst.mode |= kNoInc;
    if (!mods.take_any({".shared::cta", ".shared"}).empty()) inst.space = Space::shared;
    if (!mods.take(".b64")) bad("needs .b64");
    done_mods();
    inst.op = Op::cp_async_mbarrier_arrive;
    operands({Type::b64});
    need(1);
    need_addr(0);
    mbarrier_space(0);
    return push();
  }
  // cp.async.{ca,cg}.shared{::cta}.global{.L2::cache_hint}{.L2::64B,128B,256B}
  //     [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy};
  const std::string_view cache = mods.take_any({".ca", ".cg"});
  if (cache.empty()) bad("needs .ca or .cg");
  if (mods.take_any({".shared::cta", ".shared"}).empty() || !mods.take(".global")) {
    bad("copies from .global to .shared");
  }
  const bool hint = mods.take(".L2::cache_hint");
  mods.take_any({".L2::64B", ".L2::128B", ".L2::256B"});
  done_mods();
  inst.op = Op::cp_async;
  inst.space = Space::shared;
  operands({Type::b64, Type::b64, Type::u32, Type::u32, Type::b64});
  need(hint ? 4 : 3);
  need_addr(0);
  need_addr(1);
  need_imm(2);
  const std::int64_t size = inst.ops[2].imm;
  if (size != 4 && size != 8 && size != 16) bad("cp-size must be 4, 8 or 16");
  if (cache == ".cg" && size != 16) bad(".cg copies 16 bytes");
  const int extra = inst.nops - 3 - (hint ? 1 : 0);
  if (extra > 1) bad("too many operands");
  if (hint) need_value(inst.nops - 1);  // the cache policy: a hint, unused
  if (extra == 1) {
    if (is_pred(inst.ops[3])) {
      inst.mode |= kIgnoreSrc;
    } else {
      need_value(3);
      if (inst.ops[3].kind == Operand::Kind::imm &&
          (inst.ops[3].imm < 0 || inst.ops[3].imm > size)) {
        bad("src-size " + std::to_string(inst.ops[3].imm) + " is larger than cp-size " +
            std::to_string(size));
      }
    }
  } else {  // no src-size: the whole cp-size
    inst.ops[3] = Operand{};
    inst.ops[3].kind = Operand::Kind::imm;
    inst.ops[3].imm = size;
  }
  inst.nops = 4;
  return push();
}

// cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.redOp.type
//     [dstMem], [srcMem], size, [mbar]
// cp.reduce.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}.redOp{.noftz}.type
//     [dstMem], [srcMem], size {, cache-policy}
// cp.reduce.async.bulk.tensor.Nd.global.shared::cta.redOp{.tile,.im2col_no_offs}.bulk_group
//     {.L2::cache_hint} [tensorMap, {coords}], [srcMem] {, cache-policy}
// (PTX ISA 8.0, sm_90). The element type of a tensor reduction is the map's.
bool Parser::bulk_reduction(Inst& inst, const std::vector<std::string_view>& parts, int line) {
  Mods mods(parts);
  const auto bad = [&](const std::string& why) { fail_at(line, "cp.reduce.async.bulk: " + why); };
  for (std::string_view m : {".reduce", ".async", ".bulk"}) mods.take(m);
  const bool tensor = mods.take(".tensor");
  if (tensor && mods.has(".im2col")) bad("a tensor reduction takes .im2col_no_offs, not .im2col");
  static const std::pair<std::string_view, Sub> kOps[] = {
      {".add", Sub::a_add}, {".min", Sub::a_min}, {".max", Sub::a_max}, {".inc", Sub::a_inc},
      {".dec", Sub::a_dec}, {".and", Sub::a_and}, {".or", Sub::a_or},   {".xor", Sub::a_xor}};
  inst.sub = Sub::none;
  for (const auto& [name, op] : kOps) {
    if (mods.take(name)) inst.sub = op;
  }
  if (inst.sub == Sub::none) bad("needs a reduction (.add .min .max .inc .dec .and .or .xor)");
  const bool hint = mods.take(".L2::cache_hint");
  const bool to_cluster = mods.take(".shared::cluster");
  if (!mods.take(".shared::cta")) bad("the source must be .shared::cta");
  if (!to_cluster && !mods.take(".global"))
    bad("the destination must be .global or .shared::cluster");
  inst.flags |= kReduce;
  std::string_view dim;
  if (tensor) {
    dim = mods.take_any({".1d", ".2d", ".3d", ".4d", ".5d"});
    if (dim.empty()) bad("needs a dimension (.1d to .5d)");
    if (to_cluster) bad("a tensor reduction writes .global memory");
    if (!mods.take(".tile") && mods.take(".im2col_no_offs")) {
      if (dim[1] < '3') bad(".im2col_no_offs needs .3d, .4d or .5d");
      inst.flags |= kIm2col;
    }
  } else {
    if (mods.take(".noftz")) inst.flags |= kNoFtz;
    std::string_view type_name;
    for (std::string_view m :
         {".b32", ".u32", ".s32", ".b64", ".u64", ".s64", ".f16", ".bf16", ".f32", ".f64"}) {
      if (mods.take(m)) type_name = m;
    }
    if (type_name.empty()) bad("needs a type");
    inst.type = *type_of(type_name);
    // The PTX ISA's restrictions: the bitwise reductions on .b32/.b64, .inc/.dec on .u32, .add
    // on .u32 .s32 .u64 (and .f16 .bf16 .f32 .f64 into global memory), .min/.max on .u32 .s32
    // (and .u64 .s64 .f16 .bf16 into global memory). .f16/.bf16 adds are .noftz.
    const Type ty = inst.type;
    const bool bitwise = inst.sub == Sub::a_and || inst.sub == Sub::a_or || inst.sub == Sub::a_xor;
    const bool half = ty == Type::f16 || ty == Type::bf16;
    bool ok = false;
    if (bitwise) {
      ok = ty == Type::b32 || ty == Type::b64;
    } else if (inst.sub == Sub::a_inc || inst.sub == Sub::a_dec) {
      ok = ty == Type::u32;
    } else if (inst.sub == Sub::a_add) {
      ok = ty == Type::u32 || ty == Type::s32 || ty == Type::u64 ||
           (!to_cluster && (half || ty == Type::f32 || ty == Type::f64));
      if (half && !(inst.flags & kNoFtz)) bad("an .add of .f16 or .bf16 needs .noftz");
    } else {
      ok = ty == Type::u32 || ty == Type::s32 ||
           (!to_cluster && (ty == Type::u64 || ty == Type::s64 || half));
    }
    if (!ok) bad("the reduction does not support type " + std::string(type_name));
    if ((inst.flags & kNoFtz) && !half) bad(".noftz is for .f16 and .bf16 adds");
  }
  if (to_cluster) {
    if (!mods.take(".mbarrier::complete_tx::bytes")) {
      bad("a reduction into .shared::cluster needs .mbarrier::complete_tx::bytes");
    }
    if (hint) bad(".L2::cache_hint needs a .global destination");
  } else {
    if (!mods.take(".bulk_group")) bad("a reduction into .global memory needs .bulk_group");
    inst.mode |= kBulkToGlobal;
  }
  if (!mods.empty()) bad("unknown modifier " + std::string(mods.first()));

  int k = 0;
  const auto operands = [&](std::initializer_list<Type> types) {
    while (!at(";")) {
      if (k >= static_cast<int>(types.size())) bad("too many operands");
      inst.ops[k] = operand(types.begin()[k], inst, k);
      ++k;
      if (!accept(",")) break;
    }
    expect(";");
    inst.nops = static_cast<std::uint8_t>(k);
  };
  const auto need_address = [&](int i) {
    if (inst.ops[i].kind != Operand::Kind::addr)
      bad("operand " + std::to_string(i + 1) + " must be an address [..]");
  };
  if (tensor) {
    const unsigned rank = static_cast<unsigned>(dim[1] - '0');
    inst.vec = static_cast<std::uint8_t>(rank);
    inst.op = Op::cp_async_bulk_tensor;
    tensor_coords_ = Operand{};
    allow_tensor_coords_ = true;
    operands({Type::b64, Type::b64, Type::b64});
    allow_tensor_coords_ = false;
    if (k != 2 + (hint ? 1 : 0)) bad("takes [tensorMap, {coords}], [srcMem] {, cache-policy}");
    need_address(0);
    need_address(1);
    if (tensor_coords_.kind != Operand::Kind::vec || tensor_coords_.count != rank) {
      bad("the tensor map operand needs " + std::to_string(rank) +
          " coordinates: [tensorMap, {c0, ...}]");
    }
    inst.ops[5] = tensor_coords_;
    inst.name = 0;
    p_->code.push_back(inst);
    return true;
  }
  inst.op = Op::cp_async_bulk;
  inst.space = Space::shared;
  operands({Type::b64, Type::b64, Type::u32, Type::b64});
  const int count = to_cluster ? 4 : 3 + (hint ? 1 : 0);
  if (k != count) {
    bad(to_cluster ? "takes [dstMem], [srcMem], size, [mbar]"
                   : "takes [dstMem], [srcMem], size {, cache-policy}");
  }
  need_address(0);
  need_address(1);
  const Operand& size = inst.ops[2];
  if (!((size.kind == Operand::Kind::reg && reg_types_[size.reg] != Type::pred) ||
        size.kind == Operand::Kind::imm)) {
    bad("the size must be a register or a constant");
  }
  if (to_cluster) need_address(3);
  inst.name = 0;
  p_->code.push_back(inst);
  return true;
}

}  // namespace swcu::ptx::detail
