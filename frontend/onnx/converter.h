// What an op converter sees: the node's inputs (their Tile names, shapes and,
// when known at import time, their values), its attributes, and a writer for
// Tile statements. Converters are registered in the lists of ops_*.cc
// (ElementwiseConverters, …, below), which Registry() in graph.cc gathers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tile_lang/tensor.h"
#include "tile_lang/types.h"

namespace onnx {
class NodeProto;
class AttributeProto;
class TensorProto;
}  // namespace onnx

namespace tilec::onnx_import {

// A value of the graph as the converters see it.
struct Value {
  std::string tile;   // its name in the Tile program (empty until materialized, for a constant)
  lang::Shape shape;
  std::shared_ptr<const lang::Tensor> constant;  // known at import time
  bool IsConstant() const { return constant != nullptr; }
};

// A converter's complaint that it cannot convert this node (an attribute
// value or input it does not support); collected with the other nodes'.
struct Unsupported {
  std::string reason;
};

class Graph;

// One node being converted.
class NodeContext {
 public:
  NodeContext(Graph& graph, const onnx::NodeProto& node, int opset, int since);

  int opset() const { return opset_; }
  int since() const { return since_; }  // the registered converter's version
  const std::string& op() const;

  // Inputs; an omitted optional input (empty name) is absent.
  size_t input_count() const;
  bool HasInput(size_t i) const;
  const Value& In(size_t i) const;  // Unsupported if absent
  // The Tile expression for input i (a name, or a literal for a scalar constant).
  std::string Ref(size_t i);
  // Input i's value at import time; Unsupported (naming `what`) if it is not known.
  const lang::Tensor& ConstantIn(size_t i, std::string_view what) const;
  std::vector<int64_t> ConstantInts(size_t i, std::string_view what) const;

  // Attributes.
  bool Has(std::string_view name) const;
  int64_t Int(std::string_view name, int64_t fallback) const;
  float Float(std::string_view name, float fallback) const;
  std::string String(std::string_view name, std::string_view fallback) const;
  std::vector<int64_t> Ints(std::string_view name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> Floats(std::string_view name) const;
  std::optional<lang::Tensor> TensorAttr(std::string_view name) const;

  size_t output_count() const;
  bool WantsOutput(size_t i) const;  // present and non-empty
  // The Tile name output i gets (its ONNX name, made a Tile name), for a
  // statement that defines it.
  std::string OutName(size_t i);
  // Records output i as defined with this shape (the statements that define
  // OutName(i) have been emitted).
  void Define(size_t i, lang::Shape shape);
  // Output i is input value `v` itself (Identity, Dropout): nothing emitted.
  void Alias(size_t i, const Value& v);
  // Output i is a constant computed here.
  void DefineConstant(size_t i, lang::Tensor t);

  // A fresh temporary name ("Conv_0_pad").
  std::string Temp(std::string_view hint);
  // Appends one statement (without the ';').
  void Emit(const std::string& statement);
  // Makes `t` a constant input of the program and returns its name.
  std::string AddConstant(std::string_view hint, lang::Tensor t);

  [[noreturn]] void Fail(std::string reason) const;

 private:
  const onnx::AttributeProto* Attr(std::string_view name) const;
  Graph& graph_;
  const onnx::NodeProto& node_;
  int opset_, since_;
};

using Converter = std::function<void(NodeContext&)>;

// --- Helpers for writing Tile -----------------------------------------------------------

// A tensor's name without the escape its source spelling may have
// (`#input` is the tensor `input`).
inline std::string TensorName(const std::string& spelling) {
  return !spelling.empty() && spelling[0] == '#' ? spelling.substr(1) : spelling;
}

// "i0, i1, i2" for a rank.
std::vector<std::string> IndexNames(int rank, std::string_view prefix = "i");
std::string Join(const std::vector<std::string>& parts);
std::string JoinInts(const std::vector<int64_t>& v);
// "a + 3", "2*a - 1": coeff*var + offset, simplified.
std::string Affine(int64_t coeff, std::string_view var, int64_t offset);
// A literal for a scalar constant ("1.5", "(-2)", "3"); nullopt for NaN or inf.
std::optional<std::string> Literal(double v, lang::DataType type);
// An axis attribute in [-rank, rank) made non-negative; Unsupported otherwise.
int64_t NormalizeAxis(const NodeContext& c, int64_t axis, int rank);
// NumPy broadcasting of two shapes' dimensions; Unsupported if incompatible.
std::vector<int64_t> BroadcastDims(const NodeContext& c, const std::vector<int64_t>& a,
                                   const std::vector<int64_t>& b);
// The Tile name of a cast of `expr` to `to` ("as_float(X, 32)").
std::string CastExpr(const std::string& expr, lang::DataType to);
int64_t Product(const std::vector<int64_t>& dims, size_t from = 0, size_t to = SIZE_MAX);
// The Tilec element type of an ONNX TensorProto data type; nullopt if none.
std::optional<lang::DataType> ElementType(int onnx_type);

// Registration: converters for an op type from a given opset on.
struct Registration {
  std::string op;
  int since;
  Converter convert;
};
std::vector<Registration> ElementwiseConverters();
std::vector<Registration> NnConverters();
std::vector<Registration> ShapeConverters();
std::vector<Registration> ReduceConverters();
std::vector<Registration> IndexConverters();

}  // namespace tilec::onnx_import
