#include "compiler/codegen.h"

#include <cctype>

#include "compiler/sem/verify.h"
#include "support/error.h"

namespace tilec::compiler {

std::string ParamName(const std::string& tensor, int position) {
  std::string s = "p" + std::to_string(position) + "_";
  for (char c : tensor) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

std::vector<sem::Param> BufferParams(const KernelSpec& spec, const lang::Program& program) {
  std::vector<sem::Param> params;
  int pos = 0;
  for (const std::string& t : spec.outputs) {
    sem::Type elem = sem::Type::Scalar(program.Tensor(t).shape.dtype);
    params.push_back({ParamName(t, pos++), sem::Type::Pointer(elem, sem::AddressSpace::Global), true});
  }
  for (const std::string& t : spec.inputs) {
    sem::Type elem = sem::Type::Scalar(program.Tensor(t).shape.dtype);
    params.push_back(
        {ParamName(t, pos++), sem::Type::Pointer(elem, sem::AddressSpace::Global, true), true});
  }
  return params;
}

sem::Expr BufferOf(const KernelSpec& spec, const std::vector<sem::Expr>& params,
                   const std::string& tensor) {
  for (size_t p = 0; p < spec.outputs.size(); ++p)
    if (spec.outputs[p] == tensor) return params.at(p);
  for (size_t p = 0; p < spec.inputs.size(); ++p)
    if (spec.inputs[p] == tensor) return params.at(spec.outputs.size() + p);
  TILEC_UNREACHABLE("kernel {} has no buffer for {}", spec.name, tensor);
}

GeneratedKernel GenerateKernel(const KernelSpec& spec, const lang::Program& program,
                               const std::vector<int64_t>& tile, const HardwareModel& hw,
                               const CodegenOptions& options) {
  GeneratedKernel k;
  switch (spec.kind) {
    case KernelKind::Contraction:
    case KernelKind::Elementwise:
    case KernelKind::Fill: k = GenerateFlatKernel(spec, program, tile, hw, options); break;
    case KernelKind::Special:
    case KernelKind::Direct: k = GenerateSpecialKernel(spec, program); break;
  }
  sem::Verify(k.function);
  return k;
}

}  // namespace tilec::compiler
