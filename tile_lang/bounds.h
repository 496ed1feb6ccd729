// DeriveIndexBounds: an inclusive box per index variable of a contraction.
#pragma once

#include <vector>

#include "tile_lang/program.h"

namespace tilec::lang {

// Pre: op.index_vars lists every variable of op's polynomials (sorted), and
// every tensor op names is declared in `program` with its final dims.
// Post: one Bound per index var (same order) such that every valid index
// assignment — every output/input polynomial in [0, dim) and every constraint
// in [0, range) — lies in the box. Derived by interval propagation over those
// linear conditions to a fixpoint with rational arithmetic. The box may be
// empty (lo > hi) when no assignment is valid. UserError at op.span if a
// variable stays unbounded, or if the arithmetic overflows int64.
std::vector<ContractionOp::Bound> DeriveIndexBounds(const ContractionOp& op,
                                                    const Program& program);

}  // namespace tilec::lang
