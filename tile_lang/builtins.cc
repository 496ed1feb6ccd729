// Calls: math functions, casts, special ops (index, gather, scatter, shape,
// reshape, prng), inline builtins expanded into ops as PlaidML's builtins.cc
// does (relu, builtin_softmax, builtin_logsoftmax, builtin_binary_crossentropy,
// reverse_grad), and the
// bind-time functions mod and assert_*.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "support/error.h"
#include "tile_lang/bind_context.h"

namespace tilec::lang::bind {
namespace {

const std::map<std::string_view, ElemFn>& MathFunctions() {
  static const std::map<std::string_view, ElemFn> kFns = {
      {"exp", ElemFn::Exp},     {"log", ElemFn::Log},     {"sqrt", ElemFn::Sqrt},
      {"pow", ElemFn::Pow},     {"tanh", ElemFn::Tanh},   {"sin", ElemFn::Sin},
      {"cos", ElemFn::Cos},     {"tan", ElemFn::Tan},     {"sinh", ElemFn::Sinh},
      {"cosh", ElemFn::Cosh},   {"asin", ElemFn::Asin},   {"acos", ElemFn::Acos},
      {"atan", ElemFn::Atan},   {"abs", ElemFn::Abs},     {"floor", ElemFn::Floor},
      {"ceil", ElemFn::Ceil},   {"round", ElemFn::Round}, {"min", ElemFn::Min},
      {"max", ElemFn::Max},     {"sigmoid", ElemFn::Sigmoid}, {"erf", ElemFn::Erf},
  };
  return kFns;
}

// Builds ops for one call expression.
class CallBinder {
 public:
  CallBinder(Context& ctx, const ast::Expr& call, const std::string& dest)
      : ctx_(ctx), call_(call), dest_(dest), name_(call.name) {}

  Value Bind() {
    if (auto it = MathFunctions().find(name_); it != MathFunctions().end()) {
      ExpectArgs(Arity(it->second));
      return EmitElementwise(ctx_, it->second, Args(), call_.span, call_.span, Quoted(), dest_);
    }
    if (name_ == "as_float") return Cast({16, 32, 64}, [](int b) {
      return b == 16 ? DataType::F16 : b == 32 ? DataType::F32 : DataType::F64;
    });
    if (name_ == "as_int") return Cast({8, 16, 32, 64}, [](int b) {
      return b == 8 ? DataType::I8 : b == 16 ? DataType::I16 : b == 32 ? DataType::I32 : DataType::I64;
    });
    if (name_ == "as_uint") return Cast({8, 16, 32, 64}, [](int b) {
      return b == 8 ? DataType::U8 : b == 16 ? DataType::U16 : b == 32 ? DataType::U32 : DataType::U64;
    });
    if (name_ == "as_bool") return Cast({}, [](int) { return DataType::Bool; });
    if (name_ == "relu") return Relu();
    if (name_ == "index") return Index();
    if (name_ == "gather") return Gather();
    if (name_ == "scatter") return Scatter();
    if (name_ == "shape") return ShapeOf();
    if (name_ == "reshape") return Reshape();
    if (name_ == "prng_step") return PrngStep();
    if (name_ == "prng_value") return PrngOutput(0);
    if (name_ == "prng_state") return PrngOutput(1);
    if (name_ == "builtin_softmax") return Softmax(false);
    if (name_ == "builtin_logsoftmax") return Softmax(true);
    if (name_ == "builtin_binary_crossentropy") return BinaryCrossentropy();
    if (name_ == "reverse_grad") return ReverseGrad();
    if (name_ == "mod") return Mod();
    if (name_.starts_with("assert_")) return Assert();
    ctx_.Fail(call_.span, "unknown function '{}'", name_);
  }

 private:
  std::string Quoted() const { return fmt::format("'{}'", name_); }
  const ast::Expr& Arg(size_t k) const { return *call_.args[k]; }

  void ExpectArgs(size_t n) const {
    if (call_.args.size() != n)
      ctx_.Fail(call_.span, "'{}' takes {} argument{} but was given {}", name_, n, n == 1 ? "" : "s",
                call_.args.size());
  }
  void ExpectAtLeast(size_t n) const {
    if (call_.args.size() < n)
      ctx_.Fail(call_.span, "'{}' takes at least {} argument{} but was given {}", name_, n,
                n == 1 ? "" : "s", call_.args.size());
  }

  std::vector<Value> Args() {
    std::vector<Value> v;
    for (const auto& a : call_.args) v.push_back(BindExpr(ctx_, *a, ""));
    return v;
  }

  // Binds argument k and requires a tensor.
  std::string TensorArg(size_t k) {
    Value v = BindExpr(ctx_, Arg(k), "");
    return ctx_.TensorOf(v, Arg(k).span, fmt::format("argument {} of '{}'", k + 1, name_));
  }

  std::vector<int64_t> DimArgs(size_t from) {
    std::vector<int64_t> dims;
    for (size_t k = from; k < call_.args.size(); ++k) {
      int64_t d = RequireInt(ctx_, Arg(k), fmt::format("argument {} of '{}'", k + 1, name_));
      if (d < 0) ctx_.Fail(Arg(k).span, "dimension {} of '{}' is negative", d, name_);
      dims.push_back(d);
    }
    return dims;
  }

  template <typename F>
  Value Cast(std::vector<int> widths, F type_of) {
    ExpectArgs(widths.empty() ? 1 : 2);
    Value x = BindExpr(ctx_, Arg(0), "");
    ctx_.CheckNotPrng(x, Arg(0).span);
    DataType t = type_of(0);
    if (!widths.empty()) {
      int64_t bits = RequireInt(ctx_, Arg(1), fmt::format("the bit width of '{}'", name_));
      if (std::find(widths.begin(), widths.end(), bits) == widths.end())
        ctx_.Fail(Arg(1).span, "'{}' takes a bit width of {}, not {}", name_,
                  fmt::join(widths, ", "), bits);
      t = type_of(static_cast<int>(bits));
    }
    if (x.kind == Value::Kind::Const) return Value::Of(FoldCast(x.c, t, Arg(0).span));
    ElementwiseOp op;
    op.fn = ElemFn::Cast;
    op.operands.push_back(Operand{true, x.name, {}});
    op.compute_type = ctx_.ShapeOf(x.name).dtype;
    op.span = call_.span;
    return Push(std::move(op), Shape{t, ctx_.ShapeOf(x.name).dims});
  }

  // C conversion of a constant (the result stays a weak constant).
  Const FoldCast(const Const& c, DataType t, const SourceSpan& span) const {
    if (t == DataType::Bool) return Const::Int(c.IsTrue() ? 1 : 0);
    if (IsFloat(t)) {
      double v = c.AsDouble();
      if (t != DataType::F64 && std::isfinite(v) && std::fabs(v) <= std::numeric_limits<float>::max())
        v = static_cast<float>(v);
      return Const::Float(v);
    }
    int64_t v = c.i;
    if (c.is_float) {
      // Converting NaN or an out-of-range float to an integer is UB in C; refuse.
      double f = std::trunc(c.f);
      if (!std::isfinite(f) || f < -9223372036854775808.0 || f >= 9223372036854775808.0)
        ctx_.Fail(span, "cannot convert {} to {}", ToString(c), Name(t));
      v = static_cast<int64_t>(f);
    }
    return Const::Int(ToScalar(Const::Int(v), t).i);
  }

  Value Push(ElementwiseOp op, Shape shape) {
    op.output = ctx_.OutputName(dest_);
    ctx_.AddTensor(op.output, std::move(shape), call_.span);
    std::string name = op.output;
    ctx_.program().ops.emplace_back(std::in_place_type<ElementwiseOp>, std::move(op));
    return Value::Tensor(name);
  }

  std::string PushSpecial(SpecialFn fn, std::vector<std::string> inputs, Shape shape) {
    SpecialOp op;
    op.fn = fn;
    op.inputs = std::move(inputs);
    op.outputs.push_back(ctx_.OutputName(dest_));
    op.span = call_.span;
    ctx_.AddTensor(op.outputs[0], std::move(shape), call_.span);
    std::string name = op.outputs[0];
    ctx_.program().ops.push_back(std::move(op));
    return name;
  }

  // relu(x) = cond(cmp_lt(x, 0), 0, x), as PlaidML's inline definition.
  Value Relu() {
    ExpectArgs(1);
    Value x = BindExpr(ctx_, Arg(0), "");
    Value zero = Value::Of(Const::Int(0));
    Value neg = EmitElementwise(ctx_, ElemFn::CmpLt, {x, zero}, call_.span, call_.span, Quoted(), "");
    return EmitElementwise(ctx_, ElemFn::Cond, {neg, zero, x}, call_.span, call_.span, Quoted(), dest_);
  }

  Value Index() {
    ExpectArgs(2);
    std::string t = TensorArg(0);
    int64_t axis = RequireInt(ctx_, Arg(1), "the axis of 'index'");
    const Shape& s = ctx_.ShapeOf(t);
    if (axis < 0 || axis >= s.rank())
      ctx_.Fail(Arg(1).span, "axis {} of 'index' is out of range for {} (rank {})", axis,
                ToString(s), s.rank());
    ElementwiseOp op;
    op.fn = ElemFn::Index;
    op.operands.push_back(Operand{true, t, {}});
    op.compute_type = DataType::I32;
    op.axis = axis;
    op.span = call_.span;
    return Push(std::move(op), Shape{DataType::I32, s.dims});
  }

  void RequireIntegerTensor(const std::string& t, size_t arg) const {
    DataType dt = ctx_.ShapeOf(t).dtype;
    if (!IsInteger(dt))
      ctx_.Fail(Arg(arg).span, "the index tensor of '{}' must have an integer type, got {}", name_,
                ToString(ctx_.ShapeOf(t)));
  }
  void RequireRank(const std::string& t, size_t arg, int min_rank) const {
    if (ctx_.ShapeOf(t).rank() < min_rank)
      ctx_.Fail(Arg(arg).span, "argument {} of '{}' must have at least {} dimension{}, got {}",
                arg + 1, name_, min_rank, min_rank == 1 ? "" : "s", ToString(ctx_.ShapeOf(t)));
  }

  Value Gather() {
    ExpectArgs(2);
    std::string d = TensorArg(0);
    std::string i = TensorArg(1);
    RequireRank(d, 0, 1);
    RequireIntegerTensor(i, 1);
    const Shape& ds = ctx_.ShapeOf(d);
    Shape out{ds.dtype, ctx_.ShapeOf(i).dims};
    out.dims.insert(out.dims.end(), ds.dims.begin() + 1, ds.dims.end());
    return Value::Tensor(PushSpecial(SpecialFn::Gather, {d, i}, std::move(out)));
  }

  Value Scatter() {
    ExpectArgs(3);
    std::string e = TensorArg(0);
    std::string i = TensorArg(1);
    std::string v = TensorArg(2);
    RequireIntegerTensor(i, 1);
    RequireRank(v, 2, 1);
    const Shape& es = ctx_.ShapeOf(e);
    const Shape& is = ctx_.ShapeOf(i);
    if (es.rank() < is.rank() ||
        !std::equal(is.dims.begin(), is.dims.end(), es.dims.begin()))
      ctx_.Fail(call_.span, "'scatter' needs the index shape {} to be a prefix of the value shape {}",
                ToString(is), ToString(es));
    Shape out{es.dtype, {ctx_.ShapeOf(v).dims[0]}};
    out.dims.insert(out.dims.end(), es.dims.begin() + is.rank(), es.dims.end());
    return Value::Tensor(PushSpecial(SpecialFn::Scatter, {e, i, v}, std::move(out)));
  }

  Value ShapeOf() {
    ExpectArgs(1);
    std::string t = TensorArg(0);
    Shape out{DataType::I32, {static_cast<int64_t>(ctx_.ShapeOf(t).rank())}};
    return Value::Tensor(PushSpecial(SpecialFn::Shape, {t}, std::move(out)));
  }

  Value Reshape() {
    ExpectAtLeast(1);
    std::string t = TensorArg(0);
    Shape out{ctx_.ShapeOf(t).dtype, DimArgs(1)};
    int64_t from = ctx_.ShapeOf(t).ElementCount();
    int64_t to = ctx_.AtSpan(call_.span, [&] { return out.ElementCount(); });
    if (from != to)
      ctx_.Fail(call_.span, "'reshape' of {} ({} elements) to [{}] ({} elements)",
                ToString(ctx_.ShapeOf(t)), from, fmt::join(out.dims, ", "), to);
    return Value::Tensor(PushSpecial(SpecialFn::Reshape, {t}, std::move(out)));
  }

  Value PrngStep() {
    ExpectAtLeast(1);
    if (dest_.empty())
      ctx_.Fail(call_.span, "'prng_step' must be assigned directly to a name: T = prng_step(S, ...)");
    std::string s = TensorArg(0);
    const Shape state{DataType::U32, {3, 2048}};
    if (ctx_.ShapeOf(s) != state)
      ctx_.Fail(Arg(0).span, "'prng_step' needs a {} state tensor, got {}", ToString(state),
                ToString(ctx_.ShapeOf(s)));
    std::vector<int64_t> dims = DimArgs(1);
    SpecialOp op;
    op.fn = SpecialFn::PrngStep;
    op.inputs = {s};
    op.outputs = {ctx_.NewTemp(), ctx_.NewTemp()};
    op.span = call_.span;
    ctx_.AddTensor(op.outputs[0], Shape{DataType::F32, std::move(dims)}, call_.span);
    ctx_.AddTensor(op.outputs[1], state, call_.span);
    Program& prog = ctx_.program();
    Symbol sym;
    sym.kind = Symbol::Kind::Prng;
    sym.span = call_.span;
    sym.prng_op = prog.ops.size();
    prog.ops.push_back(std::move(op));
    ctx_.Define(dest_, sym);
    return Value::Prng(dest_);
  }

  // prng_value (k = 0) / prng_state (k = 1): one output of a prng_step.
  Value PrngOutput(int k) {
    ExpectArgs(1);
    Value t = BindExpr(ctx_, Arg(0), "");
    if (t.kind != Value::Kind::Prng)
      ctx_.Fail(Arg(0).span, "'{}' needs the result of prng_step (T = prng_step(S, ...))", name_);
    Symbol* sym = ctx_.FindMutable(t.name);
    auto& op = std::get<SpecialOp>(ctx_.program().ops.at(sym->prng_op));
    std::string& out = op.outputs.at(k);
    // The first whole-statement use names the output itself; later uses copy.
    if (!dest_.empty() && !sym->prng_taken[k]) {
      ctx_.CheckFree(dest_, call_.span, true);
      ctx_.Rename(out, dest_, call_.span);
      out = dest_;
    }
    sym->prng_taken[k] = true;
    return Value::Tensor(out);
  }

  // PlaidML's builtin_softmax / builtin_logsoftmax over axis 1 of a 2-D X:
  //   M[i, 0 : D0, 1] = >(X[i, j]);  E = exp(X - M);  N[i, 0 : D0, 1] = +(E[i, j]);
  //   softmax = E / N;  logsoftmax = (X - M) - log(N).
  Value Softmax(bool log) {
    ExpectArgs(3);
    std::string x = TensorArg(0);
    int64_t d0 = RequireInt(ctx_, Arg(1), fmt::format("argument 2 of '{}'", name_));
    int64_t d1 = RequireInt(ctx_, Arg(2), fmt::format("argument 3 of '{}'", name_));
    const Shape xs = ctx_.ShapeOf(x);
    if (xs.rank() != 2 || xs.dims[0] != d0 || xs.dims[1] != d1)
      ctx_.Fail(call_.span, "'{}' needs a 2-D tensor of dimensions [{}, {}], got {}", name_, d0, d1,
                ToString(xs));
    auto reduce = [&](ast::AggOp agg, const std::string& in) {
      Polynomial i, j, zero;
      i.terms["i"] = 1;
      j.terms["j"] = 1;
      ContractionOp op;
      op.output = ctx_.NewTemp();
      op.output_index = {i, zero};
      op.agg = agg;
      op.inputs.push_back(ContractionOp::Access{in, {i, j}});
      op.span = call_.span;
      std::string name = op.output;
      AddContraction(ctx_, std::move(op), Shape{ctx_.ShapeOf(in).dtype, {d0, 1}});
      return Value::Tensor(name);
    };
    auto emit = [&](ElemFn fn, std::vector<Value> args, const std::string& dest) {
      return EmitElementwise(ctx_, fn, args, call_.span, call_.span, Quoted(), dest);
    };
    Value m = reduce(ast::AggOp::Max, x);
    Value shifted = emit(ElemFn::Sub, {Value::Tensor(x), m}, "");
    Value e = emit(ElemFn::Exp, {shifted}, "");
    Value n = reduce(ast::AggOp::Sum, e.name);
    if (!log) return emit(ElemFn::Div, {e, n}, dest_);
    Value log_n = emit(ElemFn::Log, {n}, "");
    return emit(ElemFn::Sub, {shifted, log_n}, dest_);
  }

  // PlaidML's builtin_binary_crossentropy(O, T, S), elementwise:
  //   -T * log(O) - (1 - T) * log(1 - O)
  // S (the sample count in PlaidML's gradient) does not change the value.
  Value BinaryCrossentropy() {
    ExpectArgs(3);
    Value o = BindExpr(ctx_, Arg(0), "");
    Value t = BindExpr(ctx_, Arg(1), "");
    BindExpr(ctx_, Arg(2), "");
    auto emit = [&](ElemFn fn, std::vector<Value> args, const std::string& dest) {
      return EmitElementwise(ctx_, fn, args, call_.span, call_.span, Quoted(), dest);
    };
    Value one = Value::Of(Const::Float(1.0));
    Value lhs = emit(ElemFn::Mul, {emit(ElemFn::Neg, {t}, ""), emit(ElemFn::Log, {o}, "")}, "");
    Value rhs = emit(ElemFn::Mul, {emit(ElemFn::Sub, {one, t}, ""),
                                   emit(ElemFn::Log, {emit(ElemFn::Sub, {one, o}, "")}, "")},
                     "");
    return emit(ElemFn::Sub, {lhs, rhs}, dest_);
  }

  // reverse_grad(X, c) is X in a forward program (it only affects gradients).
  Value ReverseGrad() {
    ExpectArgs(2);
    Value x = BindExpr(ctx_, Arg(0), dest_);
    RequireConst(ctx_, Arg(1), "argument 2 of 'reverse_grad'");
    return x;
  }

  Value Mod() {
    ExpectArgs(2);
    Value a = BindExpr(ctx_, Arg(0), "");
    Value b = BindExpr(ctx_, Arg(1), "");
    for (const Value* v : {&a, &b}) {
      if (v->kind != Value::Kind::Const)
        ctx_.Fail(call_.span, "'mod' is evaluated at bind time and needs constant arguments; use '%' on tensors");
    }
    return EmitElementwise(ctx_, ElemFn::Mod, {a, b}, call_.span, call_.span, Quoted(), "");
  }

  Value Assert() {
    ExpectArgs(1);
    Const c = RequireConst(ctx_, Arg(0), fmt::format("the argument of '{}'", name_));
    if (!c.IsTrue()) ctx_.Fail(call_.span, "assertion '{}' failed", name_);
    return Value::Of(c);
  }

  Context& ctx_;
  const ast::Expr& call_;
  const std::string& dest_;
  const std::string& name_;
};

}  // namespace

Value BindCall(Context& ctx, const ast::Expr& call, const std::string& dest) {
  return CallBinder(ctx, call, dest).Bind();
}

}  // namespace tilec::lang::bind
