// Texture and surface instructions (parser.hpp) in the unified texture mode, where the texture
// or surface is a .u64 handle operand (what nvcc emits for texture and surface objects): tex,
// tld4, txq, suld.b, sust.b, sust.p, sured and suq, checked as the PTX ISA 9.0 writes them
// ("Texture Instructions", "Surface Instructions"), so a malformed one fails to load with its
// line. The forms the interpreter does not run (the independent mode's [tex, sampler, c], the
// multisample geometries, depth compare, offsets, sust.p with other than .b32) are left to the
// caller as unsupported.
#include <algorithm>
#include <string>

#include "ptx/parser.hpp"

namespace swcu::ptx::detail {
namespace {

struct GeomName {
  std::string_view name;
  TexGeom geom;
  std::uint8_t coords;  // the coordinate vector's length
};
constexpr GeomName kGeoms[] = {
    {".1d", TexGeom::d1, 1},       {".2d", TexGeom::d2, 2},   {".3d", TexGeom::d3, 4},
    {".a1d", TexGeom::a1d, 2},     {".a2d", TexGeom::a2d, 4}, {".cube", TexGeom::cube, 4},
    {".acube", TexGeom::acube, 4},
};

struct QueryName {
  std::string_view name;
  TexQuery query;
};
constexpr QueryName kQueries[] = {
    {".width", TexQuery::width},
    {".height", TexQuery::height},
    {".depth", TexQuery::depth},
    {".channel_data_type", TexQuery::channel_data_type},
    {".channel_order", TexQuery::channel_order},
    {".normalized_coords", TexQuery::normalized_coords},
    {".filter_mode", TexQuery::filter_mode},
    {".addr_mode_0", TexQuery::addr_mode_0},
    {".addr_mode_1", TexQuery::addr_mode_1},
    {".addr_mode_2", TexQuery::addr_mode_2},
    {".num_mipmap_levels", TexQuery::num_mipmap_levels},
    {".num_samples", TexQuery::num_samples},
    {".array_size", TexQuery::array_size},
    {".memory_layout", TexQuery::memory_layout},
};

}  // namespace

bool Parser::texture_instruction(Inst& inst, std::string_view opcode, std::string_view base,
                                 const std::vector<std::string_view>& parts, int line) {
  std::vector<std::string_view> mods(parts);
  const std::string what(opcode);
  const auto bad = [&](const std::string& why) { fail_at(line, what + ": " + why); };
  const auto take = [&](std::string_view m) {
    const auto it = std::find(mods.begin(), mods.end(), m);
    if (it == mods.end()) return false;
    mods.erase(it);
    return true;
  };
  const auto has = [&](std::string_view m) {
    return std::find(mods.begin(), mods.end(), m) != mods.end();
  };
  // Forms left unsupported.
  if (has(".2dms") || has(".a2dms") || has(".ptr")) {
    return false;
  }
  const auto done_mods = [&] {
    if (!mods.empty()) bad("unknown modifier " + std::string(mods.front()));
  };
  const auto geometry = [&](bool cube_allowed) -> const GeomName& {
    const GeomName* g = nullptr;
    for (const GeomName& n : kGeoms) {
      if (take(n.name)) {
        if (g != nullptr) bad("more than one geometry");
        g = &n;
      }
    }
    if (g == nullptr) bad("needs a geometry (.1d, .2d, .3d, .a1d, .a2d, .cube or .acube)");
    if (!cube_allowed && (g->geom == TexGeom::cube || g->geom == TexGeom::acube)) {
      bad("surfaces have no cube geometry (use .a2d with the face as the layer)");
    }
    inst.form = static_cast<std::uint16_t>(inst.form | static_cast<unsigned>(g->geom));
    return *g;
  };
  // The next type modifier (types come in the order the ISA writes them), which must be one of
  // `allowed`.
  const auto type_from = [&](std::initializer_list<Type> allowed, const char* which) {
    for (std::string_view m : mods) {
      const auto t = type_of(m);
      if (!t) continue;
      if (std::find(allowed.begin(), allowed.end(), *t) == allowed.end()) break;
      take(m);
      return *t;
    }
    bad(std::string("needs a ") + which + " type");
    return Type::none;
  };
  const auto clamp_mode = [&] {
    const bool trap = take(".trap"), clamp = take(".clamp"), zero = take(".zero");
    if (trap + clamp + zero != 1) bad("needs exactly one of .trap, .clamp and .zero");
    inst.form = static_cast<std::uint16_t>(inst.form | ((clamp  ? 1u
                                                         : zero ? 2u
                                                                : 0u)
                                                        << kClampShift));
  };
  const auto is_reg = [&](const Operand& o) {
    return o.kind == Operand::Kind::reg && reg_types_[o.reg] != Type::pred;
  };
  // Operands up to ';'; `coords` of them in the address's vector.
  const auto operands = [&](int max, unsigned coords) {
    tensor_coords_ = Operand{};
    allow_tensor_coords_ = true;
    int k = 0;
    while (!at(";")) {
      if (k >= max) {
        allow_tensor_coords_ = false;
        bad("too many operands");
      }
      inst.ops[k] = operand(inst.type2 == Type::none ? Type::b32 : inst.type2, inst, k);
      ++k;
      if (!accept(",")) break;
    }
    allow_tensor_coords_ = false;
    expect(";");
    inst.nops = static_cast<std::uint8_t>(k);
    if (coords != 0) {
      if (tensor_coords_.kind != Operand::Kind::vec || tensor_coords_.count != coords) {
        bad("the coordinates must be a vector of " + std::to_string(coords) +
            " registers: [a, {c0, ...}]");
      }
      for (unsigned i = 0; i < coords; ++i) {
        if (p_->vec_regs[tensor_coords_.reg + i] == UINT32_MAX) bad("a coordinate is a sink");
      }
      inst.ops[5] = tensor_coords_;
    } else if (tensor_coords_.kind != Operand::Kind::none) {
      bad("takes no coordinates");
    }
  };
  // A .texref/.surfref variable (texture references) is valid PTX the interpreter does not run.
  bool by_reference = false;
  const auto need_handle = [&](int k) {
    const Operand& o = inst.ops[k];
    if (o.kind == Operand::Kind::addr && o.has_sym && !o.has_reg) {
      by_reference = true;
      return;
    }
    if (o.kind != Operand::Kind::addr || !o.has_reg || o.has_sym || o.imm != 0 ||
        type_size(reg_types_[o.reg]) != 8) {
      bad("the texture or surface must be a 64-bit register holding its object: [%rd, ...]");
    }
  };
  const auto need_vec = [&](int k, unsigned count, const char* which) {
    const Operand& o = inst.ops[k];
    if (o.kind != Operand::Kind::vec || o.count != count) {
      bad(std::string(which) + " must be a vector of " + std::to_string(count) + " registers");
    }
  };
  const auto push = [&] {
    if (by_reference) {
      inst.op = Op::unsupported;
      inst.name = static_cast<std::uint32_t>(p_->names.size());
      p_->names.push_back(what);
    }
    p_->code.push_back(inst);
    return true;
  };

  if (base == "tex" || base == "tld4") {
    if (base == "tex") {
      const bool base_lod = take(".base");  // level of detail 0: the default
      if (take(".level")) inst.form |= kTexLevel;
      if (take(".grad")) inst.form |= kTexGrad;
      if (base_lod + ((inst.form & kTexLevel) != 0) + ((inst.form & kTexGrad) != 0) > 1) {
        bad("takes one of .base, .level and .grad");
      }
      inst.op = Op::tex;
    } else {
      static constexpr std::string_view kComp[] = {".r", ".g", ".b", ".a"};
      unsigned comp = 4;
      for (unsigned i = 0; i < 4; ++i) {
        if (take(kComp[i])) comp = i;
      }
      if (comp == 4) bad("needs a component (.r, .g, .b or .a)");
      inst.form = static_cast<std::uint16_t>(comp << kDetailShift);
      inst.op = Op::tld4;
    }
    const GeomName& g = geometry(true);
    if (base == "tld4" && g.geom != TexGeom::d2) return false;  // a2d, cube, acube: sm_60 forms
    // tex: .v4 of .f32, .s32, .u32 or .f16, or .v2.f16x2 (PTX ISA 4.2, sm_53); tld4: .v4 of
    // .f32, .s32 or .u32.
    if (take(".v2")) {
      inst.vec = 2;
      if (base == "tld4") bad("needs .v4");
      inst.type = type_from({Type::f16x2}, "result (.f16x2 with .v2)");
    } else {
      if (!take(".v4")) bad("needs .v4 (or .v2.f16x2)");
      inst.vec = 4;
      inst.type = base == "tex"
                      ? type_from({Type::f32, Type::s32, Type::u32, Type::f16},
                                  "result (.f32, .s32, .u32 or .f16)")
                      : type_from({Type::f32, Type::s32, Type::u32}, "result (.f32, .s32 or .u32)");
    }
    inst.type2 = type_from({Type::f32, Type::s32}, "coordinate (.f32 or .s32)");
    done_mods();
    if (base == "tld4" && inst.type2 != Type::f32) bad("takes .f32 coordinates");
    const int fixed = 2 + ((inst.form & kTexLevel) ? 1 : 0) + ((inst.form & kTexGrad) ? 2 : 0);
    operands(6, g.coords);
    if (inst.nops < fixed) bad("too few operands");
    if (inst.nops > fixed) {
      // {, e} {, f}: a vector of texel offsets, then the depth compare value. The PTX ISA says a
      // depth texture compares each texel with f, but a CUDA texture object has no comparison
      // function (CUDA_TEXTURE_DESC has none), so the result is not defined for one: a launch
      // refuses it rather than guess. Offsets are left unsupported.
      const bool offset = inst.ops[fixed].kind == Operand::Kind::vec;
      inst.op = Op::unsupported;
      inst.name = static_cast<std::uint32_t>(p_->names.size());
      p_->names.push_back(
          inst.nops > fixed + 1 || !offset
              ? what +
                    " with a depth compare operand (a CUDA texture object has no comparison "
                    "function, so the PTX ISA's depth compare is undefined for it)"
              : what + " with a texel offset operand");
      return push();
    }
    need_vec(0, inst.vec, "the result");
    need_handle(1);
    if (inst.form & kTexLevel) {
      if (!is_reg(inst.ops[2]) && inst.ops[2].kind != Operand::Kind::imm) {
        bad("the level of detail must be a register or a constant");
      }
    }
    if (inst.form & kTexGrad) {
      const unsigned n = g.geom == TexGeom::d1 || g.geom == TexGeom::a1d   ? 1
                         : g.geom == TexGeom::d2 || g.geom == TexGeom::a2d ? 2
                                                                           : 4;
      if (inst.ops[2].kind != Operand::Kind::vec || inst.ops[3].kind != Operand::Kind::vec ||
          inst.ops[2].count != n || inst.ops[3].count != n) {
        bad("the gradients must be two vectors of " + std::to_string(n) + " registers");
      }
    }
    return push();
  }
  if (base == "txq" || base == "suq") {
    if (base == "txq" && take(".level")) inst.form |= kTexLevel;
    const QueryName* q = nullptr;
    for (const QueryName& n : kQueries) {
      if (take(n.name)) q = &n;
    }
    if (q == nullptr) bad("needs a query (.width, .height, .depth, ...)");
    if (base == "suq" && q->query != TexQuery::width && q->query != TexQuery::height &&
        q->query != TexQuery::depth && q->query != TexQuery::channel_data_type &&
        q->query != TexQuery::channel_order && q->query != TexQuery::array_size &&
        q->query != TexQuery::memory_layout) {
      bad("is not a surface query");
    }
    if ((inst.form & kTexLevel) && q->query != TexQuery::width && q->query != TexQuery::height &&
        q->query != TexQuery::depth) {
      bad(".level queries only .width, .height and .depth");
    }
    if (!take(".b32")) bad("needs .b32");
    inst.type = Type::b32;
    done_mods();
    inst.op = base == "txq" ? Op::txq : Op::suq;
    inst.form =
        static_cast<std::uint16_t>(inst.form | (static_cast<unsigned>(q->query) << kDetailShift));
    operands(3, 0);
    if (inst.nops != ((inst.form & kTexLevel) ? 3 : 2)) bad("wrong number of operands");
    if (!is_reg(inst.ops[0])) bad("the destination must be a register");
    need_handle(1);
    return push();
  }
  // suld, sust, sured
  const bool formatted = take(".p");
  const bool raw = take(".b");
  if (formatted == raw) bad("needs .b or .p");
  if (formatted && base == "suld") {
    // PTX ISA 9.0 defines only suld.b: a formatted load (suld.p, PTX ISA 2.0) has no semantics
    // for a surface object to follow.
    unsupported_instruction(inst, what +
                                      " (a formatted surface load; PTX ISA 9.0 defines only "
                                      "suld.b)");
    return true;
  }
  if (formatted && base != "sust") return false;  // sured.p: not run
  if (formatted) inst.form |= kSurfFormat;
  if (base == "sured") {
    static constexpr std::pair<std::string_view, Sub> kRed[] = {{".add", Sub::a_add},
                                                                {".min", Sub::a_min},
                                                                {".max", Sub::a_max},
                                                                {".and", Sub::a_and},
                                                                {".or", Sub::a_or}};
    for (const auto& [name, sub] : kRed) {
      if (take(name)) inst.sub = sub;
    }
    if (inst.sub == Sub::none) bad("needs an operation (.add, .min, .max, .and or .or)");
  }
  const GeomName& g = geometry(false);
  clamp_mode();
  take(".ca") || take(".cg") || take(".cs") || take(".cv") || take(".wb") || take(".wt");
  if (take(".v2")) inst.vec = 2;
  if (take(".v4")) inst.vec = 4;
  if (base == "sured") {
    inst.type = type_from({Type::u32, Type::u64, Type::s32, Type::b32, Type::b64},
                          "reduction (.u32, .u64, .s32, .b32 or .b64)");
    if (inst.vec != 1) bad("takes one value");
  } else if (formatted) {
    inst.type = type_from({Type::b32}, ".b32");
  } else {
    inst.type = type_from({Type::b8, Type::b16, Type::b32, Type::b64}, "data (.b8 to .b64)");
  }
  if (inst.vec == 4 && inst.type == Type::b64) bad(".v4 of .b64 is not a surface access");
  done_mods();
  inst.type2 = inst.type;
  if (base == "suld") {
    inst.op = Op::suld;
    operands(2, g.coords);
    if (inst.nops != 2) bad("wrong number of operands");
    need_vec(0, inst.vec, "the destination");
    need_handle(1);
  } else {
    inst.op = base == "sust" ? Op::sust : Op::sured;
    operands(2, g.coords);
    if (inst.nops != 2) bad("wrong number of operands");
    need_handle(0);
    if (base == "sust") {
      need_vec(1, inst.vec, "the value");
    } else if (!is_reg(inst.ops[1])) {
      bad("the value must be a register");
    }
  }
  return push();
}

}  // namespace swcu::ptx::detail
