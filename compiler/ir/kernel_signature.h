// SignKernel: a stable name for what a flat kernel computes, independent of
// the program it came from — the key of the tuning cache
// (runtime/tuning_cache.h).
//
// The signature is the canonical text of the kernel's flat form (ir/kernel.h,
// ir/flat.h): its kind, index ranges, every access's dtype, offset, strides and
// limit (so the memory layout), the constraints and padding, the variable
// forms, the aggregation and combination, the post-ops and the output
// coordinates. Tensor and index names are left out (tensors are named by
// their access position, post-op results by their SSA position), so the same
// convolution in two programs has one signature, and a different shape,
// layout, dtype or fused post-op a different one. The hash is the 64-bit
// FNV-1a of the text, in 16 hex digits.
//
// Flatten orders a kernel's indices by their Tile names, so the same kernel
// written with other names has its indices in another order. The signature
// therefore puts the indices in a canonical order (by range, strides, output
// coordinates and constraint coefficients; rows of constraints sorted after),
// and a tile kept under a signature is in that order: ToCanonical and
// FromCanonical convert.
//
// The form's plan (FormPlan, forms/form.h) is not hashed in, on purpose: the
// signature keys what the tuning cache keeps, a KernelConfig (tile, work
// group, vector rows, form switches), and the plan is a function of that
// configuration, the kernel in its program and the device (the cache's other key,
// DeviceFingerprint), computed after the signature has looked the
// configuration up (ResolveConfig, compiler/config.h). Hashing the plan in
// would make the key depend on what it looks up. Where a plan needs its own
// key, HashPlan (forms/form.h) gives one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/kernel.h"

namespace tilec::compiler {

struct KernelSignature {
  std::string text;  // canonical, several lines
  std::string hash;  // 16 lower-case hex digits of FNV-1a 64 over text
  std::vector<int> order;  // order[c]: the flat index at canonical position c
};

// A tile in flat index order -> canonical order, and back. Pre: one entry
// per index.
std::vector<int64_t> ToCanonical(const KernelSignature& s, const std::vector<int64_t>& tile);
std::vector<int64_t> FromCanonical(const KernelSignature& s, const std::vector<int64_t>& tile);

// Pre: spec is a flat kernel (Contraction, Elementwise or Fill) from Lower.
// Post: deterministic across processes, platforms and releases of the
// compiler that keep the flat form's meaning.
KernelSignature SignKernel(const KernelSpec& spec);

// 16 lower-case hex digits of the 64-bit FNV-1a hash of `text`: the hash
// of a signature, and of a form's plan (HashPlan, forms/form.h).
std::string Fnv1a64Hex(std::string_view text);

}  // namespace tilec::compiler
