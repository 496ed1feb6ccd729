// The importer's state while it walks a graph: the values by ONNX name, the
// Tile statements written so far, the names taken, and the constant inputs.
// Internal to frontend/onnx.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "frontend/onnx/converter.h"

namespace onnx {
class ModelProto;
}

namespace tilec::onnx_import {

class Graph {
 public:
  explicit Graph(std::string origin) : origin_(std::move(origin)) {}

  const std::string& origin() const { return origin_; }
  std::map<std::string, Value> values;  // by ONNX name

  // A Tile tensor name made from `hint` (any text), not taken before, as
  // the source spells it (`#input` for an escaped name; see TensorName).
  std::string Unique(std::string_view hint);

  // Statements go to the program, or, while a node is folded, to the fold's
  // own little program.
  void Emit(const std::string& statement);
  // The Tile name of a constant value as an input: of the program (kept in
  // the value, so it is added once) or of the fold in progress.
  std::string Materialize(Value& v, std::string_view hint);
  std::string AddConstant(std::string_view hint, std::shared_ptr<const lang::Tensor> t);

  // Folding: BeginFold, the converter runs, then EndFold evaluates what it
  // emitted and returns the values of `outputs` (Tile names) by name.
  void BeginFold();
  std::map<std::string, lang::Tensor> EndFold(const std::map<std::string, lang::Shape>& outputs);
  void AbortFold();
  bool folding() const { return folding_; }

  // The node being converted, for origins.
  void SetCurrentNode(std::string description) { node_ = std::move(description); }
  void RecordOrigin(const std::string& tile) { origins_[TensorName(tile)].push_back(node_); }

  const std::vector<std::string>& statements() const { return statements_; }
  // The constants, moved out of the graph: a tensor no one else holds any
  // more is moved, not copied (every constant tensor of the import is made
  // with make_shared<lang::Tensor>, a non-const object, so moving from it
  // is allowed), the others are copied. Clear `values` first.
  std::vector<std::pair<std::string, lang::Tensor>> TakeConstants();
  std::map<std::string, std::vector<std::string>>& origins() { return origins_; }

 private:
  std::string origin_;
  std::set<std::string> used_;
  std::vector<std::string> statements_;
  std::vector<std::pair<std::string, std::shared_ptr<const lang::Tensor>>> constants_;
  std::map<std::string, std::vector<std::string>> origins_;
  std::string node_;
  bool folding_ = false;
  std::vector<std::string> fold_statements_;
  std::vector<std::pair<std::string, std::shared_ptr<const lang::Tensor>>> fold_inputs_;
  std::map<const lang::Tensor*, std::string> fold_names_;
};

// A TensorProto's contents as a host tensor; Unsupported for a type Tilec
// has no element type for, or external data.
lang::Tensor ReadTensorProto(const onnx::TensorProto& t);
// The converters by op type, each with its versions in ascending order.
const std::map<std::string, std::vector<Registration>>& Registry();

}  // namespace tilec::onnx_import
