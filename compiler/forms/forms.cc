#include "compiler/forms/forms.h"

#include <fmt/format.h>

#include <algorithm>

#include "compiler/ir/kernel_signature.h"
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

std::string ToString(const FormPlan& plan) {
  std::string s = fmt::format("form {}\n", Name(plan.form));
  for (const auto& [name, value] : plan.params) s += fmt::format("{} {}\n", name, value);
  return s + plan.text;
}

std::string HashPlan(const FormPlan& plan) { return Fnv1a64Hex(ToString(plan)); }

const std::vector<const FormImpl*>& FormsFor(KernelKind kind, const CodegenOptions& options) {
  // The registry: one ordered list per device class and kernel kind. A new
  // form is one line here, where it is tried.
  static const std::vector<const FormImpl*> cpu = {&VectorForm(), &ReduceForm(), &TransposeForm(), &FlatForm()};
  static const std::vector<const FormImpl*> gpu = {&FlatForm()};
  static const std::vector<const FormImpl*> special = {&SpecialForm()};
  static const std::vector<const FormImpl*> row_group = {&RowGroupForm()};
  switch (kind) {
    case KernelKind::Contraction:
    case KernelKind::Elementwise:
    case KernelKind::Fill: return !options.use_local && options.vectorize ? cpu : gpu;
    case KernelKind::Special:
    case KernelKind::Direct: return special;
    case KernelKind::RowGroup: return row_group;
  }
  TILEC_UNREACHABLE("a kernel of an unknown kind");
}

std::optional<GeneratedKernel> GenerateCpuForm(const KernelSpec& spec, const lang::Program& program,
                                               const HardwareModel& hw, const CodegenOptions& options) {
  for (const FormImpl* form : FormsFor(spec.kind, options)) {
    if (form->id() == Form::Flat) break;  // the flat form needs a tile first
    if (std::optional<FormPlan> plan = form->Plan(spec, program, hw, options)) return form->Emit(*plan);
  }
  return std::nullopt;
}

GeneratedKernel GenerateKernel(const KernelSpec& spec, const lang::Program& program,
                               const std::vector<int64_t>& tile, const HardwareModel& hw,
                               const CodegenOptions& options) {
  CodegenOptions with_tile = options;
  with_tile.tile = tile;
  for (const FormImpl* form : FormsFor(spec.kind, with_tile))
    if (std::optional<FormPlan> plan = form->Plan(spec, program, hw, with_tile)) return form->Emit(*plan);
  TILEC_UNREACHABLE("kernel {}: no form takes it", spec.name);
}

}  // namespace tilec::compiler
