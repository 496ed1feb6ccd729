#include "compiler/sem/verify.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "compiler/sem/printer.h"
#include "support/error.h"

namespace tilec::sem {
namespace {

struct Decl {
  Type type;
  int id = 0;
  bool is_loop_var = false;
};

// One walk over a function: resolves names by scope, records problems, and
// grows `varying`, the ids of variables whose value may differ between the
// threads of a work group. Verify repeats walks until `varying` is stable, so
// that uses before a later thread-dependent assignment (in loops) are caught.
class Walker {
 public:
  Walker(const Function& f, std::set<int>& varying) : f_(f), varying_(varying) {}

  std::vector<std::string> Run() {
    scopes_.emplace_back();
    for (const Param& p : f_.params) Add(p.name, p.type, false);
    if (auto* body = As<Block>(f_.body)) {
      // The parameters and the body's outermost block form one scope.
      for (const Stmt& s : body->stmts) Check(s);
    }
    return std::move(problems_);
  }

 private:
  // What an expression reads, and whether its value may depend on the thread.
  struct ExprInfo {
    bool varying = false;
    std::set<int> ids;
    std::set<std::string> names;
  };

  class ExprWalker : public Visitor {
   public:
    ExprWalker(Walker& w, ExprInfo& info) : w_(w), info_(info) {}
    using Visitor::Visit;

   protected:
    void VisitVarRef(const VarRef& n) override {
      info_.names.insert(n.name);
      const Decl* d = w_.Lookup(n.name);
      if (!d) {
        w_.Problem("'{}' is used but not declared", n.name);
        return;
      }
      if (d->type != n.type)
        w_.Problem("'{}' is used as {} but declared as {}", n.name, ToString(n.type),
                   ToString(d->type));
      info_.ids.insert(d->id);
      if (w_.varying_.count(d->id)) info_.varying = true;
    }
    void VisitThreadIndex(const ThreadIndex& n) override {
      if (n.which == ThreadIndexKind::LocalId || n.which == ThreadIndexKind::GlobalId)
        info_.varying = true;
    }
    void VisitIntConst(const IntConst& n) override {
      if (n.type.IsIndex() && w_.f_.index_type == DataType::I32 &&
          (n.value < INT32_MIN || n.value > INT32_MAX))
        w_.Problem("index constant {} does not fit the i32 index type", n.value);
    }

   private:
    Walker& w_;
    ExprInfo& info_;
  };

  template <typename... Args>
  void Problem(fmt::format_string<Args...> format, Args&&... args) {
    problems_.push_back(fmt::format(format, std::forward<Args>(args)...));
  }

  const Decl* Lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return &found->second;
    }
    return nullptr;
  }

  int Add(const std::string& name, const Type& type, bool is_loop_var) {
    int id = next_id_++;
    if (!scopes_.back().emplace(name, Decl{type, id, is_loop_var}).second)
      Problem("'{}' is declared twice in one scope", name);
    return id;
  }

  ExprInfo Read(const Expr& e) {
    ExprInfo info;
    ExprWalker(*this, info).Visit(e);
    return info;
  }

  void MarkVarying(int id) { varying_.insert(id); }

  // Visits a nested statement in its own scope.
  void Scoped(const Stmt& s) {
    scopes_.emplace_back();
    if (auto* b = As<Block>(s)) {
      for (const Stmt& x : b->stmts) Check(x);
    } else {
      Check(s);
    }
    scopes_.pop_back();
  }

  void Check(const Stmt& s) {
    switch (s->kind) {
      case NodeKind::Declare: return CheckDeclare(static_cast<const Declare&>(*s));
      case NodeKind::Assign: return CheckAssign(static_cast<const Assign&>(*s));
      case NodeKind::Store: return CheckStore(static_cast<const Store&>(*s));
      case NodeKind::Prefetch: {
        auto& n = static_cast<const Prefetch&>(*s);
        Read(n.base);
        Read(n.index);
        return;
      }
      case NodeKind::Block: return Scoped(s);
      case NodeKind::If: {
        auto& n = static_cast<const If&>(*s);
        bool divergent = Read(n.cond).varying;
        divergent_ += divergent;
        Scoped(n.then_body);
        if (n.else_body) Scoped(n.else_body);
        divergent_ -= divergent;
        return;
      }
      case NodeKind::For: return CheckFor(static_cast<const For&>(*s));
      case NodeKind::While: {
        auto& n = static_cast<const While&>(*s);
        bool divergent = Read(n.cond).varying;
        divergent_ += divergent;
        Scoped(n.body);
        divergent_ -= divergent;
        return;
      }
      case NodeKind::Barrier:
        if (divergent_ > 0) Problem("barrier under control flow that depends on the thread");
        return;
      case NodeKind::Return: {
        auto& n = static_cast<const Return&>(*s);
        if (n.value) {
          Read(n.value);
          if (n.value->type != f_.return_type)
            Problem("return of {} from a function returning {}", ToString(n.value->type),
                    ToString(f_.return_type));
        } else if (!f_.return_type.IsVoid()) {
          Problem("return without a value from a function returning {}",
                  ToString(f_.return_type));
        }
        return;
      }
      case NodeKind::Comment: return;
      default: TILEC_UNREACHABLE("statement kind {}", Name(s->kind));
    }
  }

  void CheckDeclare(const Declare& n) {
    bool varying = false;
    if (n.init) {
      ExprInfo info = Read(n.init);
      if (info.names.count(n.name))
        Problem("the initializer of '{}' mentions the '{}' it shadows", n.name, n.name);
      varying = info.varying;
    }
    if (n.type.IsArray() && n.type.space == AddressSpace::Local &&
        (!f_.is_kernel || scopes_.size() != 1))
      Problem("local array '{}' must be declared in a kernel's outermost block", n.name);
    int id = Add(n.name, n.type, false);
    if (varying) MarkVarying(id);
  }

  void CheckAssign(const Assign& n) {
    Read(n.var);
    ExprInfo value = Read(n.value);
    const std::string& name = static_cast<const VarRef&>(*n.var).name;
    const Decl* d = Lookup(name);
    if (!d) return;  // reported by Read
    if (d->is_loop_var) Problem("assignment to loop variable '{}'", name);
    for (const std::set<int>& reads : loop_reads_)
      if (reads.count(d->id)) Problem("assignment to '{}', which a loop bound reads", name);
    if (value.varying || divergent_ > 0) MarkVarying(d->id);
  }

  void CheckStore(const Store& n) {
    ExprInfo base = Read(n.base);
    ExprInfo index = Read(n.index);
    ExprInfo value = Read(n.value);
    if (n.mask) value.varying |= Read(n.mask).varying;
    const Type& t = n.base->type;
    if (t.IsPointer() && (t.is_const || t.space == AddressSpace::Constant))
      Problem("store through {} '{}'", ToString(t), Print(n.base));
    // A private array holds one copy per thread: thread-dependent stores make
    // its contents thread-dependent. (Shared memory read at a uniform index
    // gives every thread the same value, so pointers stay uniform.)
    if (t.IsArray() && t.space == AddressSpace::Private &&
        (index.varying || value.varying || divergent_ > 0))
      for (int id : base.ids) MarkVarying(id);
  }

  void CheckFor(const For& n) {
    ExprInfo bounds;
    for (const Expr& e : {n.begin, n.end, n.step}) {
      ExprInfo info = Read(e);
      bounds.varying |= info.varying;
      bounds.ids.insert(info.ids.begin(), info.ids.end());
      bounds.names.insert(info.names.begin(), info.names.end());
    }
    if (bounds.names.count(n.var))
      Problem("the bounds of loop '{}' mention the '{}' it shadows", n.var, n.var);
    divergent_ += bounds.varying;
    loop_reads_.push_back(bounds.ids);
    scopes_.emplace_back();
    int id = Add(n.var, n.begin->type, true);
    if (bounds.varying) MarkVarying(id);
    Scoped(n.body);
    scopes_.pop_back();
    loop_reads_.pop_back();
    divergent_ -= bounds.varying;
  }

  const Function& f_;
  std::set<int>& varying_;
  std::vector<std::string> problems_;
  std::vector<std::map<std::string, Decl>> scopes_;
  std::vector<std::set<int>> loop_reads_;  // ids the bounds of each enclosing loop read
  int next_id_ = 0;  // deterministic, so ids agree between walks
  int divergent_ = 0;  // enclosing thread-dependent conditions
};

std::vector<std::string> FunctionProblems(const Function& f) {
  std::vector<std::string> problems;
  if (!IsIdentifier(f.name)) problems.push_back(fmt::format("bad function name '{}'", f.name));
  if (f.index_type != DataType::I32 && f.index_type != DataType::I64)
    problems.push_back(fmt::format("index type {} (want i32 or i64)", lang::Name(f.index_type)));
  if (f.is_kernel && !f.return_type.IsVoid())
    problems.push_back(fmt::format("kernel returns {}", ToString(f.return_type)));
  if (!f.return_type.IsVoid() && !f.return_type.IsValue())
    problems.push_back(fmt::format("function returns {}", ToString(f.return_type)));
  if (f.work_group_size)
    for (int64_t n : *f.work_group_size)
      if (n <= 0) problems.push_back(fmt::format("work-group size dimension {}", n));
  for (const Param& p : f.params) {
    if (!IsIdentifier(p.name)) problems.push_back(fmt::format("bad parameter name '{}'", p.name));
    if (!p.type.IsValue() && !p.type.IsPointer())
      problems.push_back(fmt::format("parameter '{}' of type {}", p.name, ToString(p.type)));
    if (p.noalias && !p.type.IsPointer())
      problems.push_back(fmt::format("noalias parameter '{}' is not a pointer", p.name));
  }
  if (!As<Block>(f.body)) {
    problems.push_back("the body is not a block");
    return problems;
  }
  std::set<int> varying;
  std::vector<std::string> walk;
  size_t before = 0;
  do {
    before = varying.size();
    walk = Walker(f, varying).Run();
  } while (varying.size() != before);
  problems.insert(problems.end(), walk.begin(), walk.end());
  return problems;
}

}  // namespace

void Verify(const Function& f) {
  std::vector<std::string> problems = FunctionProblems(f);
  if (problems.empty()) return;
  std::string message = fmt::format("sem function '{}' is invalid:", f.name);
  for (const std::string& p : problems) message += "\n  " + p;
  throw InternalError(message);
}

void Verify(const Module& m) {
  std::set<std::string> names;
  for (const Function& f : m.functions) {
    Verify(f);
    TILEC_CHECK(names.insert(f.name).second, "sem module defines '{}' twice", f.name);
  }
}

std::vector<std::string> Problems(const Module& m) {
  std::vector<std::string> out;
  std::set<std::string> names;
  for (const Function& f : m.functions) {
    for (const std::string& p : FunctionProblems(f)) out.push_back(fmt::format("{}: {}", f.name, p));
    if (!names.insert(f.name).second) out.push_back(fmt::format("the module defines '{}' twice", f.name));
  }
  return out;
}

}  // namespace tilec::sem
