#include "runtime/program.h"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/layout_pack.h"
#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"

namespace tilec::runtime {

Program Program::Compile(const SourceFilePtr& source,
                         const std::map<std::string, lang::Shape>& shapes,
                         std::shared_ptr<hal::Device> device, compiler::CompileOptions options,
                         bool keep_hw) {
  lang::Program bound = lang::Bind(lang::Parse(source), shapes);
  return Compile(bound, std::move(device), std::move(options), keep_hw);
}

Program Program::Compile(const lang::Program& bound, std::shared_ptr<hal::Device> device,
                         compiler::CompileOptions options, bool keep_hw) {
  TILEC_CHECK(device != nullptr, "no device");
  if (!keep_hw) options.hw = device->hardware_model();
  Program p;
  p.device_ = std::move(device);
  p.compiled_ = compiler::CompileProgram(bound, options);
  p.executable_ = p.device_->Build(p.compiled_);
  p.Allocate();
  return p;
}

void Program::Allocate() {
  auto add = [&](const std::string& name) {
    if (buffers_.count(name)) return;
    const lang::TensorDecl& t = compiled_.program.Tensor(name);
    size_t bytes = static_cast<size_t>(t.layout.elements) * lang::ByteSize(t.shape.dtype);
    try {
      buffers_[name] = device_->Allocate(bytes);
    } catch (const DeviceError& e) {
      // Name the tensor and the kernels that would use it.
      std::string kernels;
      int count = 0;
      for (const compiler::CompiledKernel& k : compiled_.kernels) {
        const compiler::KernelSpec& spec = k.spec;
        bool uses = std::count(spec.outputs.begin(), spec.outputs.end(), name) +
                        std::count(spec.inputs.begin(), spec.inputs.end(), name) > 0;
        if (uses) kernels += fmt::format("{}'{}'", count++ ? ", " : "", k.code.function.name);
      }
      throw DeviceError(fmt::format("tensor '{}' ({}, {} bytes){}: {}", name, ToString(t.shape),
                                    bytes,
                                    count == 0 ? "" : (count == 1 ? " used by kernel " : " used by kernels ") + kernels,
                                    e.what()),
                        e.build_log());
    }
  };
  for (const std::string& n : compiled_.program.inputs) add(n);
  for (const std::string& n : compiled_.program.outputs) add(n);
  for (const compiler::CompiledKernel& k : compiled_.kernels) {
    for (const std::string& n : k.spec.outputs) add(n);
    for (const std::string& n : k.spec.inputs) add(n);
  }
}

void Program::Upload(const std::map<std::string, lang::Tensor>& inputs) {
  const lang::Program& prog = compiled_.program;
  for (const std::string& name : prog.inputs) {
    auto it = inputs.find(name);
    if (it == inputs.end()) TILEC_USER_ERROR("no tensor given for input '{}'", name);
    const lang::TensorDecl& t = prog.Tensor(name);
    if (!(it->second.shape() == t.shape))
      TILEC_USER_ERROR("input '{}' has shape {} but the program was compiled for {}", name,
                       ToString(it->second.shape()), ToString(t.shape));
    std::vector<std::byte> bytes = PackToLayout(it->second, t.layout);
    device_->Write(*buffers_.at(name), bytes.data(), bytes.size());
  }
  for (const auto& [name, tensor] : inputs)
    if (std::find(prog.inputs.begin(), prog.inputs.end(), name) == prog.inputs.end())
      TILEC_USER_ERROR("'{}' is not an input of the program", name);
}

RunStats Program::Execute() {
  RunStats stats;
  for (size_t i = 0; i < compiled_.kernels.size(); ++i) {
    const compiler::KernelSpec& spec = compiled_.kernels[i].spec;
    std::vector<hal::DeviceBuffer*> args;
    for (const std::string& n : spec.outputs) args.push_back(buffers_.at(n).get());
    for (const std::string& n : spec.inputs) args.push_back(buffers_.at(n).get());
    uint64_t ns = executable_->Launch(i, args);
    stats.kernel_ns.push_back(ns);
    stats.total_ns += ns;
  }
  return stats;
}

std::map<std::string, lang::Tensor> Program::Download() {
  std::map<std::string, lang::Tensor> out;
  for (const std::string& name : compiled_.program.outputs) {
    const lang::TensorDecl& t = compiled_.program.Tensor(name);
    const hal::DeviceBuffer& b = *buffers_.at(name);
    std::vector<std::byte> bytes(b.size());
    device_->Read(b, bytes.data(), bytes.size());
    out.emplace(name, UnpackFromLayout(bytes.data(), bytes.size(), t.shape, t.layout));
  }
  return out;
}

std::map<std::string, lang::Tensor> Program::Run(const std::map<std::string, lang::Tensor>& inputs,
                                                 RunStats* stats) {
  Upload(inputs);
  RunStats s = Execute();
  if (stats) *stats = s;
  return Download();
}

}  // namespace tilec::runtime
