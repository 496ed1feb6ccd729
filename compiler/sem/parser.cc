#include "compiler/sem/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/sem/lexer.h"
#include "support/error.h"

namespace tilec::sem {
namespace {

// --- Names of types and operators ---------------------------------------------------

// "float4", "index", "uchar16", … as a value type.
std::optional<Type> ValueTypeNamed(std::string_view word) {
  size_t digits = word.size();
  while (digits > 0 && IsDigit(word[digits - 1])) --digits;
  std::string_view base = word.substr(0, digits), suffix = word.substr(digits);
  int width = 1;
  if (!suffix.empty()) {
    if (suffix.size() > 2 || suffix[0] == '0') return std::nullopt;
    width = std::stoi(std::string(suffix));
    if (width == 1 || !IsValidWidth(width)) return std::nullopt;
  }
  if (base == "index") return Type::Index(width);
  static constexpr DataType kScalars[] = {DataType::Bool, DataType::I8,  DataType::I16, DataType::I32,
                                          DataType::I64,  DataType::U8,  DataType::U16, DataType::U32,
                                          DataType::U64,  DataType::F16, DataType::F32, DataType::F64};
  for (DataType d : kScalars)
    if (ScalarName(d) == base) return Type::Scalar(d, width);
  return std::nullopt;
}

std::optional<AddressSpace> SpaceNamed(std::string_view word) {
  for (AddressSpace s : {AddressSpace::Private, AddressSpace::Global, AddressSpace::Local, AddressSpace::Constant})
    if (Name(s) == word) return s;
  return std::nullopt;
}

// Binary operators printed infix (min and max print as calls).
std::optional<BinaryOp> InfixOp(const Token& t) {
  if (t.kind != Tok::Punct) return std::nullopt;
#define TILEC_X(e, s, c) \
  if (t.text == s) return BinaryOp::e;
  TILEC_SEM_BINARY_OPS(TILEC_X)
#undef TILEC_X
  return std::nullopt;
}

std::optional<CallFn> CallNamed(std::string_view name) {
#define TILEC_X(e, n, a) \
  if (name == n) return CallFn::e;
  TILEC_SEM_CALL_FNS(TILEC_X)
#undef TILEC_X
  return std::nullopt;
}

std::optional<ThreadIndexKind> ThreadIndexNamed(std::string_view name) {
  for (ThreadIndexKind k : {ThreadIndexKind::LocalId, ThreadIndexKind::GroupId, ThreadIndexKind::GlobalId,
                            ThreadIndexKind::LocalSize, ThreadIndexKind::NumGroups})
    if (Name(k) == name) return k;
  return std::nullopt;
}

std::optional<LimitKind> LimitNamed(std::string_view name) {
  for (LimitKind k : {LimitKind::Min, LimitKind::Max, LimitKind::Zero, LimitKind::One})
    if (Name(k) == name) return k;
  return std::nullopt;
}

// The width of a `broadcastN` name, or 0.
int BroadcastWidth(std::string_view name) {
  constexpr std::string_view kPrefix = "broadcast";
  if (name.substr(0, kPrefix.size()) != kPrefix || name.size() == kPrefix.size()) return 0;
  std::optional<Type> t = ValueTypeNamed("int" + std::string(name.substr(kPrefix.size())));
  return t ? t->width : 0;
}

bool IsBuiltin(std::string_view name) {
  return name == "select" || name == "clamp" || name == "min" || name == "max" || name == "insert" ||
         name == "shuffle" || CallNamed(name) || ThreadIndexNamed(name) || LimitNamed(name) ||
         BroadcastWidth(name) > 0;
}

// The message of a node Make's failed check, without the check's place in
// Tilec's code: "operands of + differ: float vs int".
std::string CheckMessage(const InternalError& e) {
  std::string_view text = e.what();
  size_t at = text.find(": sem: ");
  if (at != std::string_view::npos) return std::string(text.substr(at + 7));
  at = text.find("check failed: ");
  return std::string(at == std::string_view::npos ? text : text.substr(at + 14));
}

// --- The parser -------------------------------------------------------------------------

class Parser {
 public:
  explicit Parser(const SourceFilePtr& source) : src_(source), toks_(Lex(source)) {}

  Module ParseModule() {
    Module m;
    while (true) {
      if (Peek().kind == Tok::Comment) {
        ++pos_;
      } else if (Peek().kind == Tok::End) {
        return m;
      } else {
        m.functions.push_back(ParseFunction());
      }
    }
  }

 private:
  // Bounds the recursion, so deeply nested text is an error, not a stack overflow.
  static constexpr int kMaxDepth = 256;  // as tile_lang/parser.cc: within the stack under ASan too
  class Nested {
   public:
    explicit Nested(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth) p_.Fail(p_.Peek(), "nested more than {} levels deep", kMaxDepth);
    }
    ~Nested() { --p_.depth_; }

   private:
    Parser& p_;
  };

  const Token& Peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  Token Next() {
    Token t = Peek();
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool IsPunct(std::string_view p, size_t k = 0) const {
    return Peek(k).kind == Tok::Punct && Peek(k).text == p;
  }
  bool IsWord(std::string_view w, size_t k = 0) const {
    return Peek(k).kind == Tok::Ident && Peek(k).text == w;
  }
  bool Accept(std::string_view p) {
    if (!IsPunct(p)) return false;
    ++pos_;
    return true;
  }

  template <typename... Args>
  [[noreturn]] void Fail(const Token& at, fmt::format_string<Args...> format, Args&&... args) {
    TILEC_USER_ERROR_AT(src_, at.span, "{}", fmt::format(format, std::forward<Args>(args)...));
  }
  static std::string Describe(const Token& t) {
    switch (t.kind) {
      case Tok::End: return "end of input";
      case Tok::Comment: return "a comment";
      default: return fmt::format("'{}'", t.text);
    }
  }
  void Expect(std::string_view p) {
    if (!Accept(p)) Fail(Peek(), "expected '{}', found {}", p, Describe(Peek()));
  }
  void ExpectWord(std::string_view w) {
    if (!IsWord(w)) Fail(Peek(), "expected '{}', found {}", w, Describe(Peek()));
    ++pos_;
  }
  std::string ExpectName(std::string_view what) {
    if (Peek().kind != Tok::Ident) Fail(Peek(), "expected {}, found {}", what, Describe(Peek()));
    return Next().text;
  }
  // An integer literal, optionally negative, in [lo, hi].
  int64_t ExpectInt(std::string_view what, int64_t lo, int64_t hi) {
    const Token& at = Peek();
    bool negative = Accept("-");
    if (Peek().kind != Tok::Int) Fail(Peek(), "expected {}, found {}", what, Describe(Peek()));
    std::string text = (negative ? "-" : "") + Next().text;
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || v < lo || v > hi) Fail(at, "{} {} is out of range [{}, {}]", what, text, lo, hi);
    return v;
  }

  // Runs a node's Make; its failed checks become UserErrors at `at`.
  template <typename F>
  auto Build(const Token& at, F&& make) -> decltype(make()) {
    try {
      return make();
    } catch (const InternalError& e) {
      Fail(at, "{}", CheckMessage(e));
    }
  }

  // --- Names in scope ---

  void Declare(const std::string& name, const Type& type) { scopes_.back()[name] = type; }
  const Type* Lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto found = it->find(name); found != it->end()) return &found->second;
    return nullptr;
  }

  // --- Types ---

  Type ExpectValueType() {
    const Token& t = Peek();
    std::optional<Type> type = t.kind == Tok::Ident ? ValueTypeNamed(t.text) : std::nullopt;
    if (!type) Fail(t, "expected a value type (float, int4, index, …), found {}", Describe(t));
    ++pos_;
    return *type;
  }
  bool AtValueType(size_t k = 0) const { return Peek(k).kind == Tok::Ident && ValueTypeNamed(Peek(k).text); }

  // `SPACE [const] ELEM*` (a pointer) after its address space.
  Type PointerAfterSpace(AddressSpace space) {
    bool is_const = false;
    if (IsWord("const")) {
      ++pos_;
      is_const = true;
    }
    const Token& at = Peek();
    Type elem = ExpectValueType();
    Expect("*");
    return Build(at, [&] { return Type::Pointer(elem, space, is_const); });
  }

  // --- Functions ---

  Function ParseFunction() {
    Function f;
    f.is_kernel = IsWord("kernel");
    if (f.is_kernel) ++pos_;
    if (IsWord("void")) {
      ++pos_;
    } else {
      f.return_type = ExpectValueType();
    }
    f.name = ExpectName("a function name");
    Expect("(");
    scopes_.emplace_back();
    while (!IsPunct(")")) {
      if (!f.params.empty()) Expect(",");
      Param p;
      if (auto space = Peek().kind == Tok::Ident ? SpaceNamed(Peek().text) : std::nullopt) {
        ++pos_;
        p.type = PointerAfterSpace(*space);
      } else {
        p.type = ExpectValueType();
      }
      if (IsWord("restrict")) {
        ++pos_;
        p.noalias = true;
      }
      p.name = ExpectName("a parameter name");
      Declare(p.name, p.type);
      f.params.push_back(std::move(p));
    }
    Expect(")");
    ExpectWord("index");
    Expect("(");
    const Token& dtype = Peek();
    std::optional<DataType> index_type = lang::ParseDataType(ExpectName("an index type (i32 or i64)"));
    if (!index_type) Fail(dtype, "unknown index type '{}' (want i32 or i64)", dtype.text);
    f.index_type = *index_type;
    Expect(")");
    if (IsWord("work_group_size")) {
      ++pos_;
      Expect("(");
      std::array<int64_t, 3> size{};
      for (int i = 0; i < 3; ++i) {
        if (i) Expect(",");
        size[i] = ExpectInt("a work-group size", std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::max());
      }
      Expect(")");
      f.work_group_size = size;
    }
    f.body = Braced();
    scopes_.pop_back();
    return f;
  }

  // --- Statements ---

  // `{ STATEMENTS }` as a Block, in a scope of its own.
  Stmt Braced() {
    const Token& at = Peek();
    Expect("{");
    scopes_.emplace_back();
    std::vector<Stmt> stmts;
    while (!IsPunct("}")) {
      if (Peek().kind == Tok::End) Fail(Peek(), "expected '}}' to close the block at {}:{}", at.span.begin.line,
                                        at.span.begin.col);
      stmts.push_back(ParseStmt());
    }
    ++pos_;
    scopes_.pop_back();
    return Block::Make(std::move(stmts));
  }

  Stmt ParseStmt() {
    Nested nested(*this);
    const Token& t = Peek();
    if (t.kind == Tok::Comment) return Comment::Make(Next().text);
    if (IsPunct("{")) return Braced();
    if (IsPunct("#")) {
      ++pos_;
      ExpectWord("pragma");
      ExpectWord("unroll");
      if (ExpectInt("an unroll count", 1, 1) != 1) Fail(t, "only '#pragma unroll 1' is supported");
      if (!IsWord("for")) Fail(Peek(), "expected a for loop after '#pragma unroll 1'");
      return ParseFor(false);
    }
    if (t.kind == Tok::Ident) {
      bool call = IsPunct("(", 1);
      if (t.text == "if" && call) return ParseIf();
      if (t.text == "for" && call) return ParseFor(true);
      if (t.text == "while" && call) {
        pos_ += 2;
        Expr cond = ParseExpr();
        Expect(")");
        Stmt body = Braced();
        return Build(t, [&] { return While::Make(cond, body); });
      }
      if (t.text == "barrier" && call) return ParseBarrier();
      if (t.text == "prefetch" && call) return ParsePrefetch();
      if (t.text == "return" && !IsPunct("=", 1) && !IsPunct("[", 1)) {
        ++pos_;
        Expr value = IsPunct(";") ? nullptr : ParseExpr();
        Expect(";");
        return Build(t, [&] { return Return::Make(value); });
      }
      bool space = SpaceNamed(t.text) && !IsPunct("=", 1) && !IsPunct("[", 1);
      if (space || (AtValueType() && Peek(1).kind == Tok::Ident)) return ParseDeclare();
    }
    return ParseAssignOrStore();
  }

  Stmt ParseDeclare() {
    const Token& at = Peek();
    Type type;
    std::optional<AddressSpace> space = SpaceNamed(at.text);
    if (space && (IsWord("const", 1) || (AtValueType(1) && IsPunct("*", 2)))) {
      ++pos_;
      type = PointerAfterSpace(*space);
    } else {
      if (space) ++pos_;
      type = ExpectValueType();
    }
    const Token& name_at = Peek();
    std::string name = ExpectName("a variable name");
    if (Accept("[")) {
      int64_t count = ExpectInt("an array size", 1, std::numeric_limits<int64_t>::max());
      Expect("]");
      Type elem = type;
      type = Build(at, [&] { return Type::Array(elem, count, space.value_or(AddressSpace::Private)); });
    } else if (space && !type.IsPointer()) {
      Fail(name_at, "expected '[' after '{}': only arrays and pointers carry an address space", name);
    }
    Expr init;
    if (Accept("=")) {
      if (type.IsArray()) {
        Expect("{");
        ExpectWord("fill");
        init = ParseExpr();
        Expect("}");
      } else {
        init = ParseExpr();
      }
    }
    Expect(";");
    Stmt s = Build(name_at, [&] { return Declare::Make(name, type, init); });
    Declare(name, type);
    return s;
  }

  // `NAME = VALUE;` or `BASE[INDEX[:+N] [if MASK]] = [stream] VALUE;`
  Stmt ParseAssignOrStore() {
    const Token& at = Peek();
    Expr target = Primary();
    if (Accept("=")) {
      Expr value = ParseExpr();
      Expect(";");
      return Build(at, [&] { return Assign::Make(target, value); });
    }
    if (!IsPunct("[")) Fail(Peek(), "expected '=' or '[' after {}, found {}", Describe(at), Describe(Peek()));
    Subscript sub = ParseSubscript();
    Expect("=");
    // `stream` is the hint unless it is a variable's name: a value never
    // starts with `;`, `[` or `.`.
    bool streaming = IsWord("stream") && !IsPunct(";", 1) && !IsPunct("[", 1) && !IsPunct(".", 1);
    if (streaming) ++pos_;
    const Token& value_at = Peek();
    Expr value = ParseExpr();
    Expect(";");
    if (sub.width && *sub.width != value->type.width)
      Fail(value_at, "a store of {} elements ':+{}' of a {}", *sub.width, *sub.width, ToString(value->type));
    return Build(at, [&] { return Store::Make(target, sub.index, value, streaming, sub.mask); });
  }

  Stmt ParseIf() {
    const Token& at = Next();  // if
    Expect("(");
    Expr cond = ParseExpr();
    Expect(")");
    Stmt then_body = Braced();
    Stmt else_body;
    if (IsWord("else")) {
      ++pos_;
      if (IsWord("if") && IsPunct("(", 1)) {
        Nested nested(*this);
        else_body = ParseIf();
      } else {
        else_body = Braced();
      }
    }
    return Build(at, [&] { return If::Make(cond, then_body, else_body); });
  }

  // `for (TYPE v = BEGIN; v < END; v += STEP) { BODY }`
  Stmt ParseFor(bool unroll) {
    const Token& at = Next();  // for
    Expect("(");
    const Token& type_at = Peek();
    Type type = ExpectValueType();
    std::string var = ExpectName("a loop variable");
    auto same_var = [&] {
      if (!IsWord(var)) Fail(Peek(), "expected the loop variable '{}', found {}", var, Describe(Peek()));
      ++pos_;
    };
    Expect("=");
    Expr begin = ParseExpr();
    Expect(";");
    same_var();
    Expect("<");
    Expr end = ParseExpr();
    Expect(";");
    same_var();
    Expect("+");
    Expect("=");
    Expr step = ParseExpr();
    Expect(")");
    if (begin->type != type)
      Fail(type_at, "loop variable '{}' of type {} begins at a {}", var, ToString(type), ToString(begin->type));
    scopes_.emplace_back();
    Declare(var, type);
    Stmt body = Braced();
    scopes_.pop_back();
    return Build(at, [&] { return For::Make(var, begin, end, step, body, unroll); });
  }

  // `prefetch(BASE[INDEX]);`
  Stmt ParsePrefetch() {
    const Token& at = Next();  // prefetch
    Expect("(");
    Expr base = Primary();
    Expect("[");
    Expr index = ParseExpr();
    Expect("]");
    Expect(")");
    Expect(";");
    return Build(at, [&] { return Prefetch::Make(base, index); });
  }

  Stmt ParseBarrier() {
    const Token& at = Next();
    Expect("(");
    std::string fence = ExpectName("a memory fence (local, global)");
    if (fence == "local" && Accept("|")) fence += "|" + ExpectName("'global'");
    Expect(")");
    Expect(";");
    for (MemFence f : {MemFence::Local, MemFence::Global, MemFence::LocalAndGlobal})
      if (Name(f) == fence) return Barrier::Make(f);
    Fail(at, "unknown memory fence '{}' (want local, global or local|global)", fence);
  }

  // --- Expressions ---

  struct Subscript {
    Expr index;
    std::optional<int> width;  // `:+N`
    Expr mask;
  };

  // `[INDEX[:+N] [if MASK]]`
  Subscript ParseSubscript() {
    Expect("[");
    Subscript s;
    s.index = ParseExpr();
    if (Accept(":")) {
      Expect("+");
      s.width = static_cast<int>(ExpectInt("a vector width", 2, 16));
    }
    if (IsWord("if")) {
      ++pos_;
      s.mask = ParseExpr();
    }
    Expect("]");
    return s;
  }

  // An operand: a primary with its postfix subscripts and lane selections.
  Expr ParseExpr() {
    Nested nested(*this);
    Expr e = Primary();
    while (true) {
      const Token& at = Peek();
      if (IsPunct("[")) {
        Subscript s = ParseSubscript();
        e = Build(at, [&] { return Load::Make(e, s.index, s.width.value_or(1), s.mask); });
      } else if (IsPunct(".")) {
        ++pos_;
        const Token& lane_at = Peek();
        std::string lane = ExpectName("a lane (s0 … sf)");
        size_t hex = lane.size() == 2 && lane[0] == 's' ? std::string_view("0123456789abcdef").find(lane[1])
                                                        : std::string_view::npos;
        if (hex == std::string_view::npos) Fail(lane_at, "expected a lane s0 … sf, found '{}'", lane);
        int n = static_cast<int>(hex);
        e = Build(at, [&] { return VectorExtract::Make(e, n); });
      } else {
        return e;
      }
    }
  }

  Expr Primary() {
    const Token& t = Peek();
    if (IsPunct("(")) {
      ++pos_;
      return Parenthesized(t);
    }
    if (IsPunct("-") && (Peek(1).kind == Tok::Int || Peek(1).kind == Tok::Float)) {
      ++pos_;
      return Literal(Next(), true, std::nullopt);
    }
    if (t.kind == Tok::Int || t.kind == Tok::Float) return Literal(Next(), false, std::nullopt);
    if (t.kind != Tok::Ident) Fail(t, "expected an expression, found {}", Describe(t));
    if (IsPunct("(", 1) && IsBuiltin(t.text)) return Builtin();
    ++pos_;
    if (const Type* type = Lookup(t.text)) return Build(t, [&] { return VarRef::Make(t.text, *type); });
    if (t.text == "true" || t.text == "false") return BoolConst::Make(t.text == "true");
    if (IsPunct("(")) Fail(t, "unknown function '{}'", t.text);
    Fail(t, "'{}' is not declared", t.text);
  }

  // After `(`: a cast `(T)(x)`, a typed constant `(T)7`, a unary operation
  // `(-x)`, a binary one `(a + b)`, `(c ? a : b)`, or a parenthesized operand.
  Expr Parenthesized(const Token& open) {
    if (AtValueType() && IsPunct(")", 1)) {
      Type type = ExpectValueType();
      Expect(")");
      if (Accept("(")) {
        Expr value = ParseExpr();
        Expect(")");
        return Build(open, [&] { return Cast::Make(type, value); });
      }
      bool negative = Accept("-");
      return Literal(Next(), negative, type);
    }
    Expr a;
    const Token& op = Peek();
    if (IsPunct("-") || IsPunct("~") || IsPunct("!")) {
      ++pos_;
      bool literal = op.text == "-" && (Peek().kind == Tok::Int || Peek().kind == Tok::Float);
      if (!literal || IsPunct(")", 1)) {
        Expr operand = ParseExpr();
        Expect(")");
        UnaryOp u = op.text == "-" ? UnaryOp::Neg : op.text == "~" ? UnaryOp::BitNot : UnaryOp::LogicalNot;
        return Build(op, [&] { return Unary::Make(u, operand); });
      }
      a = Literal(Next(), true, std::nullopt);  // `(-5 + x)`: a negative constant
    } else {
      a = ParseExpr();
    }
    if (Accept(")")) return a;
    if (Accept("?")) {
      Expr t = ParseExpr();
      Expect(":");
      Expr f = ParseExpr();
      Expect(")");
      return Build(open, [&] { return Cond::Make(a, t, f); });
    }
    const Token& infix = Peek();
    std::optional<BinaryOp> bop = InfixOp(infix);
    if (!bop) Fail(infix, "expected an operator, '?' or ')', found {}", Describe(infix));
    ++pos_;
    Expr b = ParseExpr();
    Expect(")");
    return Build(infix, [&] { return Binary::Make(*bop, a, b); });
  }

  // A number (or `nan`, `inf` after a float type): of `type` when given, else
  // index for an integer and f32, f16 or f64 by the float's suffix.
  Expr Literal(const Token& t, bool negative, std::optional<Type> type) {
    std::string text = (negative ? "-" : "") + t.text;
    if (type && type->IsFloat() && (t.text == "nan" || t.text == "inf")) {
      if (t.text == "nan" && negative) Fail(t, "'-nan' is not a constant");
      double v = t.text == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                 : negative ? -std::numeric_limits<double>::infinity()
                                            : std::numeric_limits<double>::infinity();
      return Build(t, [&] { return FloatConst::Make(v, *type); });
    }
    if (t.kind == Tok::Int) {
      Type it = type.value_or(Type::Index());
      int64_t v = 0;
      std::errc ec{};
      if (it.IsScalar() && it.dtype == DataType::U64 && !negative) {
        uint64_t u = 0;
        ec = std::from_chars(t.text.data(), t.text.data() + t.text.size(), u).ec;
        v = static_cast<int64_t>(u);
      } else {
        ec = std::from_chars(text.data(), text.data() + text.size(), v).ec;
      }
      if (ec != std::errc()) Fail(t, "integer constant {} is out of range", text);
      if (it.IsFloat()) return Build(t, [&] { return FloatConst::Make(static_cast<double>(v), it); });
      return Build(t, [&] { return IntConst::Make(v, it); });
    }
    if (t.kind != Tok::Float) Fail(t, "expected a number, found {}", Describe(t));
    DataType dtype = DataType::F64;
    std::string digits = text;
    if (text.back() == 'f' || text.back() == 'h') {
      dtype = text.back() == 'f' ? DataType::F32 : DataType::F16;
      digits.pop_back();
    }
    if (type) {
      if (text.back() == 'f' || text.back() == 'h') Fail(t, "a suffixed constant after a cast");
      dtype = type->dtype;
    }
    double v = std::strtod(digits.c_str(), nullptr);
    if (!std::isfinite(v)) Fail(t, "float constant {} is out of range", text);
    Type ft = type.value_or(Type::Scalar(dtype));
    return Build(t, [&] { return FloatConst::Make(v, ft); });
  }

  std::vector<Expr> Args(const Token& fn, size_t count) {
    std::vector<Expr> args;
    for (size_t i = 0; i < count; ++i) {
      if (i) Expect(",");
      if (IsPunct(")")) Fail(Peek(), "{} takes {} arguments", fn.text, count);
      args.push_back(ParseExpr());
    }
    Expect(")");
    return args;
  }

  // NAME(ARGS) for the built-in names (IsBuiltin).
  Expr Builtin() {
    const Token& fn = Next();
    Expect("(");
    const std::string& n = fn.text;
    if (auto k = ThreadIndexNamed(n)) {
      int dim = static_cast<int>(ExpectInt("a dimension", 0, 2));
      Expect(")");
      return ThreadIndex::Make(*k, dim);
    }
    if (auto k = LimitNamed(n)) {
      Type type = ExpectValueType();
      Expect(")");
      return Build(fn, [&] { return LimitConst::Make(*k, type); });
    }
    if (n == "insert") {
      Expr v = ParseExpr();
      Expect(",");
      int lane = static_cast<int>(ExpectInt("a lane", 0, 15));
      Expect(",");
      Expr x = ParseExpr();
      Expect(")");
      return Build(fn, [&] { return VectorInsert::Make(v, lane, x); });
    }
    if (n == "shuffle") {
      Expr a = ParseExpr();
      Expect(",");
      Expr b = ParseExpr();
      Expect(",");
      Expect("[");
      std::vector<int> lanes;
      while (!Accept("]")) {
        if (lanes.size() >= 16) Fail(Peek(), "a shuffle picks at most 16 lanes");
        lanes.push_back(static_cast<int>(ExpectInt("a lane", 0, 31)));
      }
      Expect(")");
      return Build(fn, [&] { return VectorShuffle::Make(a, b, lanes); });
    }
    if (int width = BroadcastWidth(n)) {
      std::vector<Expr> args = Args(fn, 1);
      return Build(fn, [&] { return Broadcast::Make(args[0], width); });
    }
    if (n == "select" || n == "clamp") {
      std::vector<Expr> a = Args(fn, 3);
      if (n == "select") return Build(fn, [&] { return Select::Make(a[0], a[1], a[2]); });
      return Build(fn, [&] { return Clamp::Make(a[0], a[1], a[2]); });
    }
    if (n == "min" || n == "max") {
      std::vector<Expr> a = Args(fn, 2);
      return Build(fn, [&] { return Binary::Make(n == "min" ? BinaryOp::Min : BinaryOp::Max, a[0], a[1]); });
    }
    CallFn call = *CallNamed(n);
    std::vector<Expr> args = Args(fn, static_cast<size_t>(Arity(call)));
    return Build(fn, [&] { return Call::Make(call, args); });
  }

  SourceFilePtr src_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<std::map<std::string, Type>> scopes_;
};

}  // namespace

Module Parse(const SourceFilePtr& source) { return Parser(source).ParseModule(); }

}  // namespace tilec::sem
