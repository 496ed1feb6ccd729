// Lowering of sem statements to LLVM IR, the group and work-item loops of a
// kernel, its entry point, and the barrier form (see emit_llvm.h).
#include <fmt/format.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <set>
#include <string>

#include "hal/llvm/emit_llvm.h"
#include "hal/llvm/inline_math.h"
#include "hal/llvm/lower_function.h"
#include "support/error.h"

namespace tilec::hal::cpu {
namespace {

using namespace tilec::sem;  // NOLINT: this file is all about sem nodes

const std::vector<Stmt>& StmtsOf(const Stmt& s) {
  static const std::vector<Stmt> kNone;
  auto* b = As<Block>(s);
  TILEC_CHECK(b != nullptr, "llvm: expected a block");
  return b ? b->stmts : kNone;
}

// Counts the calls with a fast path (inline_math.h) in the statements it
// visits, outside conditional expressions (whose calls stay exact).
class FastPathCounter : public Visitor {
 public:
  int count = 0;
  void VisitCall(const Call& n) override {
    if (HasFastPath(n.fn, n.type)) ++count;
    Visitor::VisitCall(n);
  }
  void VisitCond(const Cond&) override {}
};

// Whether `e` reads one of `names`.
bool ReadsAny(const Expr& e, const std::set<std::string>& names) {
  struct Reads : Visitor {
    const std::set<std::string>* names;
    bool found = false;
    void VisitVarRef(const VarRef& n) override { found |= names->count(n.name) > 0; }
  } reads;
  reads.names = &names;
  reads.Visit(e);
  return reads.found;
}

// The call with a fast path that initializes declaration `s`, or null.
const Call* FastPathInit(const Stmt& s) {
  auto* call = As<Call>(static_cast<const sem::Declare&>(*s).init);
  return call && HasFastPath(call->fn, call->type) ? call : nullptr;
}

// Batches of up to this many calls share one long vector (FastMathCalls):
// four chains of pow's ~40 operations fill the 32 vector registers.
constexpr size_t kMaxFastBatch = 4;

// Only pow is batched: its chain (~100 cycles deep) is what the out-of-order
// window cannot overlap across vectors. exp's and log's are short enough
// that batching them only adds register pressure: bench/suite
// log(1+exp(x)) 8M is slower batched than versioned alone.
bool Batched(sem::CallFn fn) { return fn == CallFn::Pow; }

// The end of the batch starting at `begin`: declarations initialized by
// calls of the same function on the same type, none reading another's
// variable.
size_t FastBatchEnd(const std::vector<Stmt>& stmts, size_t begin, size_t end) {
  const Call* first = FastPathInit(stmts[begin]);
  if (!first || !Batched(first->fn)) return begin;
  std::set<std::string> declared;
  size_t i = begin;
  for (; i < end && i - begin < kMaxFastBatch; ++i) {
    const Call* c = FastPathInit(stmts[i]);
    if (!c || c->fn != first->fn || !(c->type == first->type)) break;
    bool reads = false;
    for (const Expr& a : c->args) reads |= ReadsAny(a, declared);
    if (reads) break;
    declared.insert(static_cast<const sem::Declare&>(*stmts[i]).name);
  }
  return i;
}

// A declaration VersionedDeclares may run twice: a fresh scalar or vector
// variable and its (side-effect free) initial value.
bool Versionable(const Stmt& s) {
  auto* d = As<sem::Declare>(s);
  return d != nullptr && d->init && !d->type.IsArray();
}

}  // namespace

FunctionLowering::FunctionLowering(llvm::Module& module, const Function& f,
                                   std::array<int64_t, 3> local, VectorIsa vector_isa, bool fma)
    : ctx_(module.getContext()),
      module_(module),
      f_(f),
      b_(module.getContext()),
      local_(local),
      vector_isa_(vector_isa),
      fma_(fma) {
  for (int64_t n : local_) {
    TILEC_CHECK(n >= 1, "llvm: kernel '{}' has work-group size {}", f_.name, n);
    group_size_ *= n;
  }
}

void FunctionLowering::Emit() {
  if (f_.is_kernel) {
    EmitKernel();
  } else {
    EmitHelper();
  }
}

// --- Names ----------------------------------------------------------------------

const FunctionLowering::Var& FunctionLowering::Lookup(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto found = it->find(name); found != it->end()) return found->second;
  TILEC_UNREACHABLE("llvm: '{}' is not declared", name);
}

llvm::Value* FunctionLowering::Address(const Var& v) {
  if (!v.per_item) return v.addr;
  auto* all = llvm::ArrayType::get(v.ty, static_cast<uint64_t>(group_size_));
  return b_.CreateInBoundsGEP(all, v.addr, {b_.getInt64(0), item_});
}

llvm::AllocaInst* FunctionLowering::EntryAlloca(llvm::Type* ty, const std::string& name) {
  llvm::IRBuilder<> entry(alloca_block_, alloca_block_->begin());
  llvm::AllocaInst* a = entry.CreateAlloca(ty, nullptr, name);
  // Room for unaligned vector access is not needed, but aligned arrays help.
  if (ty->isArrayTy()) a->setAlignment(llvm::Align(64));
  return a;
}

FunctionLowering::Var& FunctionLowering::Declare(const std::string& name, const Type& type,
                                                 bool per_item) {
  Var v;
  v.type = type;
  v.ty = VarTy(type);
  v.per_item = per_item && group_size_ > 1;
  llvm::Type* storage =
      v.per_item ? llvm::ArrayType::get(v.ty, static_cast<uint64_t>(group_size_)) : v.ty;
  v.addr = EntryAlloca(storage, name);
  auto [it, fresh] = scopes_.back().insert_or_assign(name, v);
  TILEC_CHECK(fresh, "llvm: '{}' declared twice in one scope", name);
  return it->second;
}

// --- Statements -------------------------------------------------------------------

void FunctionLowering::StartDeadBlock() {
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "dead", fn_));
}

void FunctionLowering::Scoped(const Stmt& s) {
  scopes_.emplace_back();
  if (auto* b = As<Block>(s)) {
    Stmts(b->stmts);
  } else {
    S(s);
  }
  scopes_.pop_back();
}

void FunctionLowering::Stmts(const std::vector<Stmt>& stmts) {
  // A name declared already (in an enclosing scope) ends a run: the run's
  // second version would read the new variable where the first read the old.
  auto fresh = [&](const Stmt& s) {
    const std::string& name = static_cast<const sem::Declare&>(*s).name;
    return std::none_of(scopes_.begin(), scopes_.end(), [&](const auto& scope) { return scope.count(name) > 0; });
  };
  for (size_t i = 0; i < stmts.size();) {
    size_t end = i;
    FastPathCounter calls;
    while (end < stmts.size() && Versionable(stmts[end]) && fresh(stmts[end])) calls.Visit(stmts[end++]);
    if (fma_ && calls.count >= 2) {  // the fast paths are inline math
      VersionedDeclares(stmts, i, end);
      i = end;
      continue;
    }
    for (end = std::max(end, i + 1); i < end; ++i) S(stmts[i]);
  }
}

// The run's fast version first: every exp, log and pow on its fast path
// (inline_math.h) in one straight block, a row's pow calls batched in one
// long vector (FastMathCalls) so that their dependency chains run
// interleaved (one pow's chain is ~100 cycles deep, more than the
// out-of-order window overlaps: bench/suite pow+sqrt bcast 2048x2048
// gains); then one test of all
// their lanes, and where one is outside, the run again with the exact paths
// (the variables are fresh, their values free of side effects, so running it
// twice is running it once), where a call whose own lanes all held takes its
// fast value (fast_results_) and only the others go past the fast path.
void FunctionLowering::VersionedDeclares(const std::vector<Stmt>& stmts, size_t begin, size_t end) {
  std::vector<llvm::Value*> checks;
  fast_checks_ = &checks;
  for (size_t i = begin; i < end;) {
    size_t batch = FastBatchEnd(stmts, i, end);
    if (batch - i < 2) {
      DeclareStmt(static_cast<const sem::Declare&>(*stmts[i++]), false);
      continue;
    }
    const Call& call = *FastPathInit(stmts[i]);
    std::vector<std::vector<llvm::Value*>> args;
    for (size_t k = i; k < batch; ++k) {
      args.emplace_back();
      for (const Expr& a : FastPathInit(stmts[k])->args) args.back().push_back(E(a));
    }
    std::vector<FastMath> values = FastMathCalls(call.fn, call.type, args);
    for (size_t k = i; k < batch; ++k) {
      auto& d = static_cast<const sem::Declare&>(*stmts[k]);
      fast_results_[FastPathInit(stmts[k])] = values[k - i];
      b_.CreateStore(b_.CreateFPCast(values[k - i].value, ValueTy(call.type)),
                     Address(Declare(d.name, d.type, false)));
    }
    i = batch;
  }
  fast_checks_ = nullptr;
  if (checks.empty()) {  // every call was in a conditional expression: exact already
    fast_results_.clear();
    return;
  }
  llvm::Value* any = checks[0];
  for (size_t k = 1; k < checks.size(); ++k) any = b_.CreateOr(any, checks[k]);
  auto* exact = llvm::BasicBlock::Create(ctx_, "exact", fn_);
  auto* join = llvm::BasicBlock::Create(ctx_, "exact.end", fn_);
  b_.CreateCondBr(any, exact, join, llvm::MDBuilder(ctx_).createBranchWeights(1, 1000));
  b_.SetInsertPoint(exact);
  for (size_t i = begin; i < end; ++i) {
    auto& d = static_cast<const sem::Declare&>(*stmts[i]);
    b_.CreateStore(E(d.init), Address(Lookup(d.name)));
  }
  fast_results_.clear();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
}

void FunctionLowering::Body(const Stmt& s, bool uniform) {
  if (!uniform) return Scoped(s);
  scopes_.emplace_back();
  if (auto* b = As<Block>(s)) {
    UniformStmts(b->stmts);
  } else {
    Uniform(s);
  }
  scopes_.pop_back();
}

void FunctionLowering::S(const Stmt& s) {
  switch (s->kind) {
    case NodeKind::Declare: return DeclareStmt(static_cast<const sem::Declare&>(*s), false);
    case NodeKind::Assign: {
      auto& n = static_cast<const Assign&>(*s);
      llvm::Value* v = E(n.value);
      b_.CreateStore(v, Address(Lookup(static_cast<const VarRef&>(*n.var).name)));
      return;
    }
    case NodeKind::Store: return StoreStmt(static_cast<const Store&>(*s));
    case NodeKind::Prefetch: {
      // llvm.prefetch(address, read, locality 3: keep in all levels, data)
      auto& n = static_cast<const sem::Prefetch&>(*s);
      llvm::Value* addr = ElementAddress(n.base, n.index);
      llvm::Function* fn = llvm::Intrinsic::getDeclaration(b_.GetInsertBlock()->getModule(),
                                                           llvm::Intrinsic::prefetch, {addr->getType()});
      b_.CreateCall(fn, {addr, b_.getInt32(0), b_.getInt32(3), b_.getInt32(1)});
      return;
    }
    case NodeKind::Block: return Scoped(s);
    case NodeKind::If: return IfStmt(static_cast<const If&>(*s), false);
    case NodeKind::For: return ForStmt(static_cast<const For&>(*s), false);
    case NodeKind::While: return WhileStmt(static_cast<const While&>(*s), false);
    case NodeKind::Barrier:
      // Only reached where the group has one work item, or in helpers.
      TILEC_CHECK(!barrier_form_, "llvm: barrier inside a barrier-free region of '{}'", f_.name);
      return;
    case NodeKind::Return: return ReturnStmt(static_cast<const Return&>(*s));
    case NodeKind::Comment: return;
    default: TILEC_UNREACHABLE("statement kind {}", Name(s->kind));
  }
}

void FunctionLowering::DeclareStmt(const sem::Declare& n, bool per_item) {
  const Type& t = n.type;
  if (t.IsArray() && t.space == AddressSpace::Local) {
    // One copy per work group, shared by its work items.
    Declare(n.name, t, false);
    return;
  }
  llvm::Value* init = n.init ? E(n.init) : nullptr;
  const Var& v = Declare(n.name, t, per_item);
  if (!init) return;
  llvm::Value* addr = Address(v);
  if (!t.IsArray()) {
    b_.CreateStore(init, addr);
    return;
  }
  if (t.Element().IsBool()) init = b_.CreateZExt(init, StorageTy(t));
  llvm::Type* elem = StorageTy(t);
  Loop(b_.getInt64(0), b_.getInt64(t.count), "fill",
       [&](llvm::Value* i) { b_.CreateStore(init, b_.CreateInBoundsGEP(elem, addr, i)); });
}

void FunctionLowering::StoreStmt(const sem::Store& n) {
  const Type& c = n.base->type;
  llvm::Value* value = E(n.value);
  llvm::Value* addr = ElementAddress(n.base, n.index);
  if (c.Element().IsBool()) {
    value = b_.CreateZExt(value, WithLanes(b_.getInt8Ty(), n.value->type.width));
  }
  if (n.mask) {  // llvm.masked.store
    b_.CreateMaskedStore(value, addr, llvm::Align(ScalarBytes(c)), E(n.mask));
    return;
  }
  if (!n.streaming) {
    b_.CreateAlignedStore(value, addr, llvm::Align(ScalarBytes(c)));
    return;
  }
  // Non-temporal: aligned to the whole value (Store's promise), so the
  // backend can use streaming stores (vmovntps).
  uint64_t bytes = ScalarBytes(c) * static_cast<uint64_t>(n.value->type.width);
  llvm::StoreInst* store = b_.CreateAlignedStore(value, addr, llvm::Align(bytes));
  llvm::MDNode* one = llvm::MDNode::get(
      b_.getContext(), llvm::ConstantAsMetadata::get(b_.getInt32(1)));
  store->setMetadata(llvm::LLVMContext::MD_nontemporal, one);
}

void FunctionLowering::IfStmt(const sem::If& n, bool uniform) {
  if (uniform) ItemZeroContext();
  llvm::Value* c = Truth(n.cond);
  auto* then_block = llvm::BasicBlock::Create(ctx_, "if.then", fn_);
  auto* else_block = n.else_body ? llvm::BasicBlock::Create(ctx_, "if.else", fn_) : nullptr;
  auto* join = llvm::BasicBlock::Create(ctx_, "if.end", fn_);
  b_.CreateCondBr(c, then_block, else_block ? else_block : join);
  b_.SetInsertPoint(then_block);
  Body(n.then_body, uniform);
  b_.CreateBr(join);
  if (else_block) {
    b_.SetInsertPoint(else_block);
    Body(n.else_body, uniform);
    b_.CreateBr(join);
  }
  b_.SetInsertPoint(join);
}

void FunctionLowering::ForStmt(const sem::For& n, bool uniform) {
  if (uniform) ItemZeroContext();
  // begin, end and step are evaluated once; the body changes neither.
  llvm::Value* begin = E(n.begin);
  llvm::Value* end = E(n.end);
  llvm::Value* step = E(n.step);
  scopes_.emplace_back();
  const Var& var = Declare(n.var, n.begin->type, false);
  llvm::Value* addr = var.addr;
  b_.CreateStore(begin, addr);
  auto* body = llvm::BasicBlock::Create(ctx_, "for.body", fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, "for.end", fn_);
  b_.CreateCondBr(b_.CreateICmpSLT(begin, end), body, exit);
  b_.SetInsertPoint(body);
  Body(n.body, uniform);
  // v += step cannot wrap: stepping past the end of a signed range is undefined.
  llvm::Value* next = b_.CreateAdd(b_.CreateLoad(var.ty, addr), step, n.var + ".next", false, true);
  b_.CreateStore(next, addr);
  llvm::BranchInst* back = b_.CreateCondBr(b_.CreateICmpSLT(next, end), body, exit);
  if (!n.unroll) {  // !{!self, !{!"llvm.loop.unroll.disable"}}
    llvm::MDNode* disable = llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")});
    llvm::TempMDTuple placeholder = llvm::MDNode::getTemporary(ctx_, {});
    llvm::MDNode* loop = llvm::MDNode::get(ctx_, {placeholder.get(), disable});
    loop->replaceOperandWith(0, loop);
    back->setMetadata(llvm::LLVMContext::MD_loop, loop);
  }
  b_.SetInsertPoint(exit);
  scopes_.pop_back();
}

void FunctionLowering::WhileStmt(const sem::While& n, bool uniform) {
  auto* head = llvm::BasicBlock::Create(ctx_, "while.cond", fn_);
  auto* body = llvm::BasicBlock::Create(ctx_, "while.body", fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, "while.end", fn_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  if (uniform) ItemZeroContext();
  b_.CreateCondBr(Truth(n.cond), body, exit);
  b_.SetInsertPoint(body);
  Body(n.body, uniform);
  b_.CreateBr(head);
  b_.SetInsertPoint(exit);
}

void FunctionLowering::ReturnStmt(const sem::Return& n) {
  if (!f_.is_kernel) {
    if (n.value) {
      b_.CreateRet(E(n.value));
    } else {
      b_.CreateRetVoid();
    }
  } else {
    // The work item ends; in the barrier form it also skips the later regions.
    if (done_) b_.CreateStore(b_.getInt8(1), b_.CreateInBoundsGEP(b_.getInt8Ty(), done_, item_));
    b_.CreateBr(item_end_);
  }
  StartDeadBlock();
}

// --- Loops and work items ------------------------------------------------------------

void FunctionLowering::Loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
                            const std::function<void(llvm::Value*)>& body) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(ctx_, name, fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, name + ".end", fn_);
  b_.CreateCondBr(b_.CreateICmpSLT(begin, end), loop, exit);
  b_.SetInsertPoint(loop);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, name + ".i");
  i->addIncoming(begin, pre);
  body(i);
  llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1), name + ".next", true, true);
  i->addIncoming(next, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpSLT(next, end), loop, exit);
  b_.SetInsertPoint(exit);
}

void FunctionLowering::ItemZeroContext() {
  for (int d = 0; d < 3; ++d) local_id_[d] = b_.getInt64(0);
  item_ = b_.getInt64(0);
}

void FunctionLowering::ForAllItems(const std::vector<Stmt>& stmts, bool per_item_decls) {
  bool any = false;
  for (const Stmt& s : stmts) any |= s->kind != NodeKind::Comment;
  if (!any) return;
  auto run = [&] {
    item_ = b_.CreateAdd(
        b_.CreateMul(
            b_.CreateAdd(b_.CreateMul(local_id_[2], b_.getInt64(local_[1]), "", true, true),
                         local_id_[1], "", true, true),
            b_.getInt64(local_[0]), "", true, true),
        local_id_[0], "item", true, true);
    llvm::BasicBlock* saved_end = item_end_;
    item_end_ = llvm::BasicBlock::Create(ctx_, "item.end", fn_);
    if (done_) {
      auto* live = llvm::BasicBlock::Create(ctx_, "item", fn_);
      llvm::Value* flag =
          b_.CreateLoad(b_.getInt8Ty(), b_.CreateInBoundsGEP(b_.getInt8Ty(), done_, item_));
      b_.CreateCondBr(b_.CreateICmpNE(flag, b_.getInt8(0)), item_end_, live);
      b_.SetInsertPoint(live);
    }
    for (const Stmt& s : stmts) {
      if (auto* d = As<sem::Declare>(s)) {
        DeclareStmt(*d, per_item_decls);
      } else {
        S(s);
      }
    }
    b_.CreateBr(item_end_);
    b_.SetInsertPoint(item_end_);
    item_end_ = saved_end;
  };
  // Nested loops over the local ids, dim 0 innermost; a size-1 dim is no loop.
  std::function<void(int)> nest = [&](int d) {
    if (d < 0) return run();
    if (local_[d] == 1) {
      local_id_[d] = b_.getInt64(0);
      return nest(d - 1);
    }
    Loop(b_.getInt64(0), b_.getInt64(local_[d]), fmt::format("lid{}", d), [&](llvm::Value* i) {
      local_id_[d] = i;
      nest(d - 1);
    });
  };
  nest(2);
  ItemZeroContext();
}

// --- The barrier form -------------------------------------------------------------------

bool FunctionLowering::HasBarrier(const Stmt& s) {
  if (!s) return false;
  if (auto it = has_barrier_.find(s.get()); it != has_barrier_.end()) return it->second;
  bool found = false;
  switch (s->kind) {
    case NodeKind::Barrier: found = true; break;
    case NodeKind::Block:
      for (const Stmt& x : static_cast<const Block&>(*s).stmts) found = found || HasBarrier(x);
      break;
    case NodeKind::If: {
      auto& n = static_cast<const If&>(*s);
      found = HasBarrier(n.then_body) || HasBarrier(n.else_body);
      break;
    }
    case NodeKind::For: found = HasBarrier(static_cast<const For&>(*s).body); break;
    case NodeKind::While: found = HasBarrier(static_cast<const While&>(*s).body); break;
    default: break;
  }
  has_barrier_[s.get()] = found;
  return found;
}

void FunctionLowering::UniformStmts(const std::vector<Stmt>& stmts) {
  std::vector<Stmt> run;
  for (const Stmt& s : stmts) {
    if (!HasBarrier(s)) {
      run.push_back(s);
      continue;
    }
    ForAllItems(run, true);
    run.clear();
    Uniform(s);
  }
  ForAllItems(run, true);
}

void FunctionLowering::Uniform(const Stmt& s) {
  if (!HasBarrier(s)) return ForAllItems({s}, true);
  switch (s->kind) {
    case NodeKind::Barrier: return;  // the end of one region, the start of the next
    case NodeKind::Block: return Body(s, true);
    case NodeKind::If: return IfStmt(static_cast<const If&>(*s), true);
    case NodeKind::For: return ForStmt(static_cast<const For&>(*s), true);
    case NodeKind::While: return WhileStmt(static_cast<const While&>(*s), true);
    default: TILEC_UNREACHABLE("statement kind {} with a barrier", Name(s->kind));
  }
}

// --- Functions ----------------------------------------------------------------------------

void FunctionLowering::EmitKernel() {
  barrier_form_ = group_size_ > 1 && HasBarrier(f_.body);
  std::vector<llvm::Type*> params;
  for (const Param& p : f_.params) params.push_back(VarTy(p.type));
  for (int i = 0; i < 5; ++i) params.push_back(b_.getInt64Ty());  // first, last, ng0..2
  fn_ = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                               llvm::Function::InternalLinkage, f_.name, module_);
  TILEC_CHECK(fn_->getName() == f_.name, "llvm: function name '{}' is used twice", f_.name);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  for (size_t i = 0; i < f_.params.size(); ++i) {
    fn_->getArg(static_cast<unsigned>(i))->setName(f_.params[i].name);
    if (f_.params[i].noalias) fn_->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
  }
  size_t np = f_.params.size();
  llvm::Value* first = fn_->getArg(static_cast<unsigned>(np));
  llvm::Value* last = fn_->getArg(static_cast<unsigned>(np + 1));
  for (int d = 0; d < 3; ++d) {
    num_groups_[d] = fn_->getArg(static_cast<unsigned>(np + 2 + d));
    num_groups_[d]->setName(fmt::format("num_groups{}", d));
  }
  first->setName("first_group");
  last->setName("last_group");

  alloca_block_ = llvm::BasicBlock::Create(ctx_, "allocas", fn_);
  auto* start = llvm::BasicBlock::Create(ctx_, "start", fn_);
  b_.SetInsertPoint(start);
  scopes_.emplace_back();
  for (size_t i = 0; i < np; ++i) {
    const Var& v = Declare(f_.params[i].name, f_.params[i].type, false);
    b_.CreateStore(fn_->getArg(static_cast<unsigned>(i)), v.addr);
  }
  if (barrier_form_) {
    bool has_return = false;
    struct Finder : Visitor {
      bool& found;
      explicit Finder(bool& f) : found(f) {}
      void VisitReturn(const Return&) override { found = true; }
    } finder(has_return);
    finder.Visit(f_.body);
    if (has_return)
      done_ = EntryAlloca(llvm::ArrayType::get(b_.getInt8Ty(), static_cast<uint64_t>(group_size_)),
                          "done");
  }
  ItemZeroContext();
  // Linear group id -> (g0, g1, g2), dim 0 fastest: divided once for the
  // first group, then counted (a division per group cost an elementwise
  // kernel of 64 floats per group a tenth of its time).
  llvm::AllocaInst* ids[3];
  {
    llvm::Value* rest = b_.CreateUDiv(first, num_groups_[0]);
    llvm::Value* start_ids[3] = {b_.CreateURem(first, num_groups_[0]), b_.CreateURem(rest, num_groups_[1]),
                                 b_.CreateUDiv(rest, num_groups_[1])};
    for (int d = 0; d < 3; ++d) {
      ids[d] = EntryAlloca(b_.getInt64Ty(), fmt::format("g{}.slot", d));
      b_.CreateStore(start_ids[d], ids[d]);
    }
  }
  Loop(first, last, "group", [&](llvm::Value*) {
    for (int d = 0; d < 3; ++d) group_id_[d] = b_.CreateLoad(b_.getInt64Ty(), ids[d], fmt::format("g{}", d));
    llvm::Value* g[3] = {group_id_[0], group_id_[1], group_id_[2]};
    if (barrier_form_) {
      if (done_)
        b_.CreateMemSet(done_, b_.getInt8(0), static_cast<uint64_t>(group_size_),
                        llvm::MaybeAlign(1));
      UniformStmts(StmtsOf(f_.body));
    } else {
      ForAllItems(StmtsOf(f_.body), false);
    }
    llvm::Value* carry = b_.getTrue();
    for (int d = 0; d < 3; ++d) {
      llvm::Value* next = b_.CreateAdd(g[d], b_.CreateZExt(carry, b_.getInt64Ty()));
      if (d < 2) {
        llvm::Value* wrap = b_.CreateICmpEQ(next, num_groups_[d]);
        next = b_.CreateSelect(wrap, b_.getInt64(0), next);
        carry = wrap;
      }
      b_.CreateStore(next, ids[d]);
    }
  });
  b_.CreateRetVoid();
  scopes_.pop_back();
  b_.SetInsertPoint(alloca_block_);
  b_.CreateBr(start);
  EmitGroupsEntry(fn_);
}

// void @K_groups(ptr args, i64 first, i64 last): unpacks args and calls @K.
void FunctionLowering::EmitGroupsEntry(llvm::Function* kernel) {
  llvm::Type* ptr = b_.getPtrTy();
  auto* fn = llvm::Function::Create(
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, b_.getInt64Ty(), b_.getInt64Ty()}, false),
      llvm::Function::ExternalLinkage, GroupFunctionName(f_.name), module_);
  TILEC_CHECK(fn->getName() == GroupFunctionName(f_.name), "llvm: function name '{}' is used twice",
              GroupFunctionName(f_.name));
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value* args = fn->getArg(0);
  args->setName("args");
  fn->getArg(1)->setName("first_group");
  fn->getArg(2)->setName("last_group");
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  auto arg = [&](size_t i) {
    return b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, args, i), fmt::format("arg{}", i));
  };
  std::vector<llvm::Value*> call_args;
  for (size_t i = 0; i < f_.params.size(); ++i) {
    const Type& t = f_.params[i].type;
    llvm::Value* a = arg(i);
    if (t.IsValue()) {
      llvm::Type* stored = t.IsBool() ? WithLanes(b_.getInt8Ty(), t.width) : ValueTy(t);
      a = b_.CreateAlignedLoad(stored, a, llvm::Align(ScalarBytes(t)));
      if (t.IsBool()) a = b_.CreateICmpNE(a, llvm::Constant::getNullValue(stored));
    }
    call_args.push_back(a);
  }
  call_args.push_back(fn->getArg(1));
  call_args.push_back(fn->getArg(2));
  llvm::Value* groups = arg(f_.params.size());
  for (uint64_t d = 0; d < 3; ++d)
    call_args.push_back(
        b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), groups, d)));
  b_.CreateCall(kernel, call_args);
  b_.CreateRetVoid();
}

void FunctionLowering::EmitHelper() {
  std::vector<llvm::Type*> params;
  for (const Param& p : f_.params) params.push_back(VarTy(p.type));
  llvm::Type* ret = f_.return_type.IsVoid() ? b_.getVoidTy() : ValueTy(f_.return_type);
  fn_ = llvm::Function::Create(llvm::FunctionType::get(ret, params, false),
                               llvm::Function::InternalLinkage, f_.name, module_);
  TILEC_CHECK(fn_->getName() == f_.name, "llvm: function name '{}' is used twice", f_.name);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  alloca_block_ = llvm::BasicBlock::Create(ctx_, "allocas", fn_);
  auto* start = llvm::BasicBlock::Create(ctx_, "start", fn_);
  b_.SetInsertPoint(start);
  scopes_.emplace_back();
  for (size_t i = 0; i < f_.params.size(); ++i) {
    fn_->getArg(static_cast<unsigned>(i))->setName(f_.params[i].name);
    if (f_.params[i].noalias) fn_->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
    const Var& v = Declare(f_.params[i].name, f_.params[i].type, false);
    b_.CreateStore(fn_->getArg(static_cast<unsigned>(i)), v.addr);
  }
  for (const Stmt& s : StmtsOf(f_.body)) S(s);
  // Falling off the end of a value function: C leaves the value undefined.
  if (ret->isVoidTy()) {
    b_.CreateRetVoid();
  } else {
    b_.CreateRet(llvm::Constant::getNullValue(ret));
  }
  scopes_.pop_back();
  b_.SetInsertPoint(alloca_block_);
  b_.CreateBr(start);
}

}  // namespace tilec::hal::cpu
