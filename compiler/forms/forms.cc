#include "compiler/forms/forms.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/error.h"

namespace tilec::compiler {

const char* Name(Form form) {
  switch (form) {
    case Form::Flat: return "flat";
    case Form::Vector: return "vector";
    case Form::Reduce: return "reduce";
    case Form::Transpose: return "transpose";
    case Form::RowGroup: return "row group";
    case Form::Special: return "special";
  }
  return "?";
}

std::optional<GeneratedKernel> GenerateCpuForm(const KernelSpec& spec, const lang::Program& program,
                                               const HardwareModel& hw, const CodegenOptions& options) {
  // The vector form does not zero a blocked layout's padding yet (ir/flat.h:
  // padding); without post-ops a contraction leaves 0 there anyway.
  bool padding =
      !spec.flat.padding.empty() && (!spec.flat.post_ops.empty() || !spec.flat.generate_contraction);
  if (options.use_local || !options.vectorize || padding) return std::nullopt;
  std::optional<GeneratedKernel> k = GenerateVectorKernel(spec, program, hw, options.vector_rows);
  if (k) {
    k->form = Form::Vector;
  } else if ((k = GenerateReduceKernel(spec, program, hw))) {
    k->form = Form::Reduce;
  } else if ((k = GenerateTransposeKernel(spec, program, hw))) {
    k->form = Form::Transpose;
  }
  return k;
}

GeneratedKernel GenerateKernel(const KernelSpec& spec, const lang::Program& program,
                               const std::vector<int64_t>& tile, const HardwareModel& hw,
                               const CodegenOptions& options) {
  switch (spec.kind) {
    case KernelKind::Contraction:
    case KernelKind::Elementwise:
    case KernelKind::Fill: {
      if (std::optional<GeneratedKernel> k = GenerateCpuForm(spec, program, hw, options)) return std::move(*k);
      return GenerateFlatKernel(spec, program, tile, hw, options);
    }
    case KernelKind::Special:
    case KernelKind::Direct: {
      GeneratedKernel k = GenerateSpecialKernel(spec, program);
      k.form = Form::Special;
      return k;
    }
    case KernelKind::RowGroup: {
      GeneratedKernel k = GenerateRowGroupKernel(spec, program, hw);
      k.form = Form::RowGroup;
      return k;
    }
  }
  TILEC_UNREACHABLE("kernel {} has an unknown kind", spec.name);
}

}  // namespace tilec::compiler
