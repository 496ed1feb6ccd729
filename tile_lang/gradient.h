// Gradient: a Tile program -> the Tile program of its reverse-mode gradient.
//
// The derived program is ordinary Tile: it prints as source (Print), parses
// back, binds and compiles through the normal pipeline. It is derived for
// the bound shapes (its sizes are literals).
//
// Signature. Inputs: the original inputs (declared as in the original), then
// one incoming gradient `O_grad` per differentiated output `O`, shaped like
// `O`, then the saved forward tensors it reads (GradientOptions::saved).
// Outputs: `X_grad` per requested input `X`, shaped and typed like `X`: the
// vector-Jacobian product sum over O of O_grad . dO/dX. (A name that is
// taken already gets a suffix `_2`, `_3`, …; GradientProgram lists the names.)
// Body: the forward ops the gradient needs and was not given (temporaries
// `_T<n>` renamed `T<n>`), then the backward statements, which read them.
//
// Rules (docs/user-guide.md, "`tilec grad`: gradients"):
//  * Contraction `O[o] = +(A[a] * B[b])` (also `=`): the gradient of A is the
//    contraction with output and input swapped, `A_g[a : dims(A)] = +(O_g[o] *
//    B[b])`, with the same constraints: a gather over the same valid index
//    assignments (affine output polynomials, skipped taps and rational
//    indices are ordinary Tile); an output index with a variable of
//    coefficient 1 is then made that plain variable by substitution
//    (`D_g[n, x, ...] = +(O_g[n, x - i + 1, ...] * K[i, ...])`), the form
//    kernels compile fast; a strided window `2 * x + i` is split by phase
//    (`2 * x + xr`, xr < 2; MakeOutputPlain in grad_index.cc). `A[a] + B[b]`: `+(O_g[o] * B_one[b])`, B_one
//    an i32 tensor of ones shaped like B (it keeps B's valid indices);
//    `A == B ? C`: C gets `+(A[a] == B[b] ? O_g[o])`.
//    A gradient that is the output's broadcast to A's shape (a row sum's)
//    is added to A's other contributions as a broadcast operand. A weight's
//    gradient over a batch (`n` the plain first index of every tensor read,
//    at least 2 elements, at least 1024 reduction steps each) is computed
//    per batch element, then summed (`K_grad_part`).
//  * `>`/`<` results the differentiated outputs do not depend on (the row
//    maximum of softmax, log-softmax, log-sum-exp: shift invariance, proved
//    by ShiftFree in grad_shift_free.cc) get no gradient (a stop-gradient).
//  * `>`/`<` of one input: the gradient goes to one element per output
//    element, the extremum of smallest row-major position in the input
//    (PyTorch's first-index rule for pooling windows), via a key (a float
//    tensor over a pooling window's variables, else an i32 per input
//    element) and a `>` contraction that picks the winning key.
//  * `default P`: P gets O's gradient where the contraction reached nothing.
//  * Elementwise functions: the table in grad_rules.h; broadcast operands get
//    the gradient summed over their broadcast dimensions. A rectifier
//    (`c ? t : 0`, c comparing t with 0: relu) gives t `y != 0 ? g : 0`,
//    which reads its result y rather than t.
//  * gather/scatter/reshape: scatter/gather/reshape of the gradient.
//  * `reverse_grad(X, c)` (PlaidML's): X, whose gradient is multiplied by -c
//    (c must be a literal).
//  * Integer and boolean tensors carry no gradient; an input whose gradient
//    is requested but receives none gets zeros.
// Unsupported, each a UserError naming the statement: product aggregation,
// `>`/`<` of a combination or with a window element reached twice.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tile_lang/ast.h"
#include "tile_lang/program.h"
#include "tile_lang/types.h"

namespace tilec::lang {

struct GradientOptions {
  // Inputs to differentiate with respect to; empty: every float input.
  std::vector<std::string> wrt;
  // Outputs to differentiate; empty: every float output.
  std::vector<std::string> outputs;
  // Forward tensors the caller can pass in, computed by its own forward
  // run, so that the gradient program reads them instead of computing them
  // again (a convolution before a ReLU is not run twice for the ReLU's
  // mask): outputs or named intermediates of the program, not inputs. Each
  // one the gradient reads becomes an input of the gradient program under
  // its own name, after the incoming gradients (GradientProgram::saved);
  // the others are left out. GradientProgram::forward_reads says which ones
  // are worth it.
  std::vector<std::string> saved;
};

struct GradientProgram {
  ast::Function function;                     // Print() gives its source
  std::map<std::string, Shape> input_shapes;  // to bind it: original inputs and incoming gradients
  std::map<std::string, std::string> incoming;   // differentiated output -> its gradient input
  std::map<std::string, std::string> gradients;  // input -> the output holding its gradient
  // The program's named forward tensors (not its inputs) the backward
  // statements read, directly or through temporaries, in program order: what
  // GradientOptions::saved may name so that the gradient program computes no
  // forward op but cheap elementwise temporaries of them.
  std::vector<std::string> forward_reads;
  // The tensors of GradientOptions::saved the gradient program takes as
  // inputs (those it reads), in the order given.
  std::vector<std::string> saved;
};

// Pre: `f` came from Parse; `shapes` binds it (as for Bind).
// Post: the gradient program described above, or a UserError: a binding
// error of `f`, an unknown or non-float name in `options` (a saved name that
// is an input or no tensor of the program), or an unsupported statement (at
// its span).
GradientProgram Gradient(const ast::Function& f, const std::map<std::string, Shape>& shapes,
                         const GradientOptions& options = {});

}  // namespace tilec::lang
