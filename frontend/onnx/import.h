// The ONNX importer: an ONNX model (a file or its bytes) becomes one Tile
// program and the constants it reads.
//
//   onnx::ImportedModel m = onnx::ImportFile("resnet18.onnx", {});
//   m.source        // function (Input, W_conv1, …) -> (Output) { … }
//   m.constants     // the initializers, by Tile input name (constant inputs)
//
// Each ONNX node is turned into Tile statements by the converter registered
// for its op type and the model's opset (Registry in graph.h); nodes whose inputs are
// all known at import time (shape arithmetic, small constants) are folded
// into constants by the reference evaluator; a BatchNormalization that
// follows a Conv with constant weights is folded into them. Shapes are
// static: the graph inputs' dimensions come from the model, and a dimension
// the model leaves symbolic from `ImportOptions::shapes`. Every node that
// cannot be converted is listed in one UserError.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tile_lang/tensor.h"
#include "tile_lang/types.h"

namespace tilec::onnx_import {

struct ImportOptions {
  // Shapes of graph inputs by ONNX name: required for an input with a
  // symbolic or unknown dimension, and must agree with the model's fixed ones.
  std::map<std::string, lang::Shape> shapes;
  // Graph inputs whose values are known when the model is imported (a
  // shape, axes or sizes that the model takes as an input): they are folded
  // into the program like initializers and are no longer inputs.
  std::map<std::string, lang::Tensor> values;
};

// A graph input or output: its ONNX name, its name in the Tile program and
// its shape.
struct ModelTensor {
  std::string onnx_name;
  std::string tile_name;
  lang::Shape shape;
};

struct ImportedModel {
  std::string origin;                // the path or name given to Import
  std::string source;                // the Tile program
  std::vector<ModelTensor> inputs;   // the graph's inputs (not the constants), in order
  std::vector<ModelTensor> outputs;  // the graph's outputs, in order
  // The program's constant inputs (weights, folded tensors), by Tile name:
  // the program's other inputs.
  std::map<std::string, lang::Tensor> constants;
  // The ONNX nodes ("name (OpType)") each Tile tensor the program defines comes from.
  std::map<std::string, std::vector<std::string>> origins;
  int64_t opset = 0;  // of the default domain
  std::string producer;  // "pytorch 2.1", …
  int folded_nodes = 0;      // nodes computed at import time
  int folded_batch_norms = 0;
};

// `origin` names the model in messages (a path, "<bytes>").
ImportedModel Import(std::string_view bytes, std::string_view origin, const ImportOptions& options);
// UserError naming the path if it cannot be read.
ImportedModel ImportFile(const std::string& path, const ImportOptions& options);

// A serialized ONNX TensorProto (the `.pb` files of ONNX's tests) as a host
// tensor, and its name in the file; UserError naming `origin` if malformed.
std::pair<std::string, lang::Tensor> ReadTensor(std::string_view bytes, std::string_view origin);

// Whether a path names an ONNX model (by its extension, `.onnx`).
bool IsModelPath(std::string_view path);

// The supported ops: op type and the opsets each converter covers.
struct SupportedOp {
  std::string op;
  int since = 0;  // the first opset of the ONNX version this converter implements
};
std::vector<SupportedOp> SupportedOps();

}  // namespace tilec::onnx_import
