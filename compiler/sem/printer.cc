#include "compiler/sem/printer.h"

#include <fmt/format.h>

#include <cmath>

#include "support/error.h"

namespace tilec::sem {
namespace {

// Shortest text that reads back as the same value of the constant's type.
std::string FloatText(double v, DataType dtype) {
  std::string s;
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (dtype == DataType::F64)
    s = fmt::format("{}", v);
  else
    s = fmt::format("{}", static_cast<float>(v));
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string LaneName(int lane) { return fmt::format("s{:x}", lane); }

// Appends the text of expressions to `out`.
class ExprPrinter : public Visitor {
 public:
  explicit ExprPrinter(std::string& out) : out_(out) {}
  using Visitor::Visit;

 protected:
  void VisitIntConst(const IntConst& n) override {
    if (n.type.IsIndex()) {
      out_ += std::to_string(n.value);
    } else if (n.type.dtype == DataType::U64) {
      out_ += fmt::format("(ulong){}", static_cast<uint64_t>(n.value));
    } else {
      out_ += fmt::format("({}){}", ToString(n.type), n.value);
    }
  }
  void VisitFloatConst(const FloatConst& n) override {
    std::string text = FloatText(n.value, n.type.dtype);
    bool finite = std::isfinite(n.value);
    switch (n.type.dtype) {
      case DataType::F16: out_ += finite ? text + "h" : "(half)" + text; break;
      case DataType::F32: out_ += finite ? text + "f" : "(float)" + text; break;
      default: out_ += finite ? text : "(double)" + text; break;
    }
  }
  void VisitBoolConst(const BoolConst& n) override { out_ += n.value ? "true" : "false"; }
  void VisitLimitConst(const LimitConst& n) override {
    out_ += fmt::format("{}({})", Name(n.which), ToString(n.type));
  }
  void VisitVarRef(const VarRef& n) override { out_ += n.name; }
  void VisitLoad(const Load& n) override {
    Visit(n.base);
    out_ += "[";
    Visit(n.index);
    if (n.base->type.width == 1 && n.type.width > 1) out_ += fmt::format(":+{}", n.type.width);
    if (n.mask) {
      out_ += " if ";
      Visit(n.mask);
    }
    out_ += "]";
  }
  void VisitUnary(const Unary& n) override {
    out_ += "(";
    out_ += Spelling(n.op);
    Visit(n.operand);
    out_ += ")";
  }
  void VisitBinary(const Binary& n) override {
    if (n.op == BinaryOp::Min || n.op == BinaryOp::Max) {
      Fn(Spelling(n.op), {n.a, n.b});
      return;
    }
    out_ += "(";
    Visit(n.a);
    out_ += fmt::format(" {} ", Spelling(n.op));
    Visit(n.b);
    out_ += ")";
  }
  void VisitSelect(const Select& n) override {
    Fn("select", {n.cond, n.true_value, n.false_value});
  }
  void VisitCond(const Cond& n) override {
    out_ += "(";
    Visit(n.cond);
    out_ += " ? ";
    Visit(n.true_value);
    out_ += " : ";
    Visit(n.false_value);
    out_ += ")";
  }
  void VisitClamp(const Clamp& n) override { Fn("clamp", {n.value, n.lo, n.hi}); }
  void VisitCast(const Cast& n) override {
    out_ += fmt::format("({})(", ToString(n.type));
    Visit(n.value);
    out_ += ")";
  }
  void VisitCall(const Call& n) override { Fn(Name(n.fn), n.args); }
  void VisitThreadIndex(const ThreadIndex& n) override {
    out_ += fmt::format("{}({})", Name(n.which), n.dim);
  }
  void VisitBroadcast(const Broadcast& n) override {
    Fn(fmt::format("broadcast{}", n.type.width), {n.value});
  }
  void VisitVectorExtract(const VectorExtract& n) override {
    Operand(n.vector);
    out_ += "." + LaneName(n.lane);
  }
  void VisitVectorInsert(const VectorInsert& n) override {
    out_ += "insert(";
    Visit(n.vector);
    out_ += fmt::format(", {}, ", n.lane);
    Visit(n.value);
    out_ += ")";
  }
  void VisitVectorShuffle(const VectorShuffle& n) override {
    out_ += "shuffle(";
    Visit(n.a);
    out_ += ", ";
    Visit(n.b);
    out_ += fmt::format(", [{}])", fmt::join(n.lanes, " "));
  }

 private:
  void Fn(std::string_view name, const std::vector<Expr>& args) {
    out_ += name;
    out_ += "(";
    for (size_t i = 0; i < args.size(); ++i) {
      if (i) out_ += ", ";
      Visit(args[i]);
    }
    out_ += ")";
  }
  // An operand of a postfix operator: only a cast needs parentheses (the
  // other compound forms print their own).
  void Operand(const Expr& e) {
    if (e->kind != NodeKind::Cast) {
      Visit(e);
      return;
    }
    out_ += "(";
    Visit(e);
    out_ += ")";
  }

  std::string& out_;
};

// `float x`, `global const float* p`, `local float t[64]`.
std::string Declarator(const Type& t, const std::string& name) {
  if (!t.IsArray()) return fmt::format("{} {}", ToString(t), name);
  std::string elem = ToString(t.Element());
  if (t.space == AddressSpace::Private) return fmt::format("{} {}[{}]", elem, name, t.count);
  return fmt::format("{} {} {}[{}]", Name(t.space), elem, name, t.count);
}

// Appends statements, one per line, indented.
class StmtPrinter : public Visitor {
 public:
  StmtPrinter(std::string& out, int indent) : out_(out), indent_(indent), exprs_(out) {}
  using Visitor::Visit;

  // `{`, the statements of `body` (its own if a Block), `}` without a newline.
  void Braced(const Stmt& body) {
    if (auto* b = As<Block>(body)) {
      Braced(b->stmts);
    } else {
      Braced(std::vector<Stmt>{body});
    }
  }
  void Braced(const std::vector<Stmt>& stmts) {
    out_ += "{\n";
    indent_ += 2;
    for (const Stmt& s : stmts) Visit(s);
    indent_ -= 2;
    Indent();
    out_ += "}";
  }

 protected:
  void VisitDeclare(const Declare& n) override {
    Indent();
    out_ += Declarator(n.type, n.name);
    if (n.init) {
      out_ += n.type.IsArray() ? " = {fill " : " = ";
      E(n.init);
      if (n.type.IsArray()) out_ += "}";
    }
    out_ += ";\n";
  }
  void VisitAssign(const Assign& n) override {
    Indent();
    E(n.var);
    out_ += " = ";
    E(n.value);
    out_ += ";\n";
  }
  void VisitStore(const Store& n) override {
    Indent();
    E(n.base);
    out_ += "[";
    E(n.index);
    if (n.base->type.width == 1 && n.value->type.width > 1)
      out_ += fmt::format(":+{}", n.value->type.width);
    if (n.mask) {
      out_ += " if ";
      E(n.mask);
    }
    out_ += n.streaming ? "] = stream " : "] = ";
    E(n.value);
    out_ += ";\n";
  }
  void VisitPrefetch(const Prefetch& n) override {
    Indent();
    out_ += "prefetch(";
    E(n.base);
    out_ += "[";
    E(n.index);
    out_ += "]);\n";
  }
  void VisitBlock(const Block& n) override {
    Indent();
    Braced(n.stmts);
    out_ += "\n";
  }
  void VisitIf(const If& n) override {
    Indent();
    IfChain(n);
    out_ += "\n";
  }
  void VisitFor(const For& n) override {
    Indent();
    if (!n.unroll) {
      out_ += "#pragma unroll 1\n";
      Indent();
    }
    out_ += fmt::format("for ({} {} = ", ToString(n.begin->type), n.var);
    E(n.begin);
    out_ += fmt::format("; {} < ", n.var);
    E(n.end);
    out_ += fmt::format("; {} += ", n.var);
    E(n.step);
    out_ += ") ";
    Braced(n.body);
    out_ += "\n";
  }
  void VisitWhile(const While& n) override {
    Indent();
    out_ += "while (";
    E(n.cond);
    out_ += ") ";
    Braced(n.body);
    out_ += "\n";
  }
  void VisitBarrier(const Barrier& n) override {
    Indent();
    out_ += fmt::format("barrier({});\n", Name(n.fence));
  }
  void VisitReturn(const Return& n) override {
    Indent();
    out_ += "return";
    if (n.value) {
      out_ += " ";
      E(n.value);
    }
    out_ += ";\n";
  }
  void VisitComment(const Comment& n) override {
    size_t start = 0;
    while (true) {
      size_t end = n.text.find('\n', start);
      Indent();
      out_ += "//";
      std::string_view line = std::string_view(n.text).substr(start, end - start);
      if (!line.empty()) out_ += fmt::format(" {}", line);
      out_ += "\n";
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }

 private:
  void Indent() { out_.append(indent_, ' '); }
  void E(const Expr& e) { exprs_.Visit(e); }
  void IfChain(const If& n) {
    out_ += "if (";
    E(n.cond);
    out_ += ") ";
    Braced(n.then_body);
    if (!n.else_body) return;
    out_ += " else ";
    if (auto* nested = As<If>(n.else_body)) {
      IfChain(*nested);
    } else {
      Braced(n.else_body);
    }
  }

  std::string& out_;
  int indent_;
  ExprPrinter exprs_;
};

}  // namespace

std::string Print(const Expr& e) {
  if (!e) return "<null>";
  std::string out;
  ExprPrinter(out).Visit(e);
  return out;
}

std::string Print(const Stmt& s, int indent) {
  std::string out;
  StmtPrinter(out, indent).Visit(s);
  return out;
}

std::string Print(const Function& f) {
  std::string out = f.is_kernel ? "kernel " : "";
  out += fmt::format("{} {}(", ToString(f.return_type), f.name);
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    if (i) out += ", ";
    out += fmt::format("{}{} {}", ToString(p.type), p.noalias ? " restrict" : "", p.name);
  }
  out += fmt::format(") index({})", lang::Name(f.index_type));
  if (f.work_group_size) {
    const auto& w = *f.work_group_size;
    out += fmt::format(" work_group_size({}, {}, {})", w[0], w[1], w[2]);
  }
  out += " ";
  StmtPrinter printer(out, 0);
  printer.Braced(f.body ? f.body : Block::Make({}));
  out += "\n";
  return out;
}

std::string Print(const Module& m) {
  std::string out;
  for (size_t i = 0; i < m.functions.size(); ++i) {
    if (i) out += "\n";
    out += Print(m.functions[i]);
  }
  return out;
}

}  // namespace tilec::sem
