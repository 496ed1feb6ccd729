// Recursive-descent parser for Tile (grammar: docs/language.md §11), with
// precedence climbing for expressions (table: ast.h TILEC_BINARY_OPS).
//
// Two limits keep any input from exhausting the stack, here or in the
// recursive passes that later walk the AST: syntactic nesting (parentheses,
// unary operators, call arguments, ternaries) is capped at kMaxNesting, and
// the depth of every expression tree at kMaxTreeDepth (a flat chain
// `a + b + c + …` is left-deep, so its length counts).
#include "tile_lang/parser.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "support/error.h"
#include "tile_lang/lexer.h"

namespace tilec::lang {

using namespace ast;

namespace {

constexpr int kMaxNesting = 256;
constexpr int kMaxTreeDepth = 1000;
constexpr uint64_t kTwoTo63 = uint64_t{1} << 63;

// Where an expression is parsed. Polynomial positions (tensor indices and
// constraint left sides) admit only literals, names, unary -, + - * /,
// parentheses and `2i`; in a constraint's left side a top-level `<` ends it.
enum class Mode { Expr, Poly, ConstraintPoly };

// An expression and the depth of its tree.
struct P {
  ExprPtr e;
  int depth = 1;
};

std::optional<BinaryOp> BinaryOpOf(TokenKind kind) {
  switch (kind) {
    case TokenKind::PipePipe: return BinaryOp::LogicalOr;
    case TokenKind::AmpAmp: return BinaryOp::LogicalAnd;
    case TokenKind::Caret: return BinaryOp::BitXor;
    case TokenKind::Pipe: return BinaryOp::BitOr;
    case TokenKind::Amp: return BinaryOp::BitAnd;
    case TokenKind::Eq: return BinaryOp::Eq;
    case TokenKind::Ne: return BinaryOp::Ne;
    case TokenKind::Lt: return BinaryOp::Lt;
    case TokenKind::Gt: return BinaryOp::Gt;
    case TokenKind::Le: return BinaryOp::Le;
    case TokenKind::Ge: return BinaryOp::Ge;
    case TokenKind::Shl: return BinaryOp::Shl;
    case TokenKind::Shr: return BinaryOp::Shr;
    case TokenKind::Plus: return BinaryOp::Add;
    case TokenKind::Minus: return BinaryOp::Sub;
    case TokenKind::Star: return BinaryOp::Mul;
    case TokenKind::Slash: return BinaryOp::Div;
    case TokenKind::Percent: return BinaryOp::Mod;
    default: return std::nullopt;
  }
}

bool IsPolyOp(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul ||
         op == BinaryOp::Div;
}

class Parser {
 public:
  Parser(const SourceFilePtr& source, ParseStats* stats, size_t max_errors = 1)
      : source_(source), tokens_(source), stats_(stats), max_errors_(std::max<size_t>(1, max_errors)) {}
  ~Parser() {
    if (stats_) stats_->tokens_lexed = tokens_.lexed();
  }

  Function ParseProgram() {
    try {
      Function f = ParseFunction();
      if (!errors_.empty()) ThrowCollected();
      return f;
    } catch (const UserError& e) {
      if (errors_.empty()) throw;
      errors_.push_back(e);
      ThrowCollected();
    }
  }

  ExprPtr ParseSingleExpr() {
    P e = ParseTernary(Mode::Expr);
    if (!At(TokenKind::End)) Unexpected("end of input after the expression");
    return e.e;
  }

 private:
  Function ParseFunction() {
    Function f;
    f.source = source_;
    if (!At(TokenKind::KwFunction)) Unexpected("'function' at the start of the program");
    Take();
    const Token& open = Expect(TokenKind::LParen, "'(' after 'function'");
    if (!At(TokenKind::RParen)) {
      do {
        f.inputs.push_back(ParseInput());
      } while (Accept(TokenKind::Comma));
    }
    ExpectClose(TokenKind::RParen, open, "',' or ");
    Expect(TokenKind::Arrow, "'->' after the inputs");
    const Token& out_open = Expect(TokenKind::LParen, "'(' to start the outputs");
    if (At(TokenKind::RParen)) Fail(Cur(), "a function needs at least one output");
    do {
      const Token& name = ExpectTensorName("an output name");
      f.outputs.push_back(Output{name.name, name.span});
    } while (Accept(TokenKind::Comma));
    ExpectClose(TokenKind::RParen, out_open, "',' or ");
    const Token& brace = Expect(TokenKind::LBrace, "'{' to start the function body");
    for (;;) {
      if (At(TokenKind::RBrace)) break;
      if (At(TokenKind::End)) Unexpected(Closing(TokenKind::RBrace, brace));
      if (Accept(TokenKind::Semicolon)) continue;  // Tile allows empty statements
      if (max_errors_ == 1) {
        f.body.push_back(ParseStatement());
        ExpectStatementEnd(f.body.back());
        continue;
      }
      try {
        Statement s = ParseStatement();
        ExpectStatementEnd(s);
        f.body.push_back(std::move(s));
      } catch (const UserError& e) {
        errors_.push_back(e);
        if (errors_.size() >= max_errors_ || !SkipStatement()) ThrowCollected();
      }
    }
    Take();
    if (!At(TokenKind::End)) {
      Fail(Cur(), fmt::format("unexpected '{}' after the end of the function", Cur().raw));
    }
    return f;
  }

  // ---- error recovery (ParseOptions::max_errors > 1) ------------------------

  // After an error in a statement: skips past its ';' (or to the function's
  // '}'). False when the lexer fails on the way (that error is recorded,
  // unless it is the statement's own error thrown again): the search ends.
  bool SkipStatement() {
    try {
      while (!At(TokenKind::Semicolon) && !At(TokenKind::RBrace) && !At(TokenKind::End)) Take();
      Accept(TokenKind::Semicolon);
      return true;
    } catch (const UserError& e) {
      // A lexical error re-thrown where the statement's own error was it.
      const UserError& last = errors_.back();
      if (e.span().begin.line != last.span().begin.line || e.span().begin.col != last.span().begin.col)
        errors_.push_back(e);
      return false;
    }
  }

  // Throws the first error found, with the others after it.
  [[noreturn]] void ThrowCollected() {
    UserError first = errors_.front();
    first.SetMoreErrors(std::vector<UserError>(errors_.begin() + 1, errors_.end()));
    errors_.clear();
    throw first;
  }

  // ---- tokens and diagnostics ----------------------------------------------

  const Token& Cur() { return tokens_.At(pos_); }
  const Token& Ahead(size_t n) { return tokens_.At(pos_ + n); }
  bool At(TokenKind kind) { return Cur().kind == kind; }
  const Token& Take() {
    const Token& t = tokens_.At(pos_);
    prev_end_ = t.span.end;
    if (t.kind != TokenKind::End) ++pos_;
    return t;
  }
  bool Accept(TokenKind kind) {
    if (!At(kind)) return false;
    Take();
    return true;
  }

  [[noreturn]] void Fail(const Token& t, const std::string& message) const {
    TILEC_USER_ERROR_AT(source_, t.span, "{}", message);
  }
  [[noreturn]] void Fail(const SourceSpan& span, const std::string& message) const {
    TILEC_USER_ERROR_AT(source_, span, "{}", message);
  }
  // "expected X, found 'y'" (or "unexpected end of input; expected X") at Cur().
  [[noreturn]] void Unexpected(const std::string& expected) {
    if (At(TokenKind::End)) Fail(Cur(), fmt::format("unexpected end of input; expected {}", expected));
    Fail(Cur(), fmt::format("expected {}, found '{}'", expected, Cur().raw));
  }
  static std::string Closing(TokenKind close, const Token& open) {
    return fmt::format("{} to close {} at {}:{}", Describe(close), Describe(open.kind),
                       open.span.begin.line, open.span.begin.col);
  }
  // The ';' after a statement. A contraction followed by an operator
  // (`Y[i : N] = +(X[i, j]) + 1`) gets a hint: it is a statement of its own.
  void ExpectStatementEnd(const Statement& s) {
    if (At(TokenKind::Semicolon)) {
      Take();
      return;
    }
    bool op = false;
    for (TokenKind k : {TokenKind::Plus, TokenKind::Minus, TokenKind::Star, TokenKind::Slash, TokenKind::Percent,
                        TokenKind::Amp, TokenKind::Pipe, TokenKind::Lt, TokenKind::Gt, TokenKind::Le, TokenKind::Ge,
                        TokenKind::Question})
      op |= At(k);
    if (s.kind == Statement::Kind::Contraction && op) {
      Fail(Cur(), fmt::format("expected ';' after the statement, found '{}': a contraction is a statement of "
                              "its own; compute it into a tensor (T[...] = +(...);) and use T in the next "
                              "statement's expression",
                              Cur().raw));
    }
    Unexpected("';' after the statement");
  }
  const Token& Expect(TokenKind kind, const std::string& expected) {
    if (!At(kind)) Unexpected(expected);
    return Take();
  }
  // `alternatives` lists what else could have continued, e.g. "',' or ".
  void ExpectClose(TokenKind close, const Token& open, std::string_view alternatives = "") {
    if (!At(close)) Unexpected(fmt::format("{}{}", alternatives, Closing(close, open)));
    Take();
  }
  // An ID (tensor-class name). An index-class name gets a hint about case.
  const Token& ExpectTensorName(const std::string& what) {
    if (At(TokenKind::IdxId)) {
      Fail(Cur(), fmt::format("expected {}, found '{}'; tensor names start with an upper-case "
                              "letter (or write #{})", what, Cur().raw, Cur().name));
    }
    if (!At(TokenKind::Id)) Unexpected(what);
    return Take();
  }
  SourceSpan From(SourceLoc begin) const { return {begin, prev_end_}; }

  // Counts syntactic nesting; too deep is a user error, not a stack overflow.
  class Nest {
   public:
    Nest(Parser& p, const Token& at) : p_(p) {
      if (++p_.nesting_ > kMaxNesting) {
        --p_.nesting_;
        p_.Fail(at, fmt::format("expression nested too deeply (more than {} levels)", kMaxNesting));
      }
    }
    ~Nest() { --p_.nesting_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Parser& p_;
  };

  P Node(ExprPtr e, std::initializer_list<int> child_depths) {
    int depth = 1 + std::max(child_depths);
    if (depth > kMaxTreeDepth) {
      Fail(e->span, fmt::format("expression too large: its tree is more than {} levels deep; "
                                "split it into several statements", kMaxTreeDepth));
    }
    return {std::move(e), depth};
  }

  // ---- signature and statements --------------------------------------------

  Input ParseInput() {
    Input in;
    const Token& name = ExpectTensorName("an input name");
    in.name = name.name;
    if (At(TokenKind::LBracket)) {
      const Token& open = Take();
      in.has_dims = true;
      if (!At(TokenKind::RBracket)) {
        do {
          const Token& dim = ExpectTensorName("a dimension name");
          in.dims.push_back(dim.name);
          in.dim_spans.push_back(dim.span);
        } while (Accept(TokenKind::Comma));
      }
      ExpectClose(TokenKind::RBracket, open, "',' or ");
    }
    in.span = From(name.span.begin);
    return in;
  }

  Attribute ParseAttribute() {
    const Token& open = Take();  // [[
    Attribute a;
    if (At(TokenKind::Id)) {
      Fail(Cur(), fmt::format("attribute names start with a lower-case letter (or write ${})", Cur().name));
    }
    a.name = Expect(TokenKind::IdxId, "an attribute name after '[['").name;
    if (At(TokenKind::LParen)) {
      const Token& paren = Take();
      if (At(TokenKind::RParen)) Fail(Cur(), "an attribute's parameter list cannot be empty");
      do {
        if (!At(TokenKind::Id) && !At(TokenKind::IdxId)) Unexpected("an attribute parameter (a name)");
        a.params.push_back(Take().name);
      } while (Accept(TokenKind::Comma));
      ExpectClose(TokenKind::RParen, paren, "',' or ");
    }
    ExpectClose(TokenKind::RRBracket, open);
    a.span = From(open.span.begin);
    return a;
  }

  Statement ParseStatement() {
    Statement s;
    while (At(TokenKind::LLBracket)) s.attributes.push_back(ParseAttribute());
    if (At(TokenKind::IdxId)) {
      Fail(Cur(), fmt::format("a statement must define a tensor, whose name starts with an "
                              "upper-case letter (or write #{})", Cur().name));
    }
    if (!At(TokenKind::Id)) {
      Unexpected(s.attributes.empty() ? "a statement" : "a statement after the attributes");
    }
    const Token& name = Take();
    s.name_span = name.span;
    if (At(TokenKind::LBracket)) {
      s.kind = Statement::Kind::Contraction;
      s.contraction = ParseContraction(name);
    } else if (At(TokenKind::Assign)) {
      Take();
      s.kind = Statement::Kind::Assignment;
      s.assignment.name = name.name;
      s.assignment.value = ParseTernary(Mode::Expr).e;
    } else {
      Unexpected(fmt::format("'=' or '[' after '{}'", name.raw));
    }
    s.span = From(name.span.begin);
    return s;
  }

  // Cur() is the '[' after the output name: O[], O[:], O[i, j] or O[i, j : M, N].
  Contraction ParseContraction(const Token& name) {
    Contraction c;
    c.output.name = name.name;
    const Token& open = Take();
    std::string_view alternatives;  // what else could have continued before ']'
    if (Accept(TokenKind::Colon)) {
      c.has_colon = true;
      if (!At(TokenKind::RBracket)) Unexpected("']' after ':' in a rank-0 output 'O[:]'");
    } else if (!At(TokenKind::RBracket)) {
      do {
        c.output.indices.push_back(ParseTernary(Mode::Poly).e);
      } while (Accept(TokenKind::Comma));
      alternatives = "',', ':' or ";
      if (Accept(TokenKind::Colon)) {
        c.has_colon = true;
        SourceLoc sizes_begin = Cur().span.begin;
        do {
          c.sizes.push_back(ParseTernary(Mode::Expr).e);
        } while (Accept(TokenKind::Comma));
        size_t n = c.output.indices.size();
        if (c.sizes.size() != n) {
          Fail(From(sizes_begin), fmt::format("output '{}' has {} index polynomial{} but {} size{}",
                                              name.raw, n, n == 1 ? "" : "s", c.sizes.size(),
                                              c.sizes.size() == 1 ? "" : "s"));
        }
        alternatives = "',' or ";
      }
    }
    ExpectClose(TokenKind::RBracket, open, alternatives);
    c.output.span = From(name.span.begin);
    return FinishContraction(std::move(c));
  }

  // Everything after the output spec: `= agg(inputs) constraints modifiers`.
  Contraction FinishContraction(Contraction c) {
    if (At(TokenKind::Eq)) {
      Fail(Cur(), "expected '=' after the output, found '=='; an assign aggregation is written "
                  "'= =(...)' with a space");
    }
    Expect(TokenKind::Assign, "'=' after the output");
    switch (Cur().kind) {
      case TokenKind::Plus: c.agg = AggOp::Sum; break;
      case TokenKind::Star: c.agg = AggOp::Prod; break;
      case TokenKind::Gt: c.agg = AggOp::Max; break;
      case TokenKind::Lt: c.agg = AggOp::Min; break;
      case TokenKind::Assign: c.agg = AggOp::Assign; break;
      default: Unexpected("an aggregation operator (+ * > < =) after '='");
    }
    const Token& agg = Take();
    const Token& open = Expect(TokenKind::LParen, fmt::format("'(' after the aggregation '{}'", agg.raw));
    c.inputs.push_back(ParseTensorRef());
    switch (Cur().kind) {
      case TokenKind::Star: c.comb = CombOp::Mul; break;
      case TokenKind::Plus: c.comb = CombOp::Add; break;
      case TokenKind::Eq: c.comb = CombOp::Eq; break;
      case TokenKind::Question:
        Fail(Cur(), "'?' in a contraction must follow an '==' combination: 'A[i] == B[j] ? C[k]'");
      case TokenKind::RParen: break;
      default:
        Unexpected(fmt::format("a combination operator (* + ==) or {}",
                               Closing(TokenKind::RParen, open)));
    }
    if (c.comb != CombOp::None) {
      Take();
      c.inputs.push_back(ParseTensorRef());
      if (At(TokenKind::Question)) {
        if (c.comb != CombOp::Eq) {
          Fail(Cur(), "'?' in a contraction must follow an '==' combination: 'A[i] == B[j] ? C[k]'");
        }
        Take();
        c.comb = CombOp::Cond;
        c.inputs.push_back(ParseTensorRef());
      }
      if (!At(TokenKind::RParen) && BinaryOpOf(Cur().kind)) {
        Fail(Cur(), "a contraction combines at most two tensors with one operator (or 'A == B ? C')");
      }
      ExpectClose(TokenKind::RParen, open, c.comb == CombOp::Eq ? "'?' or " : "");
    } else {
      Take();
    }
    while (At(TokenKind::Comma)) {
      Take();
      SourceLoc begin = Cur().span.begin;
      Constraint k;
      k.poly = ParseTernary(Mode::ConstraintPoly).e;
      if (!At(TokenKind::Lt) && BinaryOpOf(Cur().kind) && IsComparison(*BinaryOpOf(Cur().kind))) {
        Fail(Cur(), fmt::format("a constraint is written 'poly < bound' (meaning 0 <= poly < bound); "
                                "'{}' is not allowed", Cur().raw));
      }
      Expect(TokenKind::Lt, "'<' in the constraint 'poly < bound'");
      k.bound = ParseTernary(Mode::Expr).e;
      k.span = From(begin);
      c.constraints.push_back(std::move(k));
    }
    for (;;) {
      if (At(TokenKind::KwNoDefract)) {
        if (c.no_defract) Fail(Cur(), "'no_defract' given twice");
        Take();
        c.no_defract = true;
      } else if (At(TokenKind::KwDefault)) {
        if (c.default_tensor) Fail(Cur(), "'default' given twice");
        Take();
        const Token& def = ExpectTensorName("a tensor name after 'default'");
        c.default_tensor = def.name;
        c.default_span = def.span;
      } else {
        break;
      }
    }
    return c;
  }

  TensorRef ParseTensorRef() {
    TensorRef r;
    const Token& name = ExpectTensorName("a tensor reference such as 'A[i]'");
    r.name = name.name;
    if (!At(TokenKind::LBracket)) {
      Unexpected(fmt::format("'[' after '{}' (contraction inputs are indexed: '{}[i, j]')",
                             name.raw, name.raw));
    }
    const Token& open = Take();
    if (!At(TokenKind::RBracket)) {
      do {
        r.indices.push_back(ParseTernary(Mode::Poly).e);
      } while (Accept(TokenKind::Comma));
    }
    ExpectClose(TokenKind::RBracket, open, "',' or ");
    r.span = From(name.span.begin);
    return r;
  }

  // ---- expressions ----------------------------------------------------------

  // `?:` is the loosest operator and left-associative, as in Tile's bison
  // grammar: `a ? b : c ? d : e` is `(a ? b : c) ? d : e`.
  P ParseTernary(Mode mode) {
    Nest nest(*this, Cur());
    P lhs = ParseBinary(1, mode);
    while (At(TokenKind::Question)) {
      if (mode != Mode::Expr) NotInPoly("'?'");
      const Token& q = Take();
      P then = ParseTernary(Mode::Expr);
      if (!At(TokenKind::Colon)) {
        Unexpected(fmt::format("':' to complete '?' at {}:{}", q.span.begin.line, q.span.begin.col));
      }
      Take();
      P other = ParseBinary(1, mode);
      SourceSpan span = Join(lhs.e->span, other.e->span);
      lhs = Node(MakeTernary(lhs.e, then.e, other.e, span), {lhs.depth, then.depth, other.depth});
    }
    return lhs;
  }

  [[noreturn]] void NotInPoly(std::string_view what) {
    Fail(Cur(), fmt::format("{} is not allowed in an index polynomial (only integers, names, "
                            "+ - * / and parentheses are)", what));
  }

  P ParseBinary(int min_prec, Mode mode) {
    P lhs = ParseUnary(mode);
    for (;;) {
      std::optional<BinaryOp> op = BinaryOpOf(Cur().kind);
      if (!op) break;
      if (mode != Mode::Expr && !IsPolyOp(*op)) {
        // A constraint's polynomial ends at its comparison; only '<' is valid there.
        if (mode == Mode::ConstraintPoly && IsComparison(*op)) break;
        NotInPoly(fmt::format("'{}'", Cur().raw));
      }
      int prec = Precedence(*op);
      if (prec < min_prec) break;
      const Token& op_token = Take();
      P rhs = ParseBinary(prec + 1, mode);
      SourceSpan span = Join(lhs.e->span, rhs.e->span);
      lhs = Node(MakeBinary(*op, lhs.e, rhs.e, span), {lhs.depth, rhs.depth});
      std::optional<BinaryOp> next = BinaryOpOf(Cur().kind);
      if (IsComparison(*op) && next && IsComparison(*next) && Precedence(*next) == prec) {
        Fail(Cur(), fmt::format("comparisons do not chain: '{}' follows '{}' at {}:{}; add "
                                "parentheses", Cur().raw, op_token.raw,
                                op_token.span.begin.line, op_token.span.begin.col));
      }
    }
    return lhs;
  }

  P ParseUnary(Mode mode) {
    const Token& op = Cur();
    UnaryOp uop;
    switch (op.kind) {
      case TokenKind::Minus: uop = UnaryOp::Neg; break;
      case TokenKind::Tilde: uop = UnaryOp::BitNot; break;
      case TokenKind::Bang: uop = UnaryOp::LogicalNot; break;
      default: return ParsePrimary(mode);
    }
    if (mode != Mode::Expr && uop != UnaryOp::Neg) NotInPoly(fmt::format("'{}'", op.raw));
    Nest nest(*this, op);
    Take();
    // Fold `-literal` into the literal as PlaidML does, unless the literal
    // starts a juxtaposition `-2i`, which is -(2*i).
    bool juxtaposed = mode != Mode::Expr && At(TokenKind::Int) && Ahead(1).kind == TokenKind::IdxId;
    if (uop == UnaryOp::Neg && (At(TokenKind::Int) || At(TokenKind::Float)) && !juxtaposed) {
      if (At(TokenKind::Float)) {
        if (mode != Mode::Expr) NotInPoly("a float literal");
        const Token& lit = Take();
        return {MakeFloat(-lit.float_value, Join(op.span, lit.span))};
      }
      const Token& lit = Take();
      CheckNoJuxtaposition(lit, mode);
      int64_t v = lit.int_value == kTwoTo63 ? std::numeric_limits<int64_t>::min()
                                            : -static_cast<int64_t>(lit.int_value);
      return {MakeInt(v, Join(op.span, lit.span))};
    }
    P operand = ParseUnary(mode);
    return Node(MakeUnary(uop, operand.e, Join(op.span, operand.e->span)), {operand.depth});
  }

  void CheckNoJuxtaposition(const Token& lit, Mode mode) {
    if (mode == Mode::Expr && At(TokenKind::IdxId)) {
      Fail(Cur(), fmt::format("'{} {}' (a number followed by an index name) is only allowed in an "
                              "index polynomial; write '{} * {}'", lit.raw, Cur().raw, lit.raw, Cur().raw));
    }
  }

  P ParsePrimary(Mode mode) {
    const Token& t = Cur();
    switch (t.kind) {
      case TokenKind::Int: {
        Take();
        if (t.int_value >= kTwoTo63) {
          Fail(t, fmt::format("integer literal '{}' does not fit in 64 bits", t.raw));
        }
        ExprPtr lit = MakeInt(static_cast<int64_t>(t.int_value), t.span);
        CheckNoJuxtaposition(t, mode);
        if (!At(TokenKind::IdxId)) return {lit};
        // Juxtaposition `2i` (or `2 i`) is 2 * i.
        const Token& idx = Take();
        ExprPtr name = MakeName(idx.name, NameClass::Index, idx.span);
        return {MakeBinary(BinaryOp::Mul, lit, name, Join(t.span, idx.span)), 2};
      }
      case TokenKind::Float:
        if (mode != Mode::Expr) NotInPoly("a float literal");
        Take();
        return {MakeFloat(t.float_value, t.span)};
      case TokenKind::Id:
      case TokenKind::IdxId: {
        Take();
        if (At(TokenKind::LParen)) return ParseCall(t, mode);
        NameClass cls = t.kind == TokenKind::Id ? NameClass::Tensor : NameClass::Index;
        if (At(TokenKind::LBracket)) {
          Fail(Cur(), "tensors cannot be indexed inside an expression; use a contraction "
                      "'O[i : N] = +(A[i])'");
        }
        return {MakeName(t.name, cls, t.span)};
      }
      case TokenKind::LParen: {
        Take();
        P inner = ParseTernary(mode == Mode::ConstraintPoly ? Mode::Poly : mode);
        ExpectClose(TokenKind::RParen, t);
        return inner;
      }
      default:
        Unexpected(mode == Mode::Expr ? "an expression" : "an index polynomial");
    }
  }

  // Cur() is the '(' after the function name `name`.
  P ParseCall(const Token& name, Mode mode) {
    if (mode != Mode::Expr) {
      Fail(name, fmt::format("function calls are not allowed in an index polynomial ('{}')", name.raw));
    }
    Nest nest(*this, Cur());
    const Token& open = Take();
    if (At(TokenKind::RParen)) {
      Fail(Cur(), fmt::format("a call of '{}' needs at least one argument", name.raw));
    }
    std::vector<ExprPtr> args;
    int depth = 0;
    do {
      P arg = ParseTernary(Mode::Expr);
      depth = std::max(depth, arg.depth);
      args.push_back(std::move(arg.e));
    } while (Accept(TokenKind::Comma));
    ExpectClose(TokenKind::RParen, open, "',' or ");
    return Node(MakeCall(name.name, std::move(args), From(name.span.begin)), {depth});
  }

  SourceFilePtr source_;
  TokenStream tokens_;
  ParseStats* stats_;
  size_t max_errors_;
  std::vector<UserError> errors_;  // found so far, in reading order (recovery only)
  size_t pos_ = 0;
  SourceLoc prev_end_{1, 1};
  int nesting_ = 0;
};

}  // namespace

Function Parse(const SourceFilePtr& source, ParseStats* stats, const ParseOptions& options) {
  TILEC_CHECK(source != nullptr);
  return Parser(source, stats, options.max_errors).ParseProgram();
}

ExprPtr ParseExpr(const SourceFilePtr& source, ParseStats* stats) {
  TILEC_CHECK(source != nullptr);
  return Parser(source, stats).ParseSingleExpr();
}

}  // namespace tilec::lang
