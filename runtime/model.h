// runtime::Model: an imported ONNX model compiled as one Program, its
// weights bound as constant inputs, run by the graph's own input and output
// names.
//
//   auto m = runtime::Model::Compile(onnx_import::ImportFile("net.onnx", {}), device);
//   auto outputs = m.Run({{"input", x}});   // by ONNX name
#pragma once

#include <map>
#include <memory>
#include <string>

#include "frontend/onnx/import.h"
#include "runtime/program.h"

namespace tilec::runtime {

class Model {
 public:
  static Model Compile(onnx_import::ImportedModel model, std::shared_ptr<hal::Device> device,
                       compiler::CompileOptions options = {});

  // One tensor per graph input, by its ONNX name (or its Tile name), with
  // its imported shape (UserError naming the input otherwise); the outputs by
  // ONNX name.
  std::map<std::string, lang::Tensor> Run(const std::map<std::string, lang::Tensor>& inputs,
                                          RunStats* stats = nullptr);

  const onnx_import::ImportedModel& imported() const { return *imported_; }
  Program& program() { return program_; }
  const Program& program() const { return program_; }

 private:
  Model(std::shared_ptr<const onnx_import::ImportedModel> m, Program p)
      : imported_(std::move(m)), program_(std::move(p)) {}
  std::shared_ptr<const onnx_import::ImportedModel> imported_;
  Program program_;
};

// The bound program of an imported model: its graph inputs and constants
// with their imported shapes, `layouts` by Tile name.
lang::Program BindModel(const onnx_import::ImportedModel& model);

}  // namespace tilec::runtime
