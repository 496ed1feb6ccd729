// Lowering of sem types and expressions to LLVM IR (see emit_llvm.h for the
// mapping and lower_function.h for the class).
#include <llvm/ADT/APFloat.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <map>
#include <utility>

#include "hal/llvm/inline_math.h"
#include "hal/llvm/lower_function.h"
#include "support/error.h"

namespace tilec::hal::cpu {
namespace {

using namespace tilec::sem;  // NOLINT: this file is all about sem nodes

bool IsSignedType(const Type& t) {
  return t.IsIndex() || (t.IsScalar() && lang::IsSigned(t.dtype));
}

// Whether evaluating `e` may fault (a load, an integer division), so that C's
// lazy && and || must not evaluate it unless needed.
class MayTrap : public Visitor {
 public:
  bool found = false;
  using Visitor::Visit;

 protected:
  void VisitLoad(const Load&) override { found = true; }
  void VisitBinary(const Binary& n) override {
    if ((n.op == BinaryOp::Div || n.op == BinaryOp::Mod) && n.type.IsInteger()) found = true;
    Visitor::VisitBinary(n);
  }
};

bool MayTrapIn(const Expr& e) {
  MayTrap v;
  v.Visit(e);
  return v.found;
}

}  // namespace

// --- Types ---------------------------------------------------------------------

llvm::Type* FunctionLowering::IndexTy() {
  return b_.getIntNTy(f_.index_type == DataType::I64 ? 64 : 32);
}

llvm::Type* FunctionLowering::ScalarTy(DataType dtype, bool storage) {
  switch (dtype) {
    case DataType::Bool: return storage ? b_.getInt8Ty() : b_.getInt1Ty();
    case DataType::I8:
    case DataType::U8: return b_.getInt8Ty();
    case DataType::I16:
    case DataType::U16: return b_.getInt16Ty();
    case DataType::I32:
    case DataType::U32: return b_.getInt32Ty();
    case DataType::I64:
    case DataType::U64: return b_.getInt64Ty();
    case DataType::F16: return b_.getHalfTy();
    case DataType::F32: return b_.getFloatTy();
    case DataType::F64: return b_.getDoubleTy();
  }
  TILEC_UNREACHABLE("data type");
}

llvm::Type* FunctionLowering::ValueTy(const Type& t) {
  TILEC_CHECK(t.IsValue(), "llvm: {} is not a value type", ToString(t));
  return WithLanes(t.IsIndex() ? IndexTy() : ScalarTy(t.dtype, false), t.width);
}

llvm::Type* FunctionLowering::StorageTy(const Type& c) {
  Type e = c.Element();
  return WithLanes(e.IsIndex() ? IndexTy() : ScalarTy(e.dtype, true), e.width);
}

llvm::Type* FunctionLowering::VarTy(const Type& t) {
  if (t.IsPointer()) return b_.getPtrTy();
  if (t.IsArray()) return llvm::ArrayType::get(StorageTy(t), static_cast<uint64_t>(t.count));
  return ValueTy(t);
}

uint64_t FunctionLowering::ScalarBytes(const Type& t) const {
  bool index = t.IsIndex() || ((t.IsPointer() || t.IsArray()) && t.elem_kind == TypeKind::Index);
  if (index) return f_.index_type == DataType::I64 ? 8 : 4;
  return static_cast<uint64_t>(lang::ByteSize(t.dtype));
}

// --- Constants -------------------------------------------------------------------

llvm::Value* FunctionLowering::IntConstant(int64_t v, const Type& t) {
  auto* ty = llvm::cast<llvm::IntegerType>(ValueTy(t.WithWidth(1)));
  unsigned bits = ty->getBitWidth();
  uint64_t pattern = static_cast<uint64_t>(v);
  if (bits < 64) pattern &= (uint64_t{1} << bits) - 1;
  return llvm::ConstantInt::get(ty, pattern);
}

llvm::Value* FunctionLowering::Limit(const LimitConst& n) {
  const Type& t = n.type;
  llvm::Type* ty = ValueTy(t);
  switch (n.which) {
    case LimitKind::Zero: return llvm::Constant::getNullValue(ty);
    case LimitKind::One:
      if (t.IsFloat()) return llvm::ConstantFP::get(ty, 1.0);
      return llvm::ConstantInt::get(ty, 1);
    case LimitKind::Min:
    case LimitKind::Max: break;
  }
  bool is_min = n.which == LimitKind::Min;
  if (t.IsBool()) return b_.getInt1(!is_min);
  if (t.IsFloat()) {
    return llvm::ConstantFP::get(ctx_, llvm::APFloat::getLargest(ty->getFltSemantics(), is_min));
  }
  unsigned bits = ty->getIntegerBitWidth();
  llvm::APInt v =
      IsSignedType(t)
          ? (is_min ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getSignedMaxValue(bits))
          : (is_min ? llvm::APInt::getMinValue(bits) : llvm::APInt::getMaxValue(bits));
  return llvm::ConstantInt::get(ctx_, v);
}

// --- Expressions -----------------------------------------------------------------

llvm::Value* FunctionLowering::Truth(const Expr& e) {
  llvm::Value* v = E(e);
  if (e->type.IsBool()) return v;
  return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
}

llvm::Value* FunctionLowering::ToI64(llvm::Value* v, const Type& t) {
  return b_.CreateIntCast(v, b_.getInt64Ty(), IsSignedType(t));
}

llvm::Value* FunctionLowering::E(const Expr& e) {
  switch (e->kind) {
    case NodeKind::IntConst: {
      auto& n = static_cast<const IntConst&>(*e);
      return IntConstant(n.value, n.type);
    }
    case NodeKind::FloatConst: {
      auto& n = static_cast<const FloatConst&>(*e);
      return llvm::ConstantFP::get(ValueTy(n.type), n.value);
    }
    case NodeKind::BoolConst: return b_.getInt1(static_cast<const BoolConst&>(*e).value);
    case NodeKind::LimitConst: return Limit(static_cast<const LimitConst&>(*e));
    case NodeKind::VarRef: {
      auto& n = static_cast<const VarRef&>(*e);
      const Var& v = Lookup(n.name);
      TILEC_CHECK(!v.type.IsArray(), "llvm: array '{}' used as a value", n.name);
      return b_.CreateLoad(v.ty, Address(v), n.name);
    }
    case NodeKind::Load: return LoadValue(static_cast<const Load&>(*e));
    case NodeKind::Unary: {
      auto& n = static_cast<const Unary&>(*e);
      llvm::Value* a = E(n.operand);
      switch (n.op) {
        case UnaryOp::Neg:
          if (n.type.IsFloat()) return b_.CreateFNeg(a);
          return b_.CreateNeg(a, "", n.type.IsIndex());
        case UnaryOp::BitNot:
        case UnaryOp::LogicalNot: return b_.CreateNot(a);
      }
      TILEC_UNREACHABLE("unary op");
    }
    case NodeKind::Binary: return BinaryValue(static_cast<const Binary&>(*e));
    case NodeKind::Select: {
      auto& n = static_cast<const Select&>(*e);
      llvm::Value* c = E(n.cond);
      llvm::Value* t = E(n.true_value);
      llvm::Value* f = E(n.false_value);
      return b_.CreateSelect(c, t, f);
    }
    case NodeKind::Cond: return CondValue(static_cast<const Cond&>(*e));
    case NodeKind::Clamp: {
      auto& n = static_cast<const Clamp&>(*e);
      llvm::Value* v = E(n.value);
      llvm::Value* lo = E(n.lo);
      llvm::Value* hi = E(n.hi);
      return Arith(BinaryOp::Min, n.type, Arith(BinaryOp::Max, n.type, v, lo), hi);
    }
    case NodeKind::Cast: {
      auto& n = static_cast<const Cast&>(*e);
      return CastValue(E(n.value), n.value->type, n.type);
    }
    case NodeKind::Call: return CallValue(static_cast<const Call&>(*e));
    case NodeKind::ThreadIndex: return ThreadIndexValue(static_cast<const ThreadIndex&>(*e));
    case NodeKind::Broadcast: {
      auto& n = static_cast<const Broadcast&>(*e);
      return b_.CreateVectorSplat(static_cast<unsigned>(n.type.width), E(n.value));
    }
    case NodeKind::VectorExtract: {
      auto& n = static_cast<const VectorExtract&>(*e);
      return b_.CreateExtractElement(E(n.vector), static_cast<uint64_t>(n.lane));
    }
    case NodeKind::VectorInsert: {
      auto& n = static_cast<const VectorInsert&>(*e);
      llvm::Value* v = E(n.vector);
      return b_.CreateInsertElement(v, E(n.value), static_cast<uint64_t>(n.lane));
    }
    case NodeKind::VectorShuffle: {
      auto& n = static_cast<const VectorShuffle&>(*e);
      return b_.CreateShuffleVector(E(n.a), E(n.b), n.lanes);
    }
    default: TILEC_UNREACHABLE("expression kind {}", Name(e->kind));
  }
}

// The address of element `index` of a pointer or a named array.
llvm::Value* FunctionLowering::ElementAddress(const Expr& base, const Expr& index) {
  llvm::Value* ptr = nullptr;
  if (base->type.IsArray()) {
    ptr = Address(Lookup(static_cast<const VarRef&>(*base).name));
  } else {
    ptr = E(base);
  }
  llvm::Value* i = ToI64(E(index), index->type);
  return b_.CreateGEP(StorageTy(base->type), ptr, i);
}

llvm::Value* FunctionLowering::LoadValue(const Load& n) {
  const Type& c = n.base->type;
  llvm::Value* addr = ElementAddress(n.base, n.index);
  llvm::Type* ty = StorageTy(c);
  if (c.width == 1 && n.type.width > 1) ty = WithLanes(ty, n.type.width);  // N contiguous elements
  llvm::Value* v = nullptr;
  if (n.mask)  // llvm.masked.load: AVX-512 mask registers, or a blend
    v = b_.CreateMaskedLoad(ty, addr, llvm::Align(ScalarBytes(c)), E(n.mask),
                            llvm::Constant::getNullValue(ty));
  else
    v = b_.CreateAlignedLoad(ty, addr, llvm::Align(ScalarBytes(c)));
  if (c.Element().IsBool()) v = b_.CreateICmpNE(v, llvm::Constant::getNullValue(ty));
  return v;
}

llvm::Value* FunctionLowering::Arith(BinaryOp op, const Type& t, llvm::Value* a, llvm::Value* b) {
  bool is_float = t.IsFloat();
  bool is_signed = IsSignedType(t);
  bool nsw = t.IsIndex();  // index arithmetic never overflows (the generator sizes the index type)
  switch (op) {
    case BinaryOp::Add: return is_float ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b, "", false, nsw);
    case BinaryOp::Sub: return is_float ? b_.CreateFSub(a, b) : b_.CreateSub(a, b, "", false, nsw);
    case BinaryOp::Mul: return is_float ? b_.CreateFMul(a, b) : b_.CreateMul(a, b, "", false, nsw);
    case BinaryOp::Div:
      if (is_float) return b_.CreateFDiv(a, b);
      return is_signed ? b_.CreateSDiv(a, b) : b_.CreateUDiv(a, b);
    case BinaryOp::Mod: return is_signed ? b_.CreateSRem(a, b) : b_.CreateURem(a, b);
    case BinaryOp::Min:
      return b_.CreateBinaryIntrinsic(is_float    ? llvm::Intrinsic::minnum
                                      : is_signed ? llvm::Intrinsic::smin
                                                  : llvm::Intrinsic::umin,
                                      a, b);
    case BinaryOp::Max:
      return b_.CreateBinaryIntrinsic(is_float    ? llvm::Intrinsic::maxnum
                                      : is_signed ? llvm::Intrinsic::smax
                                                  : llvm::Intrinsic::umax,
                                      a, b);
    case BinaryOp::BitAnd:
    case BinaryOp::LogicalAnd: return b_.CreateAnd(a, b);
    case BinaryOp::BitOr:
    case BinaryOp::LogicalOr: return b_.CreateOr(a, b);
    case BinaryOp::BitXor: return b_.CreateXor(a, b);
    case BinaryOp::Shl: return b_.CreateShl(a, b);
    case BinaryOp::Shr: return is_signed ? b_.CreateAShr(a, b) : b_.CreateLShr(a, b);
    default: TILEC_UNREACHABLE("arithmetic op {}", Spelling(op));
  }
}

llvm::Value* FunctionLowering::Compare(BinaryOp op, const Type& t, llvm::Value* a, llvm::Value* b) {
  using P = llvm::CmpInst::Predicate;
  if (t.IsFloat()) {
    // C: every comparison with NaN is false except !=.
    static const P kFloat[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OLT,
                               P::FCMP_OGT, P::FCMP_OLE, P::FCMP_OGE};
    return b_.CreateFCmp(kFloat[static_cast<int>(op) - static_cast<int>(BinaryOp::Eq)], a, b);
  }
  static const P kSigned[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_SLT,
                              P::ICMP_SGT, P::ICMP_SLE, P::ICMP_SGE};
  static const P kUnsigned[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_ULT,
                                P::ICMP_UGT, P::ICMP_ULE, P::ICMP_UGE};
  int k = static_cast<int>(op) - static_cast<int>(BinaryOp::Eq);
  return b_.CreateICmp(IsSignedType(t) ? kSigned[k] : kUnsigned[k], a, b);  // bool: false < true
}

llvm::Value* FunctionLowering::BinaryValue(const Binary& n) {
  const Type& t = n.a->type;
  if (t.IsPointer()) {
    llvm::Value* ptr = E(n.a);
    llvm::Value* offset = ToI64(E(n.b), n.b->type);
    if (n.op == BinaryOp::Sub) offset = b_.CreateNeg(offset);
    return b_.CreateGEP(StorageTy(t), ptr, offset);
  }
  bool logical = n.op == BinaryOp::LogicalAnd || n.op == BinaryOp::LogicalOr;
  if (logical && t.width == 1 && MayTrapIn(n.b)) {
    // a && b: b only when a; a || b: b only when !a.
    bool is_and = n.op == BinaryOp::LogicalAnd;
    return Lazy(
        n.a, is_and, [&] { return E(n.b); }, b_.getInt1(!is_and));
  }
  llvm::Value* a = E(n.a);
  llvm::Value* b = E(n.b);
  if (IsComparison(n.op)) return Compare(n.op, t, a, b);
  return Arith(n.op, t, a, b);
}

// `Truth(cond) == when ? taken() : otherwise`, evaluating taken() only then.
llvm::Value* FunctionLowering::Lazy(const Expr& cond, bool when,
                                    const std::function<llvm::Value*()>& taken,
                                    llvm::Value* otherwise) {
  // A fast path's check made in a conditional block would not dominate the
  // run's test: exact paths inside (VersionedDeclares).
  auto saved = std::exchange(fast_checks_, nullptr);
  llvm::Value* c = Truth(cond);
  llvm::Value* v = IfThen(b_, when ? c : b_.CreateNot(c), taken, otherwise, "lazy");
  fast_checks_ = saved;
  return v;
}

llvm::Value* FunctionLowering::CondValue(const Cond& n) {
  auto saved = std::exchange(fast_checks_, nullptr);  // as in Lazy
  llvm::Value* c = Truth(n.cond);
  auto* then_block = llvm::BasicBlock::Create(ctx_, "cond.true", fn_);
  auto* else_block = llvm::BasicBlock::Create(ctx_, "cond.false", fn_);
  auto* join = llvm::BasicBlock::Create(ctx_, "cond.end", fn_);
  b_.CreateCondBr(c, then_block, else_block);
  b_.SetInsertPoint(then_block);
  llvm::Value* t = E(n.true_value);
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(else_block);
  llvm::Value* f = E(n.false_value);
  llvm::BasicBlock* else_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode* phi = b_.CreatePHI(t->getType(), 2);
  phi->addIncoming(t, then_end);
  phi->addIncoming(f, else_end);
  fast_checks_ = saved;
  return phi;
}

// The fast paths (inline_math.h) of several calls of `fn` on values of type
// `t`, computed on their arguments put end to end: LLVM splits every
// operation of the long vector into adjacent register-wide ones, so the
// calls' dependency chains run interleaved. Appends "some lane is outside
// the fast path" to fast_checks_ and returns each call's value (float lanes)
// and the lanes it holds for.
std::vector<FastMath> FunctionLowering::FastMathCalls(CallFn fn, const Type& t,
                                                      const std::vector<std::vector<llvm::Value*>>& calls) {
  TILEC_CHECK(fast_checks_ && !calls.empty(), "llvm: fast paths outside a versioned run");
  auto* float_ty = WithLanes(b_.getFloatTy(), t.width);
  auto joined = [&](size_t arg) {
    std::vector<llvm::Value*> parts;
    for (const auto& args : calls) parts.push_back(b_.CreateFPCast(args[arg], float_ty));
    return llvm::concatenateVectors(b_, parts);
  };
  int lanes = t.width * static_cast<int>(calls.size());
  FastMath m = fn == CallFn::Exp   ? ExpFast(b_, joined(0))
               : fn == CallFn::Log ? LogFast(b_, joined(0), Avx512Table(lanes))
                                   : PowFast(b_, joined(0), joined(1), Avx512Tables(lanes));
  fast_checks_->push_back(AnyLaneOutside(b_, m.ok));
  if (calls.size() == 1) return {m};
  std::vector<FastMath> out;
  for (size_t k = 0; k < calls.size(); ++k) {
    auto part = [&](llvm::Value* v) {
      return b_.CreateShuffleVector(v, llvm::createSequentialMask(static_cast<unsigned>(k) * t.width, t.width, 0));
    };
    out.push_back({part(m.value), part(m.ok)});
  }
  return out;
}

// C conversions, lane-wise.
llvm::Value* FunctionLowering::CastValue(llvm::Value* v, const Type& from, const Type& to) {
  llvm::Type* dst = ValueTy(to);
  if (to.IsBool()) {
    if (from.IsBool()) return v;
    llvm::Value* zero = llvm::Constant::getNullValue(v->getType());
    return from.IsFloat() ? b_.CreateFCmpUNE(v, zero) : b_.CreateICmpNE(v, zero);
  }
  if (from.IsBool()) return to.IsFloat() ? b_.CreateUIToFP(v, dst) : b_.CreateZExt(v, dst);
  if (from.IsFloat() && to.IsFloat()) return b_.CreateFPCast(v, dst);
  if (from.IsFloat()) return IsSignedType(to) ? b_.CreateFPToSI(v, dst) : b_.CreateFPToUI(v, dst);
  if (to.IsFloat()) return IsSignedType(from) ? b_.CreateSIToFP(v, dst) : UnsignedToFloat(v, dst);
  return b_.CreateIntCast(v, dst, IsSignedType(from));
}

// Unsigned integer -> float without `uitofp`: LLVM 19's SLP vectorizer
// narrows `uitofp (sext i32 %x to i64)` into `uitofp <2 x i32>`, dropping
// the sign extension (tests/unit/difftest_regressions_test.cc,
// SignedToU64ThenFloatInSelect). Narrower types go through a signed
// conversion of their zero extension to i64 (exact); u64 through the usual
// halving sequence, correctly rounded: x < 2^63 converts as signed, else
// (x >> 1 | x & 1) converts as signed and doubles (the low bit kept so
// that rounding sees it).
llvm::Value* FunctionLowering::UnsignedToFloat(llvm::Value* v, llvm::Type* dst) {
  llvm::Type* ty = v->getType();
  if (ty->getScalarSizeInBits() < 64) {
    llvm::Type* wide = llvm::IntegerType::get(ctx_, 64);
    if (auto* vt = llvm::dyn_cast<llvm::VectorType>(ty)) wide = llvm::VectorType::get(wide, vt->getElementCount());
    return b_.CreateSIToFP(b_.CreateZExt(v, wide), dst);
  }
  llvm::Value* one = llvm::ConstantInt::get(ty, 1);
  llvm::Value* small = b_.CreateICmpSGE(v, llvm::Constant::getNullValue(ty));
  llvm::Value* halved = b_.CreateOr(b_.CreateLShr(v, one), b_.CreateAnd(v, one));
  llvm::Value* big = b_.CreateSIToFP(halved, dst);
  big = b_.CreateFAdd(big, big);
  return b_.CreateSelect(small, b_.CreateSIToFP(v, dst), big);
}

llvm::Value* FunctionLowering::CallValue(const Call& n) {
  std::vector<llvm::Value*> args;
  for (const Expr& a : n.args) args.push_back(E(a));
  if (!LibmName(n.fn).empty()) return MathCall(n.fn, n.type, std::move(args), &n);
  llvm::Type* ty = ValueTy(n.type);
  auto intrinsic = [&](llvm::Intrinsic::ID id) -> llvm::Value* {
    return b_.CreateIntrinsic(id, {ty}, args);
  };
  switch (n.fn) {
    case CallFn::Sqrt: return intrinsic(llvm::Intrinsic::sqrt);
    case CallFn::Fabs: return intrinsic(llvm::Intrinsic::fabs);
    case CallFn::Floor: return intrinsic(llvm::Intrinsic::floor);
    case CallFn::Ceil: return intrinsic(llvm::Intrinsic::ceil);
    case CallFn::Round: return intrinsic(llvm::Intrinsic::round);  // C round: half away from zero
    case CallFn::Fma: return intrinsic(llvm::Intrinsic::fma);
    case CallFn::Mad: return intrinsic(llvm::Intrinsic::fmuladd);
    case CallFn::Fmod: return b_.CreateFRem(args[0], args[1]);  // frem is C's fmod
    default: break;
  }
  TILEC_UNREACHABLE("call fn {}", Name(n.fn));
}

// A library builtin: in float (half too) or double; inline IR for the f32
// functions inline_math.h has, else a vector through libmvec's variants when
// there are some, else lane by lane.
llvm::Value* FunctionLowering::MathCall(CallFn fn, const Type& t, std::vector<llvm::Value*> args,
                                        const sem::Call* node) {
  bool is_double = t.dtype == DataType::F64;
  llvm::Type* lane_ty = is_double ? b_.getDoubleTy() : b_.getFloatTy();
  for (llvm::Value*& a : args) a = b_.CreateFPCast(a, WithLanes(lane_ty, t.width));
  std::vector<VectorFunction> variants =
      VectorFunctions(fn, is_double ? DataType::F64 : DataType::F32, vector_isa_);
  auto library = [&]() -> llvm::Value* {
    if (t.width == 1) return ScalarMathCall(fn, lane_ty, args);
    if (!variants.empty()) return VectorMathCall(variants, t.width, args);
    llvm::Value* out = llvm::PoisonValue::get(WithLanes(lane_ty, t.width));
    for (int lane = 0; lane < t.width; ++lane) {
      std::vector<llvm::Value*> lane_args;
      for (llvm::Value* a : args)
        lane_args.push_back(b_.CreateExtractElement(a, static_cast<uint64_t>(lane)));
      out = b_.CreateInsertElement(out, ScalarMathCall(fn, lane_ty, lane_args),
                                   static_cast<uint64_t>(lane));
    }
    return out;
  };
  if (fast_checks_ && HasFastPath(fn, t)) {  // VersionedDeclares' fast version
    FastMath m = FastMathCalls(fn, t, {args}).front();
    if (node) fast_results_[node] = m;
    return b_.CreateFPCast(m.value, ValueTy(t));
  }
  llvm::Value* out = nullptr;
  if (auto fast = node ? fast_results_.find(node) : fast_results_.end(); fast != fast_results_.end()) {
    // Its exact version: the fast value where all of its lanes held, else
    // what lies beyond the fast path (pow's f64 tier, the library).
    auto beyond = [&] { return fn == CallFn::Pow ? PowBeyondFast(b_, args[0], args[1], library) : library(); };
    const char* name = fn == CallFn::Pow ? "pow.wide" : fn == CallFn::Exp ? "exp" : "log";
    out = IfThen(b_, AnyLaneOutside(b_, fast->second.ok), beyond, fast->second.value, name, /*unlikely=*/true);
  } else if (!is_double && fma_ && HasInlineMath(fn, t.width)) {
    out = fn == CallFn::Erf    ? InlineErf(b_, args[0], Avx512Table(t.width))
          : fn == CallFn::Tanh ? InlineTanh(b_, args[0])
          : fn == CallFn::Exp ? InlineExp(b_, args[0], library)
          : fn == CallFn::Log ? InlineLog(b_, args[0], library, Avx512Table(t.width))
                              : InlinePow(b_, args[0], args[1], library, Avx512Tables(t.width));
  } else {
    out = library();
  }
  return b_.CreateFPCast(out, ValueTy(t));
}

// One lane: LLVM's intrinsic where there is one (exp, log, pow, sin, cos),
// else libm's function (`name`, `namef` for float).
llvm::Value* FunctionLowering::ScalarMathCall(CallFn fn, llvm::Type* ty,
                                              const std::vector<llvm::Value*>& args) {
  if (HasMathIntrinsic(fn)) {
    static const std::map<CallFn, llvm::Intrinsic::ID> kIntrinsics = {
        {CallFn::Exp, llvm::Intrinsic::exp},
        {CallFn::Log, llvm::Intrinsic::log},
        {CallFn::Pow, llvm::Intrinsic::pow},
        {CallFn::Sin, llvm::Intrinsic::sin},
        {CallFn::Cos, llvm::Intrinsic::cos}};
    return b_.CreateIntrinsic(kIntrinsics.at(fn), {ty}, args);
  }
  std::string symbol(LibmName(fn));
  if (ty->isFloatTy()) symbol += "f";
  llvm::Function* existing = module_.getFunction(symbol);
  TILEC_CHECK(!existing || existing->isDeclaration(), "llvm: function '{}' hides libm's", symbol);
  llvm::FunctionCallee callee = module_.getOrInsertFunction(
      symbol, llvm::FunctionType::get(ty, std::vector<llvm::Type*>(args.size(), ty), false));
  if (auto* decl = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // As with -fno-math-errno: pure, so LLVM may hoist, drop and vectorize calls.
    decl->setDoesNotThrow();
    decl->setDoesNotAccessMemory();
    decl->setWillReturn();
  }
  llvm::CallInst* call = b_.CreateCall(callee, args);
  call->setDoesNotAccessMemory();
  return call;
}

// `width` lanes through `variants` (widest first): each chunk takes the
// widest variant that fits what is left; a tail narrower than every variant
// is padded (its extra lanes are poison and dropped).
llvm::Value* FunctionLowering::VectorMathCall(const std::vector<VectorFunction>& variants,
                                              int width, const std::vector<llvm::Value*>& args) {
  llvm::Type* lane_ty = llvm::cast<llvm::VectorType>(args[0]->getType())->getElementType();
  llvm::Value* out = llvm::PoisonValue::get(WithLanes(lane_ty, width));
  for (int first = 0; first < width;) {
    const VectorFunction* fn = &variants.back();
    for (const VectorFunction& v : variants) {
      if (v.lanes <= width - first) {
        fn = &v;
        break;
      }
    }
    int used = std::min(fn->lanes, width - first);
    auto* chunk_ty = llvm::FixedVectorType::get(lane_ty, static_cast<unsigned>(fn->lanes));
    std::vector<int> take(static_cast<size_t>(fn->lanes), -1);  // -1: poison
    for (int i = 0; i < used; ++i) take[static_cast<size_t>(i)] = first + i;
    std::vector<llvm::Value*> chunk_args;
    for (llvm::Value* a : args) chunk_args.push_back(b_.CreateShuffleVector(a, take));
    llvm::FunctionCallee callee = module_.getOrInsertFunction(
        fn->symbol,
        llvm::FunctionType::get(chunk_ty, std::vector<llvm::Type*>(args.size(), chunk_ty), false));
    if (auto* decl = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      decl->setDoesNotThrow();
      decl->setDoesNotAccessMemory();
      decl->setWillReturn();
    }
    llvm::CallInst* call = b_.CreateCall(callee, chunk_args);
    call->setDoesNotAccessMemory();
    if (used == width && fn->lanes == width) return call;
    // Widen the chunk to `width` lanes, then blend its lanes into `out`.
    std::vector<int> widen(static_cast<size_t>(width), -1), blend(static_cast<size_t>(width));
    for (int i = 0; i < width; ++i) {
      bool mine = i >= first && i < first + used;
      if (mine) widen[static_cast<size_t>(i)] = i - first;
      blend[static_cast<size_t>(i)] = mine ? width + i : i;
    }
    out = b_.CreateShuffleVector(out, b_.CreateShuffleVector(call, widen), blend);
    first += used;
  }
  return out;
}

llvm::Value* FunctionLowering::ThreadIndexValue(const ThreadIndex& n) {
  TILEC_CHECK(f_.is_kernel, "llvm: {}({}) in helper function '{}'", Name(n.which), n.dim, f_.name);
  int d = n.dim;
  llvm::Value* v = nullptr;
  switch (n.which) {
    case ThreadIndexKind::LocalId: v = local_id_[d]; break;
    case ThreadIndexKind::GroupId: v = group_id_[d]; break;
    case ThreadIndexKind::GlobalId:
      v = b_.CreateAdd(b_.CreateMul(group_id_[d], b_.getInt64(local_[d]), "", true, true),
                       local_id_[d], "", true, true);
      break;
    case ThreadIndexKind::LocalSize: v = b_.getInt64(local_[d]); break;
    case ThreadIndexKind::NumGroups: v = num_groups_[d]; break;
  }
  return b_.CreateTrunc(v, IndexTy());
}

}  // namespace tilec::hal::cpu
