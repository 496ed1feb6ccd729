// The flat contraction: one contraction kernel as a table of numbers.
//
// Flatten (passes/flatten.h) turns a bound ContractionOp into this form; the cost
// model, the tile search, read plans, thread plans and code generation all
// work on it. It is the table the seed prints:
//
//     Range O D K
//     ci 64 0 1 1          <- index ci: range 64, stride 0 in O, 1 in D, 1 in K
//     ...
//     off 0 -14400 0       <- constant element offset per tensor
//     Constraint: (0,0,-1,0,0,-1,0) <= -1
//
// Semantics. The contraction runs over every integer point `idx` of the box
// 0 <= idx[i] < indices[i].range (every index has lower bound 0: Flatten
// shifts them). A point is valid when every constraint holds:
//     sum_i lhs[i] * idx[i] <= rhs.
// At a valid point, access a reads element
//     offset + sum_i strides[i] * idx[i]
// of its tensor's buffer; Flatten guarantees the element is inside
// [0, limit) at every valid point (the tensor-bound constraints ensure it),
// so the constraints are the only guard a kernel needs. Loads at invalid
// points may be clamped into [0, limit) and their values discarded.
// Each valid point contributes comb(inputs) (combination op, computed in
// agg_type, except Eq which compares in the inputs' type) to the output
// element under the aggregation op. After aggregation, each output element
// (in output-index order) feeds the post-ops, elementwise operations in SSA
// form whose operands name the contraction's output, earlier post-op results,
// post-op input tensors (accesses after the inputs, read with their own
// strides at the point's output indices) or scalars. `kernel_outputs` are the
// tensors the kernel writes (the contraction output and/or post-op results).
//
// Access order: [0] the output, [1 .. num_inputs] the contraction inputs in
// combination order, then one access per post-op input tensor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tile_lang/ast.h"
#include "tile_lang/program.h"
#include "tile_lang/types.h"

namespace tilec::compiler {

struct FlatIndex {
  std::string name;   // the Tile index variable
  int64_t range = 1;  // >= 1; values are 0 .. range-1
  bool operator==(const FlatIndex&) const = default;
};

struct FlatAccess {
  std::string tensor;  // tensor name in the program
  lang::DataType dtype = lang::DataType::F32;
  int64_t offset = 0;            // element offset at idx = 0
  std::vector<int64_t> strides;  // one per index (elements)
  int64_t limit = 0;             // buffer size in elements (padding included)
  bool operator==(const FlatAccess&) const = default;
};

// One-sided: sum_i lhs[i] * idx[i] <= rhs.
struct FlatConstraint {
  std::vector<int64_t> lhs;  // one per index
  int64_t rhs = 0;
  bool operator==(const FlatConstraint&) const = default;
};

struct FlatContraction {
  std::string name = "kernel";  // kernel name, for printing
  std::string comment;          // the contraction as Tile-like text, for printing

  std::vector<FlatIndex> indices;
  // Each Tile index variable of the contraction as an affine form of the flat
  // indices: var = offset + sum_i coeffs[i] * idx[i] (the shift to 0, and the
  // split of a variable read through a blocked layout into var/B and var%B).
  // Empty for elementwise-form kernels.
  struct VarForm {
    std::string var;
    std::vector<int64_t> coeffs;
    int64_t offset = 0;
    bool operator==(const VarForm&) const = default;
  };
  std::vector<VarForm> vars;
  std::vector<FlatAccess> accesses;  // output, inputs, post-op inputs (see above)
  int num_inputs = 0;                // contraction inputs: 1, 2, or 3 (Cond)
  std::vector<FlatConstraint> constraints;
  // Output points that are a blocked layout's padding (nChw8c with C = 17:
  // c = 8*(c/8) + c%8 >= 17) fail one of these; every kernel output stores 0
  // there, whatever the post-ops compute (oneDNN's zero-padding contract:
  // relu(x) + 1 must not leave ones in the padding). Post-op input loads at
  // such points are clamped into [0, limit) and their values discarded.
  // Empty when the output space has no padding, or when the kernel is a
  // contraction whose post-ops keep its zeros there (conv + ReLU: Lower
  // checks them on a zero input, reading no other tensor).
  std::vector<FlatConstraint> padding;

  lang::DataType agg_type = lang::DataType::F32;  // the output's element type
  lang::ast::AggOp agg_op = lang::ast::AggOp::Sum;
  lang::ast::CombOp comb_op = lang::ast::CombOp::None;
  // False for elementwise-only kernels expressed in this form (no
  // aggregation: the "contraction" just enumerates the output).
  bool generate_contraction = true;

  std::vector<lang::ElementwiseOp> post_ops;
  std::vector<std::string> kernel_outputs;  // tensors written by the kernel

  int num_indices() const { return static_cast<int>(indices.size()); }
  const FlatAccess& output() const { return accesses.at(0); }
  // Post-op input accesses follow the contraction inputs.
  int first_post_op_input() const { return 1 + num_inputs; }
};

// Throws InternalError if the table is inconsistent: an access or constraint
// whose stride count differs from the index count, a range < 1, a missing
// output, num_inputs not matching the combination op or the access count.
void Verify(const FlatContraction& flat);
// Whether `tile` has one size per index of `flat`, each in [1, range].
bool TileFits(const FlatContraction& flat, const std::vector<int64_t>& tile);

// The least and greatest element offsets that access `a` reaches over the
// points where every constraint of `flat` that mentions no index in `free`
// holds, the indices in `free` (a flag per index) taking their whole
// ranges; nullopt when no such point exists. Indices that share a
// constraint are enumerated together when they span at most 65536 points
// (exact), else bounded by their ranges (an outer bound).
struct AddressSpan {
  int64_t lo = 0, hi = 0;
};
std::optional<AddressSpan> ReachedAddresses(const FlatContraction& flat, const FlatAccess& a,
                                            const std::vector<bool>& free);

// The seed's debug table:
//   Contraction <name>:
//   <comment>
//   Range O D K
//   ci 64 0 1 1
//   ...
//   off 0 -14400 0
//   Constraint: (0,0,-1,0,0,-1,0) <= -1
//   ...
//   Padding unless: (0,8,1,0) <= 16   (only when there is padding)
//   Output operations:      (only when there are post-ops)
//   _T1 = cmp_gt(O, 0)
// Deterministic; integers printed plain.
std::string ToString(const FlatContraction& flat);

// "R = cond(_T1, O, 0)": one post-op as the seed prints it.
std::string ToString(const lang::ElementwiseOp& op);

// Checked int64 arithmetic for flat quantities (strides, offsets, sizes,
// products of ranges). Overflow means the user's tensors or contraction are
// beyond what a kernel can address: UserError naming `what`.
int64_t CheckedMul(int64_t a, int64_t b, const char* what);
int64_t CheckedAdd(int64_t a, int64_t b, const char* what);
// For estimates (cache footprints that choose a kernel's shape), not
// addresses: a product of non-negative values, INT64_MAX where it
// overflows, so a huge but valid iteration space is only "large".
int64_t SaturatingMul(int64_t a, int64_t b);
int64_t SaturatingAdd(int64_t a, int64_t b);  // the same for a sum

}  // namespace tilec::compiler
