#include "hal/opencl/emit_opencl.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "compiler/sem/verify.h"
#include "hal/opencl/opencl_names.h"
#include "hal/opencl/opencl_types.h"
#include "support/error.h"
#include "tile_lang/tensor.h"

namespace tilec::hal::opencl {
namespace {

using namespace tilec::sem;  // NOLINT: this file is all about sem nodes

std::optional<double> ConstFloat(const Expr& e) {
  if (auto* c = As<FloatConst>(e)) return c->value;
  if (auto* b = As<Broadcast>(e)) return ConstFloat(b->value);
  return std::nullopt;
}

bool IsConstant(const Expr& e) {
  if (auto* b = As<Broadcast>(e)) return IsConstant(b->value);
  return e->kind == NodeKind::IntConst || e->kind == NodeKind::FloatConst ||
         e->kind == NodeKind::BoolConst || e->kind == NodeKind::LimitConst;
}

// --- One function --------------------------------------------------------------------

class FunctionEmitter {
 public:
  FunctionEmitter(const Function& f, const EmitOptions& options, std::string& out)
      : f_(f), options_(options), out_(out) {
    rename_ = RenameReservedNames(f);
    if (auto it = options.read_images.find(f.name); it != options.read_images.end()) {
      for (const auto& [position, width] : it->second) {
        TILEC_CHECK(position < f.params.size() && f.params[position].type.IsPointer(),
                    "image parameter {} of kernel {}", position, f.name);
        image_width_[f.params[position].name] = width;
      }
    }
  }

  void Emit() {
    TILEC_CHECK(!f_.is_kernel || !IsReservedInOpenCL(f_.name),
                "sem: kernel name '{}' is reserved in OpenCL", f_.name);
    if (f_.is_kernel) {
      out_ += "__kernel ";
      if (f_.work_group_size) {
        const auto& w = *f_.work_group_size;
        out_ += fmt::format("__attribute__((reqd_work_group_size({}, {}, {}))) ", w[0], w[1], w[2]);
      }
      out_ += "void ";
    } else {
      out_ += f_.return_type.IsVoid() ? "void " : ValueType(f_.return_type) + " ";
    }
    out_ += f_.name + "(";
    for (size_t i = 0; i < f_.params.size(); ++i) {
      if (i) out_ += ", ";
      out_ += ParamText(f_.params[i]);
    }
    out_ += ") ";
    size_t body = out_.size();
    Braced(f_.body);
    // The pixel each image load site read last (ImageLoadText).
    std::string caches;
    for (int site = 0; site < image_sites_; ++site)
      caches += fmt::format("  int tilec_pi_{0} = -1;\n  float4 tilec_px_{0} = (float4)(0.0f);\n", site);
    out_.insert(body + 2, caches);
    out_ += "\n";
  }

 private:
  // --- Types ---

  int IndexBits() const { return f_.index_type == DataType::I64 ? 64 : 32; }
  bool EmulateHalf() const { return !options_.fp16; }

  // The OpenCL type of a value (variables, casts, literals).
  std::string ValueType(const Type& t) const {
    std::string base;
    if (t.IsIndex()) {
      base = IndexBits() == 64 ? "long" : "int";
    } else if (t.IsBool()) {
      base = t.width > 1 ? "int" : "bool";  // bool vectors are int masks
    } else if (t.dtype == DataType::F16 && EmulateHalf()) {
      base = "float";
    } else {
      base = ScalarName(t.dtype);
    }
    return t.width > 1 ? fmt::format("{}{}", base, t.width) : base;
  }

  bool IsHalfStorage(const Type& container) const {
    return container.elem_kind == TypeKind::Scalar && container.dtype == DataType::F16 &&
           EmulateHalf() && container.IsPointer();
  }

  // The OpenCL element type of a pointer or array.
  std::string StorageType(const Type& container) const {
    Type elem = container.Element();
    std::string base;
    if (elem.IsBool()) {
      base = "char";  // bool has no defined size in buffers
    } else if (IsHalfStorage(container)) {
      base = "half";
    } else {
      return ValueType(elem);
    }
    return elem.width > 1 ? fmt::format("{}{}", base, elem.width) : base;
  }

  std::string PointerType(const Type& t) const {
    static const char* kSpace[] = {"__private", "__global", "__local", "__constant"};
    bool is_const = t.is_const && t.space != AddressSpace::Constant;
    return fmt::format("{} {}{}*", kSpace[static_cast<int>(t.space)], is_const ? "const " : "",
                       StorageType(t));
  }

  // Bits of the OpenCL element of a value type (what a select mask needs).
  int ElemBits(const Type& t) const {
    if (t.IsIndex()) return IndexBits();
    if (t.IsBool() || (t.dtype == DataType::F16 && EmulateHalf())) return 32;
    return lang::BitWidth(t.dtype);
  }

  std::string ParamText(const Param& p) const {
    if (image_width_.count(p.name)) return fmt::format("__read_only image2d_t {}", Name(p.name));
    if (p.type.IsPointer())
      return fmt::format("{}{} {}", PointerType(p.type), p.noalias ? " restrict" : "", Name(p.name));
    if (f_.is_kernel) {
      TILEC_CHECK(!p.type.IsBool(), "sem: OpenCL kernels cannot take bool parameter '{}'", p.name);
      TILEC_CHECK(!(p.type.dtype == DataType::F16 && p.type.IsScalar() && EmulateHalf()),
                  "sem: half parameter '{}' by value needs cl_khr_fp16", p.name);
    }
    return fmt::format("{} {}", ValueType(p.type), Name(p.name));
  }

  std::string Name(const std::string& n) const {
    auto it = rename_.find(n);
    return it == rename_.end() ? n : it->second;
  }

  // --- Literals ---

  std::string IntLiteral(int64_t v, const Type& t) const {
    auto int32 = [](int64_t x) {
      if (x == INT32_MIN) return std::string("(-2147483647 - 1)");
      return x < 0 ? fmt::format("({})", x) : fmt::format("{}", x);
    };
    auto int64 = [](int64_t x) {
      if (x == INT64_MIN) return std::string("(-9223372036854775807L - 1L)");
      return x < 0 ? fmt::format("({}L)", x) : fmt::format("{}L", x);
    };
    if (t.IsIndex()) return IndexBits() == 64 ? int64(v) : int32(v);
    switch (t.dtype) {
      case DataType::I8:
      case DataType::I16:
      case DataType::U8:
      case DataType::U16: return fmt::format("(({}){})", ScalarName(t.dtype), int32(v));
      case DataType::I32: return int32(v);
      case DataType::U32: return fmt::format("{}u", v);
      case DataType::I64: return int64(v);
      case DataType::U64: return fmt::format("{}UL", static_cast<uint64_t>(v));
      default: TILEC_UNREACHABLE("integer literal of {}", ToString(t));
    }
  }

  std::string FloatLiteral(double v, DataType dtype) const {
    auto finish = [](std::string s, std::string_view suffix) {
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      s += suffix;
      return s[0] == '-' ? "(" + s + ")" : s;
    };
    if (dtype == DataType::F64) {
      if (std::isnan(v)) return "((double)NAN)";
      if (std::isinf(v)) return v < 0 ? "(-(double)INFINITY)" : "((double)INFINITY)";
      return finish(fmt::format("{}", v), "");
    }
    auto f = static_cast<float>(v);
    // A half constant is a half value even where half arithmetic runs in
    // float (EmulateHalf): 70000 is inf, not 70000.0f (difftest seed 501734).
    if (dtype == DataType::F16) f = lang::HalfToFloat(lang::FloatToHalf(f));
    std::string text;
    if (std::isnan(f)) {
      text = "NAN";
    } else if (std::isinf(f)) {
      text = f < 0 ? "(-INFINITY)" : "INFINITY";
    } else {
      text = finish(fmt::format("{}", f), "f");
    }
    if (dtype == DataType::F16 && !EmulateHalf()) return "((half)" + text + ")";
    return text;
  }

  std::string Limit(const LimitConst& n) const {
    const Type& t = n.type;
    bool is_min = n.which == LimitKind::Min;
    if (n.which == LimitKind::Zero || n.which == LimitKind::One) {
      int v = n.which == LimitKind::One;
      if (t.IsBool()) return v ? "true" : "false";
      if (t.IsFloat()) return FloatLiteral(v, t.dtype);
      return IntLiteral(v, t);
    }
    if (t.IsBool()) return is_min ? "false" : "true";
    if (t.IsFloat()) {
      switch (t.dtype) {
        case DataType::F32: return is_min ? "(-FLT_MAX)" : "FLT_MAX";
        case DataType::F64: return is_min ? "(-DBL_MAX)" : "DBL_MAX";
        default: return FloatLiteral(is_min ? -65504.0 : 65504.0, DataType::F16);
      }
    }
    int bits = t.IsIndex() ? IndexBits() : lang::BitWidth(t.dtype);
    bool is_signed = t.IsIndex() || lang::IsSigned(t.dtype);
    if (is_signed) {
      int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
      return IntLiteral(is_min ? -max - 1 : max, t);
    }
    uint64_t max = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
    return IntLiteral(is_min ? 0 : static_cast<int64_t>(max), t);
  }

  // --- Expressions ---

  // Wraps scalar arithmetic on 8/16-bit integers in a cast back to its type.
  std::string Narrow(const Type& t, std::string text) const {
    if (t.IsScalar() && t.width == 1 && lang::IsInteger(t.dtype) && lang::BitWidth(t.dtype) < 32)
      return fmt::format("(({}){})", ScalarName(t.dtype), text);
    return text;
  }

  // Bits of the mask element a bool-vector expression's text has.
  int MaskBits(const Expr& e) const {
    switch (e->kind) {
      case NodeKind::Binary: {
        auto& n = static_cast<const Binary&>(*e);
        if (IsComparison(n.op)) return n.a->type.IsBool() ? 32 : ElemBits(n.a->type);
        return MaskBits(n.a);
      }
      case NodeKind::Unary: return MaskBits(static_cast<const Unary&>(*e).operand);
      case NodeKind::Load: return 8;
      case NodeKind::Cast: {
        auto& n = static_cast<const Cast&>(*e);
        return n.value->type.IsBool() ? MaskBits(n.value) : ElemBits(n.value->type);
      }
      default: return 32;
    }
  }

  // A bool vector as a mask of `bits`-bit elements.
  std::string Mask(const Expr& e, int bits) const {
    std::string text = E(e);
    if (MaskBits(e) == bits) return text;
    return fmt::format("convert_{}({})", MaskType(bits, e->type.width), text);
  }

  // An operand of a bool-vector operation (masks of one size), else plain.
  std::string Operand(const Expr& e, int bits) const {
    return e->type.IsBool() && e->type.width > 1 ? Mask(e, bits) : E(e);
  }

  // Narrowed like a unary op: C promotes `c ? short : short` to int, which
  // then made `max(short, int)` ambiguous (found by difftest).
  std::string Ternary(const Expr& c, const Expr& t, const Expr& f) const {
    return Narrow(t->type, fmt::format("({} ? {} : {})", E(c), Operand(t, 32), Operand(f, 32)));
  }

  std::string E(const Expr& e) const {
    switch (e->kind) {
      case NodeKind::IntConst: {
        auto& n = static_cast<const IntConst&>(*e);
        return IntLiteral(n.value, n.type);
      }
      case NodeKind::FloatConst: {
        auto& n = static_cast<const FloatConst&>(*e);
        return FloatLiteral(n.value, n.type.dtype);
      }
      case NodeKind::BoolConst: return static_cast<const BoolConst&>(*e).value ? "true" : "false";
      case NodeKind::LimitConst: return Limit(static_cast<const LimitConst&>(*e));
      case NodeKind::VarRef: {
        const std::string& name = static_cast<const VarRef&>(*e).name;
        TILEC_CHECK(!image_width_.count(name), "sem: image parameter '{}' used other than by a load", name);
        return Name(name);
      }
      case NodeKind::Load: return LoadText(static_cast<const Load&>(*e));
      case NodeKind::Unary: {
        auto& n = static_cast<const Unary&>(*e);
        return Narrow(n.type, fmt::format("({}{})", Spelling(n.op), E(n.operand)));
      }
      case NodeKind::Binary: return BinaryText(static_cast<const Binary&>(*e));
      case NodeKind::Select: {
        auto& n = static_cast<const Select&>(*e);
        if (n.cond->type.width == 1) return Ternary(n.cond, n.true_value, n.false_value);
        int bits = ElemBits(n.type);
        return fmt::format("select({}, {}, {})", Operand(n.false_value, bits),
                           Operand(n.true_value, bits), Mask(n.cond, bits));
      }
      case NodeKind::Cond: {
        auto& n = static_cast<const Cond&>(*e);
        return Ternary(n.cond, n.true_value, n.false_value);
      }
      case NodeKind::Clamp: return ClampText(static_cast<const Clamp&>(*e));
      case NodeKind::Cast: return CastText(static_cast<const Cast&>(*e));
      case NodeKind::Call: {
        auto& n = static_cast<const Call&>(*e);
        std::string name(sem::Name(n.fn));
        static const std::set<CallFn> kNative = {CallFn::Exp, CallFn::Log, CallFn::Sqrt,
                                                 CallFn::Sin, CallFn::Cos, CallFn::Tan};
        bool is_f32 = n.type.dtype == DataType::F32 ||
                      (n.type.dtype == DataType::F16 && EmulateHalf());
        if (options_.fast_math && is_f32 && kNative.count(n.fn)) name = "native_" + name;
        // PoCL's fmod on double vectors gives wrong lanes (fmod(4.3, -2.1)
        // is 0.0125 next to some other lanes: ONNX's test_mod_mixed_sign_float64):
        // one scalar fmod per lane (tilec_fmod_doubleN, in the prelude).
        if (n.fn == CallFn::Fmod && n.type.dtype == DataType::F64 && n.type.width > 1)
          name = fmt::format("tilec_fmod_double{}", n.type.width);
        std::string text = name + "(";
        for (size_t i = 0; i < n.args.size(); ++i) text += (i ? ", " : "") + E(n.args[i]);
        return text + ")";
      }
      case NodeKind::ThreadIndex: {
        auto& n = static_cast<const ThreadIndex&>(*e);
        return fmt::format("(({}){}({}))", ValueType(n.type), sem::Name(n.which), n.dim);
      }
      case NodeKind::Broadcast: {
        auto& n = static_cast<const Broadcast&>(*e);
        if (n.type.IsBool())
          return fmt::format("(({})({} ? -1 : 0))", ValueType(n.type), E(n.value));
        return fmt::format("(({})({}))", ValueType(n.type), E(n.value));
      }
      case NodeKind::VectorExtract: {
        auto& n = static_cast<const VectorExtract&>(*e);
        if (n.type.IsBool()) return fmt::format("(({}).{} != 0)", Mask(n.vector, 32), Lane(n.lane));
        return fmt::format("({}).{}", E(n.vector), Lane(n.lane));
      }
      case NodeKind::VectorInsert: {
        auto& n = static_cast<const VectorInsert&>(*e);
        bool mask = n.type.IsBool();
        std::string vec = mask ? Mask(n.vector, 32) : E(n.vector);
        std::string text = fmt::format("(({})(", ValueType(n.type));
        for (int i = 0; i < n.type.width; ++i) {
          if (i) text += ", ";
          if (i != n.lane)
            text += fmt::format("({}).{}", vec, Lane(i));
          else
            text += mask ? fmt::format("({} ? -1 : 0)", E(n.value)) : E(n.value);
        }
        return text + "))";
      }
      case NodeKind::VectorShuffle: {
        // shuffle2's mask: unsigned lanes as wide as the operands' (uint16 for float16).
        auto& n = static_cast<const VectorShuffle&>(*e);
        return fmt::format("shuffle2({}, {}, (u{})({}))", E(n.a), E(n.b),
                           MaskType(ElemBits(n.a->type), static_cast<int>(n.lanes.size())),
                           fmt::join(n.lanes, ", "));
      }
      default: TILEC_UNREACHABLE("expression kind {}", sem::Name(e->kind));
    }
  }

  // `(base + index)`: the address of base[index].
  std::string Address(const Expr& base, const Expr& index) const {
    return fmt::format("({} + {})", E(base), E(index));
  }

  // A load from an image parameter (EmitOptions::read_images): lanes read
  // with tilec_read_image (emitted by EmitOpenCL), 4 at a time with
  // tilec_read_image4, which reads one pixel when the 4 start on one.
  std::string ImageLoadText(const Load& n, const std::string& image, int64_t width) const {
    int lanes = n.type.width;
    std::string index = fmt::format("((int){})", E(n.index));
    Type lane_type = n.type.WithWidth(1);
    bool native_half = lane_type.dtype == DataType::F16 && !EmulateHalf();
    TILEC_CHECK(lane_type.dtype == DataType::F32 || lane_type.dtype == DataType::F16,
                "sem: image load of {}", ToString(n.type));
    // Element loads keep the pixel they read last (per load site), so the
    // lanes of one vector, or one loop's consecutive reads of a pixel's 4
    // components, cost one read_imagef.
    int site = image_sites_++;
    auto lane = [&](int k) {
      return fmt::format("tilec_read_image_c({}, {} + {}, {}, &tilec_pi_{}, &tilec_px_{})", Name(image), index, k,
                         width, site, site);
    };
    std::string text;
    if (lanes == 1) {
      text = lane(0);
    } else if (n.mask) {
      std::vector<std::string> items;
      std::string mask = E(n.mask);
      for (int k = 0; k < lanes; ++k) items.push_back(fmt::format("({}).{} ? {} : 0.0f", mask, Lane(k), lane(k)));
      text = fmt::format("((float{})({}))", lanes, fmt::join(items, ", "));
    } else if (lanes % 4 == 0) {
      std::vector<std::string> items;
      for (int k = 0; k < lanes; k += 4)
        items.push_back(fmt::format("tilec_read_image4({}, {} + {}, {})", Name(image), index, k, width));
      text = lanes == 4 ? items[0] : fmt::format("((float{})({}))", lanes, fmt::join(items, ", "));
    } else {
      std::vector<std::string> items;
      for (int k = 0; k < lanes; ++k) items.push_back(lane(k));
      text = fmt::format("((float{})({}))", lanes, fmt::join(items, ", "));
    }
    if (!native_half) return text;
    return lanes == 1 ? fmt::format("((half){})", text) : fmt::format("convert_half{}({})", lanes, text);
  }

  std::string LoadText(const Load& n) const {
    if (auto* v = As<VarRef>(n.base))
      if (auto it = image_width_.find(v->name); it != image_width_.end()) return ImageLoadText(n, v->name, it->second);
    const Type& container = n.base->type;
    Type elem = container.Element();
    int width = n.type.width;
    bool contiguous = elem.width == 1 && width > 1;
    if (IsHalfStorage(container) && !n.mask) {
      TILEC_CHECK(elem.width == 1, "sem: half vector elements need cl_khr_fp16");
      return contiguous ? fmt::format("vload_half{}(0, {})", width, Address(n.base, n.index))
                        : fmt::format("vload_half(0, {})", Address(n.base, n.index));
    }
    if (n.mask) return MaskedLoadText(n);
    std::string raw = contiguous ? fmt::format("vload{}(0, {})", width, Address(n.base, n.index))
                                 : fmt::format("{}[{}]", E(n.base), E(n.index));
    if (!elem.IsBool()) return raw;
    if (width == 1) return fmt::format("({} != 0)", raw);
    return fmt::format("({} != (({})(0)))", raw, MaskType(8, width));
  }

  // Lane `k` of a contiguous access at `address` (the text of a pointer).
  std::string LaneElement(const Type& container, const std::string& address, int k) const {
    if (IsHalfStorage(container)) return fmt::format("vload_half({}, {})", k, address);
    return fmt::format("{}[{}]", address, k);
  }

  // OpenCL C has no masked vector load: each lane is read only under its
  // mask (the ternary is lazy), else 0.
  std::string MaskedLoadText(const Load& n) const {
    std::string address = Address(n.base, n.index);
    std::string mask = E(n.mask);
    bool is_bool = n.type.IsBool();  // a char mask, as LoadText's (MaskBits)
    std::string text = fmt::format("(({})(", is_bool ? MaskType(8, n.type.width) : ValueType(n.type));
    for (int k = 0; k < n.type.width; ++k) {
      std::string element = LaneElement(n.base->type, address, k);
      text += k ? ", " : "";
      text += is_bool ? fmt::format("({}).{} && {} ? -1 : 0", mask, Lane(k), element)
                      : fmt::format("({}).{} ? {} : (({})0)", mask, Lane(k), element,
                                    ValueType(n.type.WithWidth(1)));
    }
    return text + "))";
  }

  std::string BinaryText(const Binary& n) const {
    const Type& t = n.a->type;
    if (n.op == BinaryOp::Min || n.op == BinaryOp::Max) {
      std::string_view fn = t.IsFloat() ? (n.op == BinaryOp::Min ? "fmin" : "fmax")
                                        : (n.op == BinaryOp::Min ? "min" : "max");
      return fmt::format("{}({}, {})", fn, E(n.a), E(n.b));
    }
    std::string op(Spelling(n.op));
    if (t.IsBool() && t.width > 1) {
      int bits = IsComparison(n.op) ? 32 : MaskBits(n.a);
      return fmt::format("({} {} {})", Mask(n.a, bits), op, Mask(n.b, bits));
    }
    std::string text = fmt::format("({} {} {})", E(n.a), op, E(n.b));
    if (IsComparison(n.op) || t.IsPointer() || t.IsBool()) return text;
    return Narrow(n.type, text);
  }

  std::string ClampText(const Clamp& n) const {
    const Type& t = n.type;
    bool ordered = false;
    if (auto lo = ConstInt(n.lo), hi = ConstInt(n.hi); lo && hi) {
      ordered = t.IsUnsigned() ? static_cast<uint64_t>(*lo) <= static_cast<uint64_t>(*hi) : *lo <= *hi;
    } else if (auto flo = ConstFloat(n.lo), fhi = ConstFloat(n.hi); flo && fhi) {
      ordered = *flo <= *fhi;
    }
    // clamp() is undefined when lo > hi; min(max()) is what sem means.
    if (ordered) return fmt::format("clamp({}, {}, {})", E(n.value), E(n.lo), E(n.hi));
    bool f = t.IsFloat();
    return fmt::format("{}({}({}, {}), {})", f ? "fmin" : "min", f ? "fmax" : "max", E(n.value),
                       E(n.lo), E(n.hi));
  }

  std::string CastText(const Cast& n) const {
    const Type& from = n.value->type;
    const Type& to = n.type;
    int width = to.width;
    if (to.IsBool()) {
      if (from.IsBool()) return E(n.value);
      if (width == 1) return fmt::format("({} != 0)", E(n.value));
      return fmt::format("({} != (({})(0)))", E(n.value), ValueType(from));
    }
    if (from.IsBool() && width > 1)
      return fmt::format("convert_{}((-{}))", ValueType(to), Mask(n.value, 32));
    if (to.dtype == DataType::F16 && EmulateHalf() && from.dtype != DataType::F16 && !from.IsBool()) {
      // Emulated f16 values live in floats, so a conversion to f16 must round
      // explicitly (via float, as the evaluator does). Found by difftest:
      // as_float(X, 16) of an f32 X kept all of X's bits.
      Type as_float = to;
      as_float.dtype = DataType::F32;
      std::string f = ValueType(from) == ValueType(as_float) ? E(n.value)
                      : width > 1 ? fmt::format("convert_{}({})", ValueType(as_float), E(n.value))
                                  : fmt::format("((float){})", E(n.value));
      return fmt::format("tilec_round_half{}({})", width > 1 ? std::to_string(width) : "", f);
    }
    if (ValueType(from) == ValueType(to)) return E(n.value);
    if (width > 1) return fmt::format("convert_{}({})", ValueType(to), E(n.value));
    return fmt::format("(({}){})", ValueType(to), E(n.value));
  }

  // A value as its container stores it (bool as char 0/1).
  std::string Stored(const Expr& v, const Type& container) const {
    if (!container.Element().IsBool()) return E(v);
    if (v->type.width == 1) return fmt::format("((char){})", E(v));
    return fmt::format("(-{})", Mask(v, 8));  // -(-1) == 1
  }

  // --- Statements ---

  void Indent() { out_.append(indent_, ' '); }
  void Line(const std::string& text) {
    Indent();
    out_ += text;
    out_ += "\n";
  }

  void Braced(const Stmt& body) {
    out_ += "{\n";
    indent_ += 2;
    if (auto* b = As<Block>(body)) {
      for (const Stmt& s : b->stmts) S(s);
    } else {
      S(body);
    }
    indent_ -= 2;
    Indent();
    out_ += "}";
  }

  void S(const Stmt& s) {
    switch (s->kind) {
      case NodeKind::Declare: return DeclareText(static_cast<const Declare&>(*s));
      case NodeKind::Assign: {
        auto& n = static_cast<const Assign&>(*s);
        // `v = insert(v, k, x)` as `v.sk = x;`: the expression form spells v
        // once per lane (the transpose form assigns hundreds of these).
        if (n.value->kind == NodeKind::VectorInsert && !n.value->type.IsBool()) {
          auto& ins = static_cast<const VectorInsert&>(*n.value);
          if (ins.vector->kind == NodeKind::VarRef && n.var->kind == NodeKind::VarRef &&
              static_cast<const VarRef&>(*ins.vector).name == static_cast<const VarRef&>(*n.var).name)
            return Line(fmt::format("{}.{} = {};", E(n.var), Lane(ins.lane), E(ins.value)));
        }
        return Line(fmt::format("{} = {};", E(n.var), Operand(n.value, 32)));
      }
      case NodeKind::Store: return StoreText(static_cast<const Store&>(*s));
      case NodeKind::Prefetch: {
        // A hint: dropped for an image parameter, which has no address.
        auto& n = static_cast<const Prefetch&>(*s);
        if (auto* v = As<VarRef>(n.base); v && image_width_.count(v->name)) return;
        return Line(fmt::format("prefetch({}, 1);", Address(n.base, n.index)));
      }
      case NodeKind::Block:
        Indent();
        Braced(s);
        out_ += "\n";
        return;
      case NodeKind::If: {
        Indent();
        const If* n = &static_cast<const If&>(*s);
        while (true) {
          out_ += fmt::format("if ({}) ", E(n->cond));
          Braced(n->then_body);
          if (!n->else_body) break;
          out_ += " else ";
          if (auto* next = As<If>(n->else_body)) {
            n = next;
            continue;
          }
          Braced(n->else_body);
          break;
        }
        out_ += "\n";
        return;
      }
      case NodeKind::For: {
        auto& n = static_cast<const For&>(*s);
        std::string v = Name(n.var);
        if (!n.unroll) {
          Indent();
          out_ += "#pragma unroll 1\n";
        }
        Indent();
        out_ += fmt::format("for ({} {} = {}; {} < {}; {} += {}) ", ValueType(n.begin->type), v,
                            E(n.begin), v, E(n.end), v, E(n.step));
        Braced(n.body);
        out_ += "\n";
        return;
      }
      case NodeKind::While: {
        auto& n = static_cast<const While&>(*s);
        Indent();
        out_ += fmt::format("while ({}) ", E(n.cond));
        Braced(n.body);
        out_ += "\n";
        return;
      }
      case NodeKind::Barrier: {
        static const char* kFence[] = {"CLK_LOCAL_MEM_FENCE", "CLK_GLOBAL_MEM_FENCE",
                                       "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE"};
        return Line(fmt::format("barrier({});",
                                kFence[static_cast<int>(static_cast<const Barrier&>(*s).fence)]));
      }
      case NodeKind::Return: {
        auto& n = static_cast<const Return&>(*s);
        return Line(n.value ? fmt::format("return {};", Operand(n.value, 32)) : "return;");
      }
      case NodeKind::Comment: {
        std::string_view text = static_cast<const Comment&>(*s).text;
        while (true) {
          size_t end = text.find('\n');
          std::string_view line = text.substr(0, end);
          // A trailing backslash would splice the next source line into the comment.
          while (!line.empty() && (line.back() == '\\' || line.back() == ' ' || line.back() == '\r'))
            line.remove_suffix(1);
          Line(line.empty() ? "//" : fmt::format("// {}", line));
          if (end == std::string_view::npos) break;
          text.remove_prefix(end + 1);
        }
        return;
      }
      default: TILEC_UNREACHABLE("statement kind {}", sem::Name(s->kind));
    }
  }

  void DeclareText(const Declare& n) {
    const Type& t = n.type;
    std::string name = Name(n.name);
    if (t.IsValue()) {
      return Line(n.init ? fmt::format("{} {} = {};", ValueType(t), name, Operand(n.init, 32))
                         : fmt::format("{} {};", ValueType(t), name));
    }
    if (t.IsPointer()) {
      return Line(n.init ? fmt::format("{} {} = {};", PointerType(t), name, E(n.init))
                         : fmt::format("{} {};", PointerType(t), name));
    }
    std::string elem = StorageType(t);
    if (t.space == AddressSpace::Local) return Line(fmt::format("__local {} {}[{}];", elem, name, t.count));
    if (!n.init) return Line(fmt::format("{} {}[{}];", elem, name, t.count));
    std::string value = Stored(n.init, t);
    if (IsConstant(n.init) && t.count <= 64) {
      std::string list;
      for (int64_t i = 0; i < t.count; ++i) list += (i ? ", " : "") + value;
      return Line(fmt::format("{} {}[{}] = {{{}}};", elem, name, t.count, list));
    }
    Line(fmt::format("{} {}[{}];", elem, name, t.count));
    Line(fmt::format("for (int tilec_i = 0; tilec_i < {}; ++tilec_i) {}[tilec_i] = {};", t.count,
                     name, value));
  }

  void StoreText(const Store& n) {
    const Type& container = n.base->type;
    Type elem = container.Element();
    int width = n.value->type.width;
    bool contiguous = elem.width == 1 && width > 1;
    if (n.mask) return MaskedStoreText(n);
    if (IsHalfStorage(container)) {
      TILEC_CHECK(elem.width == 1, "sem: half vector elements need cl_khr_fp16");
      return Line(contiguous ? fmt::format("vstore_half{}({}, 0, {});", width, E(n.value),
                                           Address(n.base, n.index))
                             : fmt::format("vstore_half({}, 0, {});", E(n.value),
                                           Address(n.base, n.index)));
    }
    std::string value = Stored(n.value, container);
    if (contiguous)
      return Line(fmt::format("vstore{}({}, 0, {});", width, value, Address(n.base, n.index)));
    Line(fmt::format("{}[{}] = {};", E(n.base), E(n.index), value));
  }

  // Lane by lane, each under its mask (the names are reserved, see opencl_names).
  void MaskedStoreText(const Store& n) {
    const Type& t = n.value->type;
    Line("{");
    indent_ += 2;
    bool is_bool = t.IsBool();  // stored as char 0/1
    Line(fmt::format("{} tilec_v = {};", is_bool ? MaskType(8, t.width) : ValueType(t),
                     Stored(n.value, n.base->type)));
    Line(fmt::format("{} tilec_m = {};", MaskType(32, t.width), Mask(n.mask, 32)));
    Line(fmt::format("{} tilec_p = {};", PointerType(n.base->type), Address(n.base, n.index)));
    for (int k = 0; k < t.width; ++k) {
      std::string lane = fmt::format("tilec_v.{}", Lane(k));
      Line(IsHalfStorage(n.base->type)
               ? fmt::format("if (tilec_m.{}) vstore_half({}, {}, tilec_p);", Lane(k), lane, k)
               : fmt::format("if (tilec_m.{}) tilec_p[{}] = {};", Lane(k), k, lane));
    }
    indent_ -= 2;
    Line("}");
  }

  const Function& f_;
  const EmitOptions& options_;
  std::string& out_;
  int indent_ = 0;
  std::map<std::string, std::string> rename_;
  std::map<std::string, int64_t> image_width_;  // image parameters: width in pixels
  mutable int image_sites_ = 0;                 // image loads emitted so far (their pixel caches)
};

}  // namespace

std::string EmitOpenCL(const sem::Module& module, const EmitOptions& options) {
  sem::Verify(module);
  FloatTypes scan;
  for (const Function& f : module.functions) {
    FloatTypes one = OptionalFloatTypes(f);
    if (one.f64 && !options.fp64)
      TILEC_USER_ERROR("kernel '{}' uses f64, but the OpenCL device has no cl_khr_fp64", f.name);
    scan.f16 |= one.f16;
    scan.f64 |= one.f64;
  }
  std::string out = "// OpenCL C generated by Tilec.\n";
  if (scan.f16 && options.fp16) out += "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n";
  if (scan.f64) {
    out += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    for (int w : {2, 3, 4, 8, 16}) {
      std::vector<std::string> lanes;
      for (int i = 0; i < w; ++i) lanes.push_back(fmt::format("fmod(a.s{0:x}, b.s{0:x})", i));
      out += fmt::format("double{0} tilec_fmod_double{0}(double{0} a, double{0} b) {{ return (double{0})({1}); }}\n", w,
                         fmt::join(lanes, ", "));
    }
  }
  if (scan.f16 && !options.fp16) {
    // Emulated f16: values are floats; a conversion to f16 rounds through a
    // half in private memory (round to nearest even).
    for (const char* n : {"", "2", "4", "8", "16"})
      out += fmt::format(
          "float{0} tilec_round_half{0}(float{0} x) {{ ushort{0} h; vstore_half{0}_rte(x, 0, (__private half*)&h); "
          "return vload_half{0}(0, (__private const half*)&h); }}\n",
          n);
  }
  bool images = false;
  for (const Function& f : module.functions)
    if (auto it = options.read_images.find(f.name); it != options.read_images.end() && !it->second.empty())
      images = true;
  if (images) {
    // Element i of an RGBA image of `w` pixels per row (pixels row-major, 4
    // elements each); the same through a load site's cache of its last
    // pixel; and 4 elements from i: one pixel when i starts one.
    out +=
        "__constant sampler_t tilec_sampler = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | "
        "CLK_FILTER_NEAREST;\n"
        "float tilec_read_image(__read_only image2d_t img, int i, int w) {\n"
        "  int p = i >> 2;\n"
        "  float4 v = read_imagef(img, tilec_sampler, (int2)(p % w, p / w));\n"
        "  int k = i & 3;\n"
        "  return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;\n"
        "}\n"
        "float tilec_read_image_c(__read_only image2d_t img, int i, int w, int* last, float4* px) {\n"
        "  int p = i >> 2;\n"
        "  if (p != *last) {\n"
        "    *last = p;\n"
        "    *px = read_imagef(img, tilec_sampler, (int2)(p % w, p / w));\n"
        "  }\n"
        "  int k = i & 3;\n"
        "  return k == 0 ? (*px).x : k == 1 ? (*px).y : k == 2 ? (*px).z : (*px).w;\n"
        "}\n"
        "float4 tilec_read_image4(__read_only image2d_t img, int i, int w) {\n"
        "  int p = i >> 2;\n"
        "  if ((i & 3) == 0) return read_imagef(img, tilec_sampler, (int2)(p % w, p / w));\n"
        "  return (float4)(tilec_read_image(img, i, w), tilec_read_image(img, i + 1, w), "
        "tilec_read_image(img, i + 2, w), tilec_read_image(img, i + 3, w));\n"
        "}\n";
  }
  for (const Function& f : module.functions) {
    out += "\n";
    FunctionEmitter(f, options, out).Emit();
  }
  return out;
}

}  // namespace tilec::hal::opencl
