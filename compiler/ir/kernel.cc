// The kernel plan's printers (ir/kernel.h).
#include "compiler/ir/kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "compiler/ir/flat.h"
#include "tile_lang/program.h"

namespace tilec::compiler {
namespace {

using lang::ast::AggOp;
using lang::ast::CombOp;
using lang::ContractionOp;
using lang::ElementwiseOp;

std::string_view AggText(AggOp op) {
  switch (op) {
    case AggOp::Sum: return "sum";
    case AggOp::Prod: return "product";
    case AggOp::Max: return "max";
    case AggOp::Min: return "min";
    case AggOp::Assign: break;
  }
  return "assign";
}

// "row group: rows [1024] of 1024 values …": the ops a RowGroup kernel
// computes, for `--emit kernels`.
std::string RowGroupText(const KernelSpec& spec) {
  const RowGroupSpec& g = spec.row_group;
  std::string s = fmt::format("  row group: rows [{}] of {} values; one pass per reduction, then the stores\n",
                              fmt::join(g.rows, ", "), g.length);
  for (const lang::Op& op : g.ops) {
    if (auto* c = std::get_if<ContractionOp>(&op)) {
      std::vector<std::string> in;
      for (const auto& a : c->inputs) in.push_back(a.tensor);
      std::string_view sep = c->comb == CombOp::Mul ? " * " : c->comb == CombOp::Add ? " + " : ", ";
      s += fmt::format("  reduce {} = {}({}) along the row\n", c->output, AggText(c->agg), fmt::join(in, sep));
    } else {
      s += fmt::format("  {}\n", ToString(std::get<ElementwiseOp>(op)));
    }
  }
  return s;
}

}  // namespace

std::string_view Name(KernelKind kind) {
  switch (kind) {
    case KernelKind::Contraction: return "contraction";
    case KernelKind::Elementwise: return "elementwise";
    case KernelKind::Fill: return "fill";
    case KernelKind::Special: return "special";
    case KernelKind::Direct: return "direct";
    case KernelKind::RowGroup: return "row group";
  }
  return "?";
}

std::string ToString(const KernelPlan& plan) {
  std::string out;
  for (const std::string& d : plan.layout_decisions) out += fmt::format("layout {}\n", d);
  if (!plan.layout_decisions.empty()) out += "\n";
  for (const KernelSpec& k : plan.kernels) {
    out += fmt::format("{} ({}): writes {}; reads {}\n", k.name, Name(k.kind),
                       fmt::join(k.outputs, ", "), fmt::join(k.inputs, ", "));
    if (!k.why.empty()) out += fmt::format("  relayout {}\n", k.why);
    if (k.kind == KernelKind::Special)
      out += fmt::format("  {}\n", lang::Name(k.special.fn));
    else if (k.kind == KernelKind::RowGroup)
      out += RowGroupText(k);
    else if (k.kind == KernelKind::Direct)
      out += "  (fractional or non-injective indices, or layouts the flat form cannot express: one work item "
             "per output element)\n";
    else
      out += ToString(k.flat);
    out += "\n";
  }
  if (!plan.temporaries.empty())
    out += fmt::format("temporaries: {}\n", fmt::join(plan.temporaries, ", "));
  return out;
}

}  // namespace tilec::compiler
