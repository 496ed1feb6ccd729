#include "runtime/launch_table.h"

namespace tilec::runtime {
namespace {

// The points of a kernel's flat index space; -1 for kernels without one
// (special, direct) or beyond 2^40.
int64_t IndexPoints(const compiler::KernelSpec& spec) {
  if (spec.kind == compiler::KernelKind::Special || spec.kind == compiler::KernelKind::Direct) return -1;
  int64_t points = 1;
  for (const compiler::FlatIndex& idx : spec.flat.indices) {
    if (idx.range <= 0 || points > (int64_t{1} << 40) / idx.range) return -1;
    points *= idx.range;
  }
  return points;
}

}  // namespace

hal::LaunchTable LaunchTableOf(const compiler::CompiledProgram& compiled) {
  hal::LaunchTable table;
  for (const compiler::CompiledKernel& k : compiled.kernels) {
    hal::LaunchTable::Kernel kernel;
    kernel.function = k.code.function.name;
    kernel.global = k.code.global;
    kernel.local = k.code.local;
    auto buffer = [&](const std::string& name, bool written) {
      const lang::TensorDecl& t = compiled.program.Tensor(name);
      kernel.buffers.push_back({name, written, t.shape.dtype, t.layout.image});
    };
    for (const std::string& n : k.spec.outputs) buffer(n, true);
    for (const std::string& n : k.spec.inputs) buffer(n, false);
    kernel.points = IndexPoints(k.spec);
    table.kernels.push_back(std::move(kernel));
  }
  return table;
}

}  // namespace tilec::runtime
