// Converters for ONNX's elementwise ops: unary math and activations, binary
// arithmetic and comparisons with NumPy broadcasting (Tile broadcasts the
// same way), Where, Cast, Clip, and the identities.
#include <fmt/format.h>

#include "frontend/onnx/converter.h"

namespace tilec::onnx_import {
namespace {

lang::Shape BroadcastShape(const NodeContext& c, size_t first, size_t count, lang::DataType type) {
  std::vector<int64_t> dims = c.In(first).shape.dims;
  for (size_t i = first + 1; i < first + count; ++i) dims = BroadcastDims(c, dims, c.In(i).shape.dims);
  return lang::Shape{type, dims};
}

// Y = f(X) where `pattern` has "{0}" for X (and "{1}", "{2}" for attributes).
Converter Unary(std::string pattern, bool float_only = true) {
  return [pattern, float_only](NodeContext& c) {
    const Value& x = c.In(0);
    if (float_only && !lang::IsFloat(x.shape.dtype))
      c.Fail(fmt::format("{} of {} is not supported (floats only)", c.op(), lang::Name(x.shape.dtype)));
    std::string name = c.OutName(0);
    c.Emit(fmt::format("{} = {}", name, fmt::format(fmt::runtime(pattern), c.Ref(0))));
    c.Define(0, x.shape);
  };
}

// Y = A op B, broadcast; `pattern` has {0} and {1}.
Converter Binary(std::string pattern, bool to_bool = false) {
  return [pattern, to_bool](NodeContext& c) {
    lang::DataType t = to_bool ? lang::DataType::Bool : c.In(0).shape.dtype;
    lang::Shape shape = BroadcastShape(c, 0, 2, t);
    std::string a = c.Ref(0), b = c.Ref(1);
    std::string name = c.OutName(0);
    c.Emit(fmt::format("{} = {}", name, fmt::format(fmt::runtime(pattern), a, b)));
    c.Define(0, shape);
  };
}

// Sum, Mean, Max, Min over any number of inputs.
Converter Variadic(std::string pattern, bool mean = false) {
  return [pattern, mean](NodeContext& c) {
    size_t n = c.input_count();
    lang::Shape shape = BroadcastShape(c, 0, n, c.In(0).shape.dtype);
    std::string acc = c.Ref(0);
    for (size_t i = 1; i < n; ++i) acc = fmt::format(fmt::runtime(pattern), acc, c.Ref(i));
    if (mean && n > 1) acc = fmt::format("({}) / {}", acc, n);
    std::string name = c.OutName(0);
    c.Emit(fmt::format("{} = {}", name, acc));
    c.Define(0, shape);
  };
}

std::string F(double v) { return *Literal(v, lang::DataType::F32); }

void Identity(NodeContext& c) { c.Alias(0, c.In(0)); }

void Dropout(NodeContext& c) {
  // Inference: the input passes unchanged; a requested mask is all true.
  if (c.since() >= 12 && c.HasInput(2)) {
    const lang::Tensor& training = c.ConstantIn(2, "training_mode");
    if (training.GetInt(0) != 0) c.Fail("training mode is not supported (inference only: it needs random numbers)");
  }
  if (c.since() < 7 && c.Int("is_test", 0) == 0) c.Fail("training mode is not supported (is_test is 0)");
  c.Alias(0, c.In(0));
  if (c.WantsOutput(1)) {
    std::string name = c.OutName(1);
    c.Emit(fmt::format("{} = as_bool({} == {})", name, c.Ref(0), c.Ref(0)));
    c.Define(1, lang::Shape{lang::DataType::Bool, c.In(0).shape.dims});
  }
}

// Pow: the result has the base's type (an integer power is computed in f64
// and converted back).
void Pow(NodeContext& c) {
  lang::DataType t = c.In(0).shape.dtype;
  lang::Shape shape{t, BroadcastDims(c, c.In(0).shape.dims, c.In(1).shape.dims)};
  std::string a = c.Ref(0), b = c.Ref(1), name = c.OutName(0);
  if (lang::IsFloat(t))
    c.Emit(fmt::format("{} = pow({}, {})", name, a, lang::IsFloat(c.In(1).shape.dtype) ? b : CastExpr(b, t)));
  else
    c.Emit(fmt::format("{} = {}", name,
                       CastExpr(fmt::format("pow({}, {})", CastExpr(a, lang::DataType::F64), CastExpr(b, lang::DataType::F64)), t)));
  c.Define(0, shape);
}

void Sign(NodeContext& c) {
  lang::DataType t = c.In(0).shape.dtype;
  std::string x = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{} = {}", name, CastExpr(fmt::format("({} > 0 ? 1 : ({} < 0 ? -1 : 0))", x, x), t)));
  c.Define(0, c.In(0).shape);
}

// Round: halves to even (Tile's round() takes them away from zero).
void Round(NodeContext& c) {
  std::string x = c.Ref(0), name = c.OutName(0), f = c.Temp("floor"), d = c.Temp("frac");
  c.Emit(fmt::format("{} = floor({})", f, x));
  c.Emit(fmt::format("{} = {} - {}", d, x, f));
  c.Emit(fmt::format("{} = ({} < 0.5 ? {} : ({} > 0.5 ? {} + 1 : ({} % 2 == 0 ? {} : {} + 1)))", name, d, f, d, f, f, f,
                     f));
  c.Define(0, c.In(0).shape);
}

void IsInf(NodeContext& c) {
  lang::DataType t = c.In(0).shape.dtype;
  double max = t == lang::DataType::F64 ? 1.7976931348623157e308 : t == lang::DataType::F16 ? 65504.0 : 3.4028234663852886e38;
  std::string x = c.Ref(0), name = c.OutName(0), m = *Literal(max, t);
  bool pos = c.Int("detect_positive", 1) != 0, neg = c.Int("detect_negative", 1) != 0;
  std::string e = pos && neg ? fmt::format("abs({}) > {}", x, m)
                  : pos      ? fmt::format("{} > {}", x, m)
                  : neg      ? fmt::format("{} < -{}", x, m)
                             : fmt::format("{} != {} && {} == {}", x, x, x, x);  // false
  c.Emit(fmt::format("{} = {}", name, e));
  c.Define(0, lang::Shape{lang::DataType::Bool, c.In(0).shape.dims});
}

// Mod: fmod 1 is C's remainder (the sign of the dividend); fmod 0, for
// integers, Python's (the sign of the divisor).
void Mod(NodeContext& c) {
  lang::Shape shape{c.In(0).shape.dtype, BroadcastDims(c, c.In(0).shape.dims, c.In(1).shape.dims)};
  std::string a = c.Ref(0), b = c.Ref(1), name = c.OutName(0);
  if (c.Int("fmod", 0) != 0) {
    c.Emit(fmt::format("{} = {} % {}", name, a, b));
  } else {
    if (lang::IsFloat(shape.dtype)) c.Fail("fmod 0 on floats is not supported (ONNX requires fmod 1 for them)");
    std::string r = c.Temp("rem");
    c.Emit(fmt::format("{} = {} % {}", r, a, b));
    c.Emit(fmt::format("{} = ({} != 0 && ({} < 0) != ({} < 0) ? {} + {} : {})", name, r, r, b, r, b, r));
  }
  c.Define(0, shape);
}

void IsNaN(NodeContext& c) {
  std::string x = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{} = {} != {}", name, x, x));
  c.Define(0, lang::Shape{lang::DataType::Bool, c.In(0).shape.dims});
}

void CastLike(NodeContext& c) {
  lang::DataType to = c.In(1).shape.dtype;
  std::string name = c.OutName(0);
  c.Emit(fmt::format("{} = {}", name, CastExpr(c.Ref(0), to)));
  c.Define(0, lang::Shape{to, c.In(0).shape.dims});
}

void Shrink(NodeContext& c) {
  std::string x = c.Ref(0), name = c.OutName(0), l = F(c.Float("lambd", 0.5f)), b = F(c.Float("bias", 0.0f));
  c.Emit(fmt::format("{} = ({} < -{} ? {} + {} : ({} > {} ? {} - {} : 0))", name, x, l, x, b, x, l, x, b));
  c.Define(0, c.In(0).shape);
}

void ThresholdedRelu(NodeContext& c) {
  std::string x = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{} = ({} > {} ? {} : 0)", name, x, F(c.Float("alpha", 1.0f)), x));
  c.Define(0, c.In(0).shape);
}

void Celu(NodeContext& c) {
  std::string x = c.Ref(0), name = c.OutName(0), a = F(c.Float("alpha", 1.0f));
  c.Emit(fmt::format("{} = max(0.0, {}) + min(0.0, {} * (exp({} / {}) - 1))", name, x, a, x, a));
  c.Define(0, c.In(0).shape);
}

void Cast(NodeContext& c) {
  auto to = ElementType(static_cast<int>(c.Int("to", 0)));
  if (!to) c.Fail(fmt::format("cast to ONNX type {} is not supported", c.Int("to", 0)));
  std::string name = c.OutName(0);
  c.Emit(fmt::format("{} = {}", name, CastExpr(c.Ref(0), *to)));
  c.Define(0, lang::Shape{*to, c.In(0).shape.dims});
}

void Clip(NodeContext& c) {
  std::string x = c.Ref(0);
  std::string lo, hi;
  if (c.since() < 11) {
    if (c.Has("min")) lo = F(c.Float("min", 0));
    if (c.Has("max")) hi = F(c.Float("max", 0));
  } else {
    if (c.HasInput(1)) lo = c.Ref(1);
    if (c.HasInput(2)) hi = c.Ref(2);
  }
  // Comparisons keep NaN (as ONNX's Clip does): min/max would drop it.
  std::string e = x;
  if (!lo.empty()) e = fmt::format("({} < {} ? {} : {})", e, lo, lo, e);
  if (!hi.empty()) e = fmt::format("({} > {} ? {} : {})", e, hi, hi, e);
  std::string name = c.OutName(0);
  c.Emit(fmt::format("{} = {}", name, e));
  c.Define(0, c.In(0).shape);
}

void LeakyRelu(NodeContext& c) {
  std::string x = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{} = ({} < 0 ? {} * {} : {})", name, x, F(c.Float("alpha", 0.01f)), x, x));
  c.Define(0, c.In(0).shape);
}

void Elu(NodeContext& c) {
  std::string x = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{} = ({} < 0 ? {} * (exp({}) - 1) : {})", name, x, F(c.Float("alpha", 1.0f)), x, x));
  c.Define(0, c.In(0).shape);
}

void Selu(NodeContext& c) {
  std::string x = c.Ref(0), name = c.OutName(0);
  double alpha = c.Float("alpha", 1.67326319217681884765625f), gamma = c.Float("gamma", 1.05070102214813232421875f);
  c.Emit(fmt::format("{} = {} * ({} <= 0 ? {} * exp({}) - {} : {})", name, F(gamma), x, F(alpha), x, F(alpha), x));
  c.Define(0, c.In(0).shape);
}

void HardSigmoid(NodeContext& c) {
  std::string x = c.Ref(0), name = c.OutName(0);
  std::string t = fmt::format("{} * {} + {}", F(c.Float("alpha", 0.2f)), x, F(c.Float("beta", 0.5f)));
  c.Emit(fmt::format("{} = max(0.0, min(1.0, {}))", name, t));
  c.Define(0, c.In(0).shape);
}

void HardSwish(NodeContext& c) {
  std::string x = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{} = {} * max(0.0, min(1.0, {} * {} + 0.5))", name, x, x, F(1.0 / 6.0)));
  c.Define(0, c.In(0).shape);
}

void PRelu(NodeContext& c) {
  lang::Shape shape = BroadcastShape(c, 0, 2, c.In(0).shape.dtype);
  std::string x = c.Ref(0), s = c.Ref(1), name = c.OutName(0);
  c.Emit(fmt::format("{} = ({} < 0 ? {} * {} : {})", name, x, s, x, x));
  c.Define(0, shape);
}

void Where(NodeContext& c) {
  std::vector<int64_t> dims = BroadcastDims(c, c.In(0).shape.dims, c.In(1).shape.dims);
  dims = BroadcastDims(c, dims, c.In(2).shape.dims);
  std::string cond = c.Ref(0), a = c.Ref(1), b = c.Ref(2), name = c.OutName(0);
  c.Emit(fmt::format("{} = ({} ? {} : {})", name, cond, a, b));
  c.Define(0, lang::Shape{c.In(1).shape.dtype, dims});
}

void Constant(NodeContext& c) {
  if (auto t = c.TensorAttr("value")) {
    c.DefineConstant(0, *t);
  } else if (c.Has("value_float")) {
    lang::Tensor t(lang::Shape{lang::DataType::F32, {}});
    t.SetDouble(0, c.Float("value_float", 0));
    c.DefineConstant(0, t);
  } else if (c.Has("value_int")) {
    lang::Tensor t(lang::Shape{lang::DataType::I64, {}});
    t.SetInt(0, c.Int("value_int", 0));
    c.DefineConstant(0, t);
  } else if (c.Has("value_floats")) {
    std::vector<float> v = c.Floats("value_floats");
    lang::Tensor t(lang::Shape{lang::DataType::F32, {static_cast<int64_t>(v.size())}});
    for (size_t i = 0; i < v.size(); ++i) t.SetDouble(static_cast<int64_t>(i), v[i]);
    c.DefineConstant(0, t);
  } else if (c.Has("value_ints")) {
    std::vector<int64_t> v = c.Ints("value_ints");
    lang::Tensor t(lang::Shape{lang::DataType::I64, {static_cast<int64_t>(v.size())}});
    for (size_t i = 0; i < v.size(); ++i) t.SetInt(static_cast<int64_t>(i), v[i]);
    c.DefineConstant(0, t);
  } else {
    c.Fail("only tensor, float, int, floats and ints values are supported");
  }
}

}  // namespace

std::vector<Registration> ElementwiseConverters() {
  std::vector<Registration> r = {
      {"Identity", 1, Identity},
      {"Dropout", 1, Dropout},
      {"Dropout", 7, Dropout},
      {"Dropout", 12, Dropout},
      {"Dropout", 13, Dropout},
      {"Cast", 6, Cast},
      {"CastLike", 15, CastLike},
      {"Round", 11, Round},
      {"IsInf", 10, IsInf},
      {"IsNaN", 9, IsNaN},
      {"IsNaN", 13, IsNaN},
      {"Mod", 10, Mod},
      {"Mod", 13, Mod},
      {"Shrink", 9, Shrink},
      {"ThresholdedRelu", 10, ThresholdedRelu},
      {"Celu", 12, Celu},
      {"Asinh", 9, Unary("log({0} + sqrt({0} * {0} + 1))")},
      {"Acosh", 9, Unary("log({0} + sqrt({0} * {0} - 1))")},
      {"Atanh", 9, Unary("0.5 * log((1 + {0}) / (1 - {0}))")},
      {"Cast", 13, Cast},
      {"Constant", 1, Constant},
      {"Constant", 12, Constant},
      {"Clip", 6, Clip},
      {"Clip", 11, Clip},
      {"Clip", 12, Clip},
      {"Clip", 13, Clip},
      {"Relu", 6, Unary("relu({0})", false)},
      {"Relu", 14, Unary("relu({0})", false)},
      {"LeakyRelu", 6, LeakyRelu},
      {"Elu", 6, Elu},
      {"Selu", 6, Selu},
      {"HardSigmoid", 6, HardSigmoid},
      {"HardSwish", 14, HardSwish},
      {"PRelu", 7, PRelu},
      {"PRelu", 9, PRelu},
      {"PRelu", 16, PRelu},
      {"Sigmoid", 6, Unary("sigmoid({0})")},
      {"Sigmoid", 13, Unary("sigmoid({0})")},
      {"Tanh", 6, Unary("tanh({0})")},
      {"Tanh", 13, Unary("tanh({0})")},
      {"Exp", 6, Unary("exp({0})")},
      {"Exp", 13, Unary("exp({0})")},
      {"Log", 6, Unary("log({0})")},
      {"Log", 13, Unary("log({0})")},
      {"Sqrt", 6, Unary("sqrt({0})")},
      {"Sqrt", 13, Unary("sqrt({0})")},
      {"Erf", 9, Unary("erf({0})")},
      {"Erf", 13, Unary("erf({0})")},
      {"Sin", 7, Unary("sin({0})")},
      {"Cos", 7, Unary("cos({0})")},
      {"Tan", 7, Unary("tan({0})")},
      {"Asin", 7, Unary("asin({0})")},
      {"Acos", 7, Unary("acos({0})")},
      {"Atan", 7, Unary("atan({0})")},
      {"Sinh", 9, Unary("sinh({0})")},
      {"Cosh", 9, Unary("cosh({0})")},
      {"Softplus", 1, Unary("log(exp({0}) + 1)")},
      {"Softsign", 1, Unary("{0} / (1 + abs({0}))")},
      {"Abs", 6, Unary("abs({0})", false)},
      {"Abs", 13, Unary("abs({0})", false)},
      {"Neg", 6, Unary("-{0}", false)},
      {"Neg", 13, Unary("-{0}", false)},
      {"Reciprocal", 6, Unary("1 / {0}")},
      {"Reciprocal", 13, Unary("1 / {0}")},
      {"Floor", 6, Unary("floor({0})")},
      {"Floor", 13, Unary("floor({0})")},
      {"Ceil", 6, Unary("ceil({0})")},
      {"Ceil", 13, Unary("ceil({0})")},
      {"Sign", 9, Sign},
      {"Sign", 13, Sign},
      {"Not", 1, Unary("!{0}", false)},
      {"Add", 7, Binary("{0} + {1}")},
      {"Add", 13, Binary("{0} + {1}")},
      {"Add", 14, Binary("{0} + {1}")},
      {"Sub", 7, Binary("{0} - {1}")},
      {"Sub", 13, Binary("{0} - {1}")},
      {"Sub", 14, Binary("{0} - {1}")},
      {"Mul", 7, Binary("{0} * {1}")},
      {"Mul", 13, Binary("{0} * {1}")},
      {"Mul", 14, Binary("{0} * {1}")},
      {"Div", 7, Binary("{0} / {1}")},
      {"Div", 13, Binary("{0} / {1}")},
      {"Div", 14, Binary("{0} / {1}")},
      {"Pow", 7, Pow},
      {"Pow", 12, Pow},
      {"Pow", 13, Pow},
      {"Pow", 15, Pow},
      {"Equal", 7, Binary("{0} == {1}", true)},
      {"Equal", 11, Binary("{0} == {1}", true)},
      {"Equal", 13, Binary("{0} == {1}", true)},
      {"Less", 7, Binary("{0} < {1}", true)},
      {"Less", 9, Binary("{0} < {1}", true)},
      {"Less", 13, Binary("{0} < {1}", true)},
      {"LessOrEqual", 12, Binary("{0} <= {1}", true)},
      {"Greater", 7, Binary("{0} > {1}", true)},
      {"Greater", 9, Binary("{0} > {1}", true)},
      {"Greater", 13, Binary("{0} > {1}", true)},
      {"GreaterOrEqual", 12, Binary("{0} >= {1}", true)},
      {"And", 7, Binary("{0} && {1}", true)},
      {"Or", 7, Binary("{0} || {1}", true)},
      {"Xor", 7, Binary("{0} != {1}", true)},
      {"Where", 9, Where},
      {"Where", 16, Where},
      {"Sum", 8, Variadic("{} + {}")},
      {"Sum", 13, Variadic("{} + {}")},
      {"Mean", 8, Variadic("{} + {}", true)},
      {"Mean", 13, Variadic("{} + {}", true)},
      {"Max", 8, Variadic("max({}, {})")},
      {"Max", 12, Variadic("max({}, {})")},
      {"Max", 13, Variadic("max({}, {})")},
      {"Min", 8, Variadic("min({}, {})")},
      {"Min", 12, Variadic("min({}, {})")},
      {"Min", 13, Variadic("min({}, {})")},
  };
  return r;
}

}  // namespace tilec::onnx_import
