// Kernels: the kernel plan, the IR between Lower and code generation
// (docs/architecture.md, "The IRs") — a bound program cut into kernels.
//
// Lower (passes/lower.h) turns a bound Program into a KernelPlan: an ordered list of
// kernels, each reading and writing whole tensors in device buffers, plus the
// temporaries that live between kernels. A kernel is one of
//  * Contraction — one contraction as a flat table (ir/flat.h), with the
//    elementwise operations downstream of it fused in as post-ops;
//  * Elementwise — elementwise operations only, as a flat table with
//    generate_contraction == false whose indices are the output dimensions;
//  * Fill — writes zeros, or copies the `default` tensor, into a
//    contraction's output before a contraction that does not cover it;
//  * Special — gather, scatter, reshape, shape, prng: their own generators;
//  * Direct — a contraction the tiled generator cannot express yet
//    (fractional index polynomials): one work item per output element, every
//    polynomial evaluated exactly;
//  * RowGroup — reductions along the last axis (row max, row sum) and the
//    elementwise operations around them, over one row space, in one kernel
//    whose work items each take whole rows (passes/fuse_reductions.h): the
//    producers of a reduction are computed inside it, its consumers after
//    it, while the row stays in cache.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/flat.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

enum class KernelKind : uint8_t { Contraction, Elementwise, Fill, Special, Direct, RowGroup };
std::string_view Name(KernelKind kind);
// Contraction, Elementwise and Fill kernels: the kinds described by a flat
// table (KernelSpec::flat), which the flat form tiles and the tuner tunes.
inline bool IsFlatKind(KernelKind kind) {
  return kind == KernelKind::Contraction || kind == KernelKind::Elementwise || kind == KernelKind::Fill;
}

// coordinate d of the kernel's output at flat point idx:
//     constant[d] + sum_i coeffs[d][i] * idx[i]
// (used by index() post-ops, which need true output coordinates).
struct OutputCoords {
  std::vector<std::vector<int64_t>> coeffs;
  std::vector<int64_t> constant;
};

// A RowGroup kernel's ops. Every tensor is row-major; the row space is
// `rows` (a tensor's dims but the last) and a row holds `length` values.
// The ops (in program order) are row reductions — a contraction whose
// output is [rows..., 1] and whose inputs are [rows..., length], read at the
// output's row indices and one reduced index — and elementwise ops whose
// output is [rows..., length] (a "full" tensor) or [rows..., 1] (one value
// per row). Other tensors they read are inputs of the kernel, broadcast
// NumPy-style to [rows..., length].
struct RowGroupSpec {
  std::vector<lang::Op> ops;
  std::vector<int64_t> rows;
  int64_t length = 1;
};

struct KernelSpec {
  std::string name;  // "kernel_0", … (unique in the plan)
  KernelKind kind = KernelKind::Contraction;

  // Contraction, Elementwise, Fill (Elementwise and Fill: the indices walk
  // the output's buffer, one per plain dimension and two, d/B and d%B, per
  // blocked one; Fill has the output as access 0 and, when copying, the
  // default tensor as access 1 with a single Ident post-op).
  FlatContraction flat;
  OutputCoords coords;
  // Contraction after a Fill: store only elements some valid point reached
  // (the Fill already wrote the rest).
  bool store_reached_only = false;

  // Special: the op. Direct: the contraction.
  lang::SpecialOp special;
  lang::ContractionOp contraction;
  // RowGroup: the ops (its flat.indices are the row dims and the row, for
  // the runtime's work estimate; flat has no accesses).
  RowGroupSpec row_group;

  // Buffers, in kernel parameter order: outputs first, then inputs. No tensor
  // appears twice; a tensor both read and written appears as an output.
  std::vector<std::string> outputs;
  std::vector<std::string> inputs;

  // A relayout kernel that ChooseLayouts inserted: why ("why: estimated
  // <t> ms as-is, <t> ms with relayouts ..."); printed by ToString.
  std::string why;
};

struct KernelPlan {
  std::vector<KernelSpec> kernels;
  // Tensors defined by a kernel and read by a later one, but not program
  // outputs: the runtime allocates them.
  std::vector<std::string> temporaries;
  // Tensors Lower introduced (relayout copies) or whose layout it chose (a
  // temporary given its consumer's layout): they replace the bound
  // program's declarations.
  std::vector<lang::TensorDecl> new_tensors;
  // The layout decisions of ChooseLayouts (passes/choose_layouts.h), one a line,
  // printed first by ToString.
  std::vector<std::string> layout_decisions;
};

// Every kernel in order, with its kind, buffers and (for flat kernels) its
// flat table — the `--emit kernels` dump.
std::string ToString(const KernelPlan& plan);

}  // namespace tilec::compiler
