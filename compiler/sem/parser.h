// Parses sem text — what the printer writes (printer.h) — back to a module,
// so that a dump, a golden test or a bug reproducer can be fed to one pass
// (`tilec opt`, tools/tilec/cmd_opt.cc).
//
// The grammar is the printer's output: functions
// `[kernel] TYPE NAME(PARAMS) index(i32|i64) [work_group_size(X, Y, Z)] {…}`,
// C-like statements and fully parenthesized expressions (the notation is
// described at the top of printer.h). Comment lines outside functions are
// skipped, such as the `// ----- sem` headers of `tilec compile --emit sem`
// and golden-test directives; inside a function they are Comment statements.
// Names resolve by scope as Verify resolves them: a variable reference gets
// the type of the innermost parameter, declaration or loop variable of that
// name visible at that point.
//
// Round trip: Print(Parse(Print(m))) == Print(m) for every module m that
// passes Verify. The tree is rebuilt up to what the text does not show and
// no backend reads: a non-block body becomes a one-statement block, a
// multi-line Comment one Comment per line, and a float constant holds the
// value of its printed digits.
//
// Pre: any text. Post: a module built through the nodes' Make (so each node's
// own invariants hold) — Verify's rules are not checked, so that its tests
// can feed it modules it must reject. Malformed text, an undeclared name or
// a node Make rejects (`(a + b)` of two types) throws UserError at the line
// and column of the offending token; nothing else is thrown.
#pragma once

#include "compiler/sem/ir.h"
#include "support/source.h"

namespace tilec::sem {

Module Parse(const SourceFilePtr& source);

}  // namespace tilec::sem
