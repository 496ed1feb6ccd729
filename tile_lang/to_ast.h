// ToAst: bound ops back to Tile statements.
//
// The gradient stage (gradient.h) derives a program from a bound Program and
// must hand back ordinary Tile source; these builders turn each bound op (a
// contraction, one elementwise operation, a special op) into statements that
// bind to the same op again: same element types (literals are weak, so they
// take the types they took before), same shapes (sizes are literals), same
// index polynomials (over a common denominator, which Tile reads as exact
// rational division).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tile_lang/ast.h"
#include "tile_lang/program.h"

namespace tilec::lang {

// `2*x + i - 1`, `(x + 1)/2`, `0`. Index variables keep their names.
ast::ExprPtr PolynomialExpr(const Polynomial& p);

// A literal (negative literals print as `-3`). UserError for a non-finite
// float (Tile cannot spell it).
ast::ExprPtr ScalarExpr(const Scalar& s);

// A tensor-class name reference.
ast::ExprPtr TensorExpr(const std::string& name);

// `name = value;` and a contraction statement.
ast::Statement AssignmentStatement(const std::string& name, ast::ExprPtr value);
ast::Statement ContractionStatement(ast::Contraction c);

// The name a statement defines (an assignment's target, a contraction's output).
std::string& DefinedName(ast::Statement& st);

// Statements computing `op` of `program`. Every tensor name goes through
// `rename` (the caller's names for the bound program's tensors); `fresh`
// gives a new unused tensor name from a base (a prng_step result needs one).
// Pre: an elementwise Ident has a tensor operand (a constant output's Ident
// is not reproducible as a tensor; InternalError).
std::vector<ast::Statement> OpStatements(const Op& op, const Program& program,
                                         const std::function<std::string(const std::string&)>& rename,
                                         const std::function<std::string(const std::string&)>& fresh);

}  // namespace tilec::lang
