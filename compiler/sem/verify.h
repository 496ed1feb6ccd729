// Checks the rules of a sem function that need context; each node's own
// invariants (operand types agree, conditions are scalar bool or integer,
// loads and stores go through pointers or arrays, …) are already checked by
// its Make (ir.h).
//
// Verify checks that:
//  * the function is well formed: identifier names, unique parameter names,
//    parameters of value or pointer type, index type i32 or i64, positive
//    work-group size, a Block body; kernels return void;
//  * every VarRef names a parameter, a variable declared earlier in an
//    enclosing scope, or an enclosing loop's variable, with that type;
//  * no name is declared twice in one scope (the parameters and the body's
//    outermost block form one scope); an initializer or loop bound does not
//    mention the name it declares;
//  * assignments do not target a loop variable, nor anything the bounds of an
//    enclosing loop read; stores do not write through a pointer to const or
//    to constant memory;
//  * __local arrays are declared only in a kernel's outermost block;
//  * index constants fit the function's index type; Return matches the
//    return type;
//  * no Barrier is under control flow that depends on the thread: an If or
//    While condition, or a For bound, computed from get_local_id /
//    get_global_id or from variables (transitively) assigned from them or
//    assigned under such control flow.
//
// Pre: any function. Post: returns normally, or throws InternalError listing
// every problem found (a bad sem tree is a bug in the generator).
#pragma once

#include <string>
#include <vector>

#include "compiler/sem/ir.h"

namespace tilec::sem {

void Verify(const Function& f);
void Verify(const Module& m);  // each function; also rejects duplicate names

// What Verify(m) rejects, without throwing: one line per problem, each
// naming its function ("kernel_0: 'x' is used but not declared"); empty
// when `m` is valid. For sem text a user wrote (`tilec opt`), where a
// problem is the user's error rather than a bug.
std::vector<std::string> Problems(const Module& m);

}  // namespace tilec::sem
