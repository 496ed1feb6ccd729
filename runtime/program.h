// runtime::Program: a Tile program compiled once for bound shapes and a
// device, run many times on new inputs. The public C++ API of Tilec.
//
//   auto device = hal::OpenDevice("opencl");
//   runtime::Program p = runtime::Program::Compile(source, {{"A", shape}, …}, *device);
//   auto outputs = p.Run({{"A", a}, …});
//
// Device buffers for inputs, outputs and temporaries are allocated at
// compile time and reused by every Run.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/pipeline.h"
#include "hal/hal.h"
#include "tile_lang/program.h"
#include "tile_lang/tensor.h"

namespace tilec::runtime {

struct RunStats {
  std::vector<uint64_t> kernel_ns;  // device time of each kernel, in order
  uint64_t total_ns = 0;            // sum of kernel_ns
};

class Program {
 public:
  // Parses, binds and compiles. `options.hw` is replaced by the device's
  // hardware model unless `keep_hw` is set.
  static Program Compile(const SourceFilePtr& source, const std::map<std::string, lang::Shape>& shapes,
                         std::shared_ptr<hal::Device> device, compiler::CompileOptions options = {},
                         bool keep_hw = false);
  static Program Compile(const lang::Program& bound, std::shared_ptr<hal::Device> device,
                         compiler::CompileOptions options = {}, bool keep_hw = false);

  // Pre: one tensor per program input with exactly its bound shape
  // (UserError naming the input otherwise).
  std::map<std::string, lang::Tensor> Run(const std::map<std::string, lang::Tensor>& inputs,
                                          RunStats* stats = nullptr);

  // Uploads inputs once, then runs the kernels only (for benchmarks).
  void Upload(const std::map<std::string, lang::Tensor>& inputs);
  RunStats Execute();
  std::map<std::string, lang::Tensor> Download();

  // The raw bytes of a tensor's device buffer (input, output or temporary),
  // padding included, in its physical layout; and overwriting them (tests
  // poison the padding this way). UserError for a tensor without a buffer
  // or bytes of the wrong size.
  std::vector<std::byte> ReadBuffer(const std::string& tensor) const;
  void WriteBuffer(const std::string& tensor, const std::vector<std::byte>& bytes);

  const compiler::CompiledProgram& compiled() const { return compiled_; }
  const lang::Program& bound() const { return compiled_.program; }
  hal::Device& device() const { return *device_; }
  // The target code of every kernel (OpenCL C, …).
  std::string TargetCode() const { return device_->EmitCode(compiled_.Module()); }

 private:
  Program() = default;
  void Allocate();

  std::shared_ptr<hal::Device> device_;
  compiler::CompiledProgram compiled_;
  std::unique_ptr<hal::Executable> executable_;
  std::map<std::string, std::unique_ptr<hal::DeviceBuffer>> buffers_;
};

}  // namespace tilec::runtime
