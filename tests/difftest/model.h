// The differential tester's model of a Tile program: a structured form the
// generator builds and the shrinker edits, printed to Tile text for Tilec.
//
// Besides printing, the model knows what a compiled kernel may legitimately
// compute differently from the reference evaluator (Analyze): every float
// value carries a bound on its magnitude and on its absolute error, and a
// value whose error bound is not zero ("inexact") must never reach an
// operation that is discontinuous (a comparison, a float-to-integer cast,
// floor/ceil/round, fmod, a condition, an `==` combination), where a rounding
// difference would turn into an arbitrarily large one. Integer and bool values
// are always exact, and so compared exactly.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tile_lang/types.h"

namespace tilec::difftest {

using lang::DataType;

// A size: `coef * dim + add`, or the literal `add` when `dim` is empty.
struct Size {
  std::string dim;
  int64_t coef = 1;
  int64_t add = 0;
};

// An index polynomial: (sum coef * var + dim_coef * dim + constant) / div.
struct Poly {
  std::vector<std::pair<int64_t, std::string>> terms;
  std::string dim;
  int64_t dim_coef = 0;
  int64_t constant = 0;
  int64_t div = 1;
};

// An elementwise expression.
struct Expr {
  enum Kind { kRef, kInt, kFloat, kUnary, kBinary, kSelect, kCall } kind = kRef;
  std::string name;  // kRef: tensor; kUnary/kBinary: operator; kCall: function
  int64_t ival = 0;  // kInt (also a cast's bit width, as an argument)
  double fval = 0;   // kFloat
  std::vector<Expr> args;
};

struct Ref {
  std::string tensor;
  std::vector<Poly> idx;
};

struct Contraction {
  std::vector<Poly> out_idx;
  std::vector<Size> sizes;
  char agg = '+';   // + * > < =
  char comb = 0;    // 0 (one input), '*', '+', '=' (==), '?' (== ?)
  std::vector<Ref> refs;
  std::vector<std::pair<Poly, Size>> constraints;
  std::string default_tensor;
};

struct Stmt {
  std::string out;
  bool is_contraction = false;
  Contraction c;
  Expr e;
};

struct Input {
  std::string name;
  DataType dtype = DataType::F32;
  std::vector<std::string> dims;  // names of DimVars
};

struct Prog {
  std::map<std::string, int64_t> dims;  // dimension name -> bound size
  std::vector<Input> inputs;
  std::vector<Stmt> stmts;
  std::vector<std::string> outputs;
  std::map<std::string, std::string> layouts;  // tensor -> layout spec
};

int64_t Eval(const Size& s, const Prog& p);

std::string ToText(const Poly& p);
std::string ToText(const Size& s);
std::string ToText(const Expr& e);
std::string ToText(const Prog& p);  // the whole .tile source
lang::Shape InputShape(const Prog& p, const Input& in);

// Drops statements no output depends on (and their layouts).
void RemoveDead(Prog& p);

// What a compiled value may differ by.
struct Info {
  DataType dtype = DataType::F32;
  bool exact = true;   // bit-identical on every backend
  double amax = 1;     // bound on |value| (and on the sum of |terms| of a sum)
  double lo = -1;      // lower bound on the value (floats)
  double err = 0;      // bound on |computed - exact| (floats)
};

// Result of Analyze: one Info per named tensor, or why the program is outside
// what can be compared (`invalid` non-empty: the generator must not produce
// it, the shrinker does not keep it).
struct Analysis {
  std::map<std::string, Info> tensors;
  std::string invalid;
  bool disagrees = false;  // the model's typing differs from the binder's
};

// `dtypes`: the bound type of every named tensor (from the binder); a
// disagreement with the model's own typing is reported as invalid, because
// the model's exactness rules then no longer hold. `terms`: per contraction,
// a bound on the contributions to one output element (the product of the
// ranges of the variables that are not in the output).
Analysis Analyze(const Prog& p, const std::map<std::string, DataType>& dtypes,
                 const std::map<std::string, int64_t>& terms);

// The tensors a statement reads.
std::set<std::string> Uses(const Stmt& s);

// Unit roundoff of a float type (0 for others).
double UnitRoundoff(DataType t);

}  // namespace tilec::difftest
