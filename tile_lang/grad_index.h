// The index algebra of the gradient stage (gradient.h): a gradient
// contraction before it is written as Tile, and the rewrites of its indices.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tile_lang/program.h"

namespace tilec::lang::grad {

// A gradient contraction before it is written as Tile: output and input
// polynomials over the forward contraction's index variables, its constraints.
struct Gather {
  std::vector<Polynomial> out;
  std::vector<std::pair<std::string, std::vector<Polynomial>>> refs;
  std::vector<ContractionOp::Constraint> constraints;
};

// The rank of the polynomials' coefficient rows over `vars` (Gaussian
// elimination over the rationals).
size_t Rank(const std::vector<Polynomial>& polys, const std::vector<std::string>& vars);

// p with `var` replaced by `value`.
Polynomial Substitute(const Polynomial& p, const std::string& var, const Polynomial& value);

// Rewrites a gradient contraction's output indices into plain variables, so
// that a kernel gathers each output element instead of scattering over
// windows (the compiler's form for a non-plain output is a slow direct one),
// keeping the valid index assignments (the rewrite is a bijection of them).
// In `x + i - 1`, x (coefficient 1, the other terms integers, so x stays an
// integer exactly when the new variable is) is renamed to stand for the
// whole index, and `x - i + 1` replaces it everywhere else:
//     D_g[n, x + i - 1, ...] = +(O_g[n, x, ...] * K[i, ...])
//     D_g[n, x, ...] = +(O_g[n, x - i + 1, ...] * K[i, ...])
// Of the candidates, the variable of largest range is taken (the spatial one
// rather than the kernel tap); only coefficient 1 for now (see below).
//
// A strided window `s * x + i + c` (s >= 2, the tap i of no larger range than
// x) made plain through i would read `F[i - 2 * x, ...]` and visit every x
// for each element though few are valid. It is split by its residue
// instead (polyphase): the index becomes `s * x + xr`, xr < s its phase,
// and the window's step xt replaces the tap, i = s * xt + xr - c and the
// old x = x - xt, so each element visits only the taps of its phase:
//     I_g[n, 2 * x + i - 1, ...] = +(O_g[n, x, ...] * F[i, ...])
//     I_g[n, 2 * x + xr, ...] = +(O_g[n, x - xt, ...] * F[2 * xt + xr + 1, ...]), xr < 2
// (a bijection of the integer assignments: i = s * x + i + c splits
// uniquely into x and xr). Such an injective output with integer
// coefficients is flattened like a plain one, so the vector and flat forms
// take it (bench/grad conv3x3/2 and max pool) when s divides the size:
// otherwise `2 * x + xr` overhangs it, and only the slow direct form takes
// such an output, so the index is made plain through the tap as before. An index without a variable
// of coefficient 1 (`2 * x`, `x / 2`, `N - 1 - x`) stays as it is.
// Call once per gather: the phase index of a split one is a unit variable again.
void MakeOutputPlain(Gather& g, const ContractionOp& c, const std::vector<int64_t>& dims);

}  // namespace tilec::lang::grad
