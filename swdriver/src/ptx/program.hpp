// The decoded form of a PTX module that the interpreter executes (exec.hpp).
//
// parse_program() reads a module's text once, when the module is loaded, into flat arrays:
// every instruction of every function in one code vector (a program counter is an index into
// it), operands as small tagged records, labels resolved to program counters, registers to
// per-function slot numbers, and symbols to where they live (a module global, an offset in the
// CTA's shared memory, in the thread's local frame, in a parameter space). Nothing in the
// execution loop looks up a string. Free of cuda.h and of the rest of the driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace swcu::ptx {

/// An instruction or operand type (the `.TYPE` suffixes of the PTX ISA).
enum class Type : std::uint8_t {
  none,
  pred,
  b8,
  b16,
  b32,
  b64,
  b128,
  u8,
  u16,
  u32,
  u64,
  s8,
  s16,
  s32,
  s64,
  f16,
  f16x2,
  bf16,
  bf16x2,
  tf32,
  f32,
  f64,
  u16x2,
  s16x2,
};

/// Size in bytes of a value of type `t` (pred: 1; none: 0).
[[nodiscard]] constexpr unsigned type_size(Type t) noexcept {
  switch (t) {
    case Type::none: return 0;
    case Type::pred:
    case Type::b8:
    case Type::u8:
    case Type::s8: return 1;
    case Type::b16:
    case Type::u16:
    case Type::s16:
    case Type::f16:
    case Type::bf16: return 2;
    case Type::b32:
    case Type::u32:
    case Type::s32:
    case Type::f32:
    case Type::f16x2:
    case Type::bf16x2:
    case Type::tf32:
    case Type::u16x2:
    case Type::s16x2: return 4;
    case Type::b64:
    case Type::u64:
    case Type::s64:
    case Type::f64: return 8;
    case Type::b128: return 16;
  }
  return 0;
}

[[nodiscard]] constexpr bool is_signed(Type t) noexcept {
  return t == Type::s8 || t == Type::s16 || t == Type::s32 || t == Type::s64 || t == Type::s16x2;
}

/// f16, bf16, tf32, f32, f64 and the packed pairs.
[[nodiscard]] constexpr bool is_float(Type t) noexcept {
  return t == Type::f16 || t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2 ||
         t == Type::f32 || t == Type::f64 || t == Type::tf32;
}

/// State spaces; `generic` is an address without a space.
enum class Space : std::uint8_t { generic, global, shared, local, constant, param, reg };

/// Where a symbol used as an address (or as a value of `mov`) lives.
enum class SymKind : std::uint8_t {
  global,        ///< a module .global/.const variable: Program::globals[index]
  shared,        ///< offset in the CTA's shared memory (dynamic shared: after the static part)
  local,         ///< offset in the current frame's local memory
  kernel_param,  ///< offset in the launch's parameter buffer
  func_param,    ///< the current frame's argument `index` (a .func parameter)
  func_ret,      ///< the current frame's return value `index`
  call_param,    ///< offset in the current frame's own parameter area (call-site .param)
  function,      ///< Program::functions[index]
};

/// One operand.
struct Operand {
  enum class Kind : std::uint8_t {
    none,
    reg,    ///< register `reg` of the current frame (neg: a negated predicate)
    imm,    ///< the bits in `imm`
    sreg,   ///< special register `reg` (SReg)
    addr,   ///< [base + imm]: base is register `reg` (when has_reg) or symbol (when has_sym)
    vec,    ///< `count` registers from Program::vec_regs[reg] (a braced list)
    sym,    ///< the address of a symbol (mov, cvta, call targets)
    label,  ///< program counter `reg`
    sink,   ///< `_`
  };
  Kind kind = Kind::none;
  bool neg = false;
  bool has_reg = false;
  bool has_sym = false;
  SymKind sym_kind = SymKind::global;
  std::uint16_t count = 0;
  std::uint32_t reg = 0;
  std::uint64_t sym = 0;  ///< index or offset, as sym_kind says
  std::int64_t imm = 0;
};

/// Special registers (sreg operands); the component (.x/.y/.z) is folded into the id.
enum class SReg : std::uint8_t {
  tid_x,
  tid_y,
  tid_z,
  ntid_x,
  ntid_y,
  ntid_z,
  ctaid_x,
  ctaid_y,
  ctaid_z,
  nctaid_x,
  nctaid_y,
  nctaid_z,
  laneid,
  warpid,
  nwarpid,
  smid,
  nsmid,
  gridid,
  lanemask_eq,
  lanemask_le,
  lanemask_lt,
  lanemask_ge,
  lanemask_gt,
  clock,
  clock_hi,
  clock64,
  globaltimer,
  globaltimer_lo,
  globaltimer_hi,
  dynamic_smem_size,
  total_smem_size,
  current_graph_exec,  // cudaGetCurrentGraphExec (cuda_device_runtime_api.h)
  envreg,              // envreg: +index in Operand::imm
  cluster_ctarank,
  cluster_nctarank,
  is_explicit_cluster,
  cluster_ctaid_x,
  cluster_ctaid_y,
  cluster_ctaid_z,
  cluster_nctaid_x,
  cluster_nctaid_y,
  cluster_nctaid_z,
  clusterid_x,
  clusterid_y,
  clusterid_z,
  nclusterid_x,
  nclusterid_y,
  nclusterid_z,
  pm,
};

/// The operations the interpreter executes. `unsupported` is a valid PTX instruction it does
/// not run yet (a launch of a kernel that can reach one fails, naming it).
enum class Op : std::uint16_t {
  // integer and bit
  add,
  sub,
  mul,
  mad,
  mul24,
  mad24,
  sad,
  div,
  rem,
  abs,
  neg,
  min,
  max,
  popc,
  clz,
  bfind,
  brev,
  bfe,
  bfi,
  prmt,
  shf,
  shl,
  shr,
  and_,
  or_,
  xor_,
  not_,
  cnot,
  lop3,
  dp4a,
  dp2a,
  addc,
  subc,
  madc,
  fns,
  bmsk,
  szext,
  // floating point (add/sub/mul/mad/div/abs/neg/min/max shared with integers, by type)
  fma,
  rcp,
  sqrt,
  rsqrt,
  sin,
  cos,
  lg2,
  ex2,
  tanh,
  copysign,
  testp,
  // comparison and selection
  setp,
  set,
  selp,
  slct,
  // data movement and conversion
  mov,
  cvt,
  cvt_pack,
  cvta,
  isspacep,
  ld,
  ldu,
  st,
  prefetch,
  atom,
  red,
  st_async,  ///< st.async: st, then complete_tx of its bytes on ops[2]'s mbarrier
  /// cp.async.bulk.tensor (tile and im2col modes): Inst::vec is the rank, ops[5] the
  /// coordinates; a load has [dst], [tensorMap], [mbar] {, ctaMask} (with kIm2col, out2 the
  /// im2col offsets), a store (kBulkToGlobal) [tensorMap], [src]
  cp_async_bulk_tensor,
  red_async,  ///< red.async: red, then complete_tx of its bytes on ops[2]'s mbarrier
  fence,
  membar,
  // control
  bra,
  brx,
  call,
  ret,
  exit,
  trap,
  brkpt,
  nanosleep,
  pmevent,
  // synchronization and warp collectives
  bar_sync,
  bar_arrive,
  bar_red,
  bar_warp_sync,
  shfl,
  vote,
  match,
  redux,
  activemask,
  elect,
  video,  ///< SIMD video instructions on 4 bytes or 2 halves (Inst::vec lanes)
  griddepcontrol,
  matrix,  ///< mma, wmma, ldmatrix, stmatrix, movmatrix: Program::matrix_forms[Inst::form]
  // asynchronous copies (exec_async.cpp) and mbarrier objects (exec_mbarrier.cpp); Inst::mode
  // holds their variants (AsyncMode)
  cp_async,                  ///< cp.async [dst], [src], cp-size{, src-size | ignore-src}
  cp_async_commit,           ///< cp.async.commit_group
  cp_async_wait,             ///< cp.async.wait_group N; no operand: cp.async.wait_all
  cp_async_mbarrier_arrive,  ///< cp.async.mbarrier.arrive{.noinc} [mbar]
  cp_async_bulk,             ///< cp.async.bulk [dst], [src], size{, [mbar]}
  cp_async_bulk_commit,      ///< cp.async.bulk.commit_group
  cp_async_bulk_wait,        ///< cp.async.bulk.wait_group{.read} N
  mbarrier_init,             ///< mbarrier.init [mbar], count
  mbarrier_inval,            ///< mbarrier.inval [mbar]
  mbarrier_arrive,           ///< mbarrier.arrive{_drop}{.expect_tx} state, [mbar]{, count}{, tx}
  mbarrier_expect_tx,        ///< mbarrier.expect_tx [mbar], tx
  mbarrier_complete_tx,      ///< mbarrier.complete_tx [mbar], tx
  mbarrier_wait,             ///< mbarrier.test_wait / try_wait{.parity} p, [mbar], state | parity
  mbarrier_pending_count,    ///< mbarrier.pending_count count, state
  setmaxnreg,                ///< a register-allocation hint: validated when loaded, no effect
  mapa,                      ///< an address of the same variable in another CTA of the cluster
  getctarank,                ///< the cluster rank of the CTA a shared address belongs to
  cluster_arrive,            ///< barrier.cluster.arrive
  cluster_wait,              ///< barrier.cluster.wait
  // textures and surfaces (exec_texture.cpp), unified mode: ops[1] (tex, tld4, txq, suld, suq)
  // or ops[0] (sust, sured) is [handle, {coords}] with the coordinates in ops[5]; Inst::form
  // holds the geometry and variants (TexForm)
  tex,    ///< tex{.level,.grad}.geom.v4.dtype.ctype d, [a, c]{, lod | , dPdx, dPdy}
  tld4,   ///< tld4.comp.2d.v4.dtype.f32 d, [a, c]
  txq,    ///< txq{.level}.query.b32 d, [a]{, lod}
  suld,   ///< suld.b.geom.vec.dtype.clamp d, [a, c]
  sust,   ///< sust.{b,p}.geom.vec.ctype.clamp [a, c], v
  sured,  ///< sured.b.op.geom.ctype.clamp [a, c], v (Inst::sub: the operation)
  suq,    ///< suq.query.b32 d, [a]
  nop,
  unsupported,
};

/// Rounding modifiers.
enum class Round : std::uint8_t { none, rn, rz, rm, rp, rna, rni, rzi, rmi, rpi };

/// Comparison operators of setp/set (and their unordered forms).
enum class Cmp : std::uint8_t {
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  lo,
  ls,
  hi,
  hs,
  equ,
  neu,
  ltu,
  leu,
  gtu,
  geu,
  num,
  nan,
};

/// Flags of an instruction (Inst::flags).
enum Flag : std::uint32_t {
  kFtz = 1u << 0,
  kSat = 1u << 1,
  kApprox = 1u << 2,
  kFull = 1u << 3,
  kHi = 1u << 4,
  kLo = 1u << 5,
  kWide = 1u << 6,
  kCc = 1u << 7,  ///< writes the carry flag
  kUni = 1u << 8,
  kClamp = 1u << 9,  ///< shf.clamp, shfl: unused
  kNan = 1u << 10,   ///< min/max .NaN
  kXorsign = 1u << 11,
  kRelu = 1u << 12,
  kShiftLeft = 1u << 13,  ///< shf.l
  kSigned = 1u << 14,     ///< redux/match: signed
  kNoFtz = 1u << 15,
  kAligned = 1u << 16,  ///< bar/barrier .aligned (informational)
  kTo = 1u << 17,       ///< cvta.to
  kReverse = 1u << 18,  ///< bfind.shiftamt
  kVolatile = 1u << 19,
  kSatFinite = 1u << 20,     ///< .satfinite: overflow gives the largest finite value
  kVideoAdd = 1u << 21,      ///< video .add: the lanes' results summed into c
  kRelaxed = 1u << 22,       ///< ld/st/atom/red .relaxed
  kAcquire = 1u << 23,       ///< .acquire (and .acq_rel)
  kRelease = 1u << 24,       ///< .release (and .acq_rel)
  kSeqCst = 1u << 25,        ///< fence.sc
  kClusterSpace = 1u << 26,  ///< the space was .shared::cluster (isspacep, mapa)
  kMulticast = 1u << 27,     ///< cp.async.bulk .multicast::cluster: ops[4] is the CTA mask
  kReduce = 1u << 28,  ///< cp.reduce.async.bulk{.tensor}: reduces with `sub` instead of copying
  /// cp.{reduce.}async.bulk.tensor .im2col (a load: out2 holds the im2col offsets) or
  /// .im2col_no_offs (a store or reduction: it loads, but running it faults, as on sm_90)
  kIm2col = 1u << 29,
};

/// Variants of the asynchronous-copy and mbarrier instructions (Inst::mode).
enum AsyncMode : std::uint8_t {
  kIgnoreSrc = 1u << 0,     ///< cp.async: ops[3] is the ignore-src predicate, not src-size
  kNoInc = 1u << 1,         ///< cp.async.mbarrier.arrive.noinc
  kBulkToGlobal = 1u << 2,  ///< cp.async.bulk shared::cta to global (bulk group), else to shared
  kDrop = 1u << 3,          ///< mbarrier.arrive_drop
  kExpectTx = 1u << 4,      ///< mbarrier.arrive.expect_tx: ops[3] is the tx-count
  kNoComplete = 1u << 5,    ///< mbarrier.arrive.noComplete: must not complete the phase
  kParity = 1u << 6,        ///< mbarrier.test_wait/try_wait.parity: ops[2] is a phase parity
  kTryWait = 1u << 7,       ///< mbarrier.try_wait (may suspend), else test_wait
};

/// The geometry of a texture or surface instruction (the low 4 bits of Inst::form).
enum class TexGeom : std::uint8_t { d1, d2, d3, a1d, a2d, cube, acube };

/// Variants of the texture and surface instructions (Inst::form, above the geometry).
enum TexForm : std::uint16_t {
  kTexGeomMask = 0xf,
  kTexLevel = 1u << 4,    ///< tex.level, txq.level: an explicit level of detail
  kTexGrad = 1u << 5,     ///< tex.grad: gradients give the level of detail
  kSurfFormat = 1u << 6,  ///< sust.p: formatted store (converted to the surface's format)
  kClampShift = 8,        ///< 2 bits: 0 .trap, 1 .clamp, 2 .zero
  kDetailShift = 10,      ///< 4 bits: tld4's component (0..3), txq's or suq's query (TexQuery)
};

/// What txq and suq return.
enum class TexQuery : std::uint8_t {
  width,
  height,
  depth,
  channel_data_type,
  channel_order,
  normalized_coords,
  filter_mode,
  addr_mode_0,
  addr_mode_1,
  addr_mode_2,
  num_mipmap_levels,
  num_samples,
  array_size,
  memory_layout,
};

/// Sub-operations: shfl modes, vote modes, atom/red/redux/bar.red operations, testp classes,
/// prmt modes, boolean combiners of setp.
enum class Sub : std::uint8_t {
  none,
  // shfl
  up,
  down,
  bfly,
  idx,
  // vote
  all,
  any,
  uni,
  ballot,
  // atom / red / redux / bar.red
  a_add,
  a_min,
  a_max,
  a_inc,
  a_dec,
  a_and,
  a_or,
  a_xor,
  a_exch,
  a_cas,
  a_popc,
  // video operations (besides a_add, a_min, a_max)
  v_sub,
  v_avrg,
  v_absdiff,
  // testp
  t_finite,
  t_infinite,
  t_number,
  t_notanumber,
  t_normal,
  t_subnormal,
  // prmt modes
  p_f4e,
  p_b4e,
  p_rc8,
  p_ecl,
  p_ecr,
  p_rc16,
  // setp/set combiners
  b_and,
  b_or,
  b_xor,
  // match
  m_any,
  m_all,
};

/// One decoded instruction.
struct Inst {
  Op op = Op::nop;
  Type type = Type::none;   ///< the (destination) type
  Type type2 = Type::none;  ///< cvt/slct/set: the source type; dp4a, video: a's (b's) type
  Type type3 = Type::none;  ///< video: b's type
  Space space = Space::generic;
  Round round = Round::none;
  Cmp cmp = Cmp::eq;
  Sub sub = Sub::none;
  Sub combine = Sub::none;  ///< setp/set boolean operation with the third operand
  std::uint8_t vec = 1;     ///< ld/st .v2/.v4
  std::uint8_t nops = 0;
  bool guarded = false;
  bool guard_neg = false;
  std::uint8_t mode = 0;    ///< asynchronous copies and mbarriers: AsyncMode bits
  std::uint16_t form = 0;   ///< Op::matrix: index into Program::matrix_forms
  std::uint32_t guard = 0;  ///< predicate register
  std::uint32_t flags = 0;
  std::uint32_t name = 0;  ///< unsupported: index into Program::names (the opcode text)
  std::uint32_t line = 0;  ///< PTX source line
  Operand ops[6];
  Operand out2;  ///< the second destination of `d|p` forms (setp, shfl, lop3, match, elect)
};

/// A warp-level matrix instruction's qualifiers (Op::matrix), decoded and checked against the
/// PTX ISA's valid combinations when the module loads (parse_matrix.cpp). Identical forms share
/// one entry of Program::matrix_forms.
struct MatrixForm {
  /// Which instruction.
  enum class Kind : std::uint8_t {
    mma,
    wmma_load,
    wmma_store,
    wmma_mma,
    ldmatrix,
    stmatrix,
    movmatrix
  };
  Kind kind = Kind::mma;
  std::uint8_t m = 0, n = 0, k = 0;  ///< the shape (.m16n8k16; ldmatrix/stmatrix/movmatrix: 8x8)
  char matrix = 'a';                 ///< wmma.load/wmma.store: 'a', 'b', 'c' or 'd'
  bool row = true;                   ///< wmma.load/wmma.store: the memory layout is row-major
  bool a_row = true;                 ///< mma/wmma.mma: .alayout is .row
  bool b_row = false;                ///< mma/wmma.mma: .blayout is .row
  Type atype = Type::none, btype = Type::none, ctype = Type::none, dtype = Type::none;
  std::uint8_t num = 1;     ///< ldmatrix/stmatrix: .x1, .x2, .x4
  bool trans = false;       ///< ldmatrix/stmatrix/movmatrix: .trans
  bool satfinite = false;   ///< integer mma/wmma.mma: .satfinite
  Round round = Round::rn;  ///< .f64 mma/wmma.mma: the rounding of each fused multiply-add

  friend bool operator==(const MatrixForm&, const MatrixForm&) = default;
};

/// A parameter or return value of a function (.param), in its declared order.
struct ParamDecl {
  std::uint32_t size = 0;
  std::uint32_t align = 1;
};

/// Built-in functions the driver supplies for `.extern .func` declarations.
enum class Builtin : std::uint8_t {
  none,
  vprintf,
  assertfail,
  malloc,
  free,
  set_conditional,
  graph_launch
};

/// One .entry or .func.
struct Function {
  std::string name;
  bool entry = false;
  bool defined = false;  ///< has a body (else extern: a built-in or unresolved)
  Builtin builtin = Builtin::none;
  std::uint32_t begin = 0, end = 0;  ///< its instructions: code[begin, end)
  std::uint32_t regs = 0;            ///< register slots of a frame
  std::uint32_t local_bytes = 0;     ///< .local variables of a frame
  std::uint32_t param_bytes = 0;     ///< call-site .param variables of a frame
  std::vector<ParamDecl> params;     ///< formal parameters (entry: kernel params)
  std::vector<ParamDecl> rets;
  std::vector<std::uint32_t> param_offsets;  ///< entry: each parameter's offset in the buffer
  /// The first instruction it may reach that the interpreter cannot run (index into code), or
  /// UINT32_MAX; through calls, for entries (computed after parsing).
  std::uint32_t unsupported = UINT32_MAX;
  /// An unresolved extern function it may call (index), or UINT32_MAX.
  std::uint32_t unresolved = UINT32_MAX;
};

/// A relocation in a global's initializer: the address of symbol `target` (a global or a
/// function) plus `addend`, stored as 8 (or 4) bytes at `offset`.
struct Reloc {
  std::uint32_t offset = 0;
  std::uint8_t size = 8;
  bool function = false;
  bool generic = true;
  std::uint32_t target = 0;
  std::int64_t addend = 0;
};

/// A module .global or .const variable.
struct Global {
  std::string name;
  bool constant = false;
  bool external = false;  ///< .extern: defined elsewhere
  std::size_t size = 0;
  std::size_t align = 1;
  std::vector<unsigned char> init;  ///< initial bytes (zero-extended to size); empty: zero
  std::vector<Reloc> relocs;
};

/// A parsed module.
struct Program {
  std::vector<Inst> code;
  std::vector<Function> functions;
  std::vector<Global> globals;
  std::size_t static_shared = 0;          ///< every .shared variable of the module, laid out once
  std::size_t dynamic_shared_offset = 0;  ///< where `.extern .shared` arrays start
  /// The largest .align of the `.extern .shared` arrays (at least 16): their start is a
  /// multiple of it, as ptxas places them.
  std::size_t dynamic_shared_align = 16;
  std::vector<std::uint32_t> vec_regs;
  std::vector<std::vector<std::uint32_t>> branch_tables;  ///< brx.idx targets (pcs)
  std::vector<std::string> names;                         ///< unsupported opcodes' text
  std::vector<MatrixForm> matrix_forms;                   ///< Op::matrix instructions' forms
  /// Some function reads %envreg1 or %envreg2: cooperative groups' grid workspace (grid.sync).
  bool uses_grid_workspace = false;

  /// The entry named `name`, or nullptr.
  [[nodiscard]] const Function* entry(std::string_view name) const noexcept;
};

/// Parses PTX text. On failure returns nullptr and sets `error` to one line naming the PTX line
/// and the problem ("line 12: undefined register %r9").
[[nodiscard]] std::shared_ptr<const Program> parse_program(std::string_view text,
                                                           std::string& error);

}  // namespace swcu::ptx
