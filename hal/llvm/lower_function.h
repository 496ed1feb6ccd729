// Internal to hal/llvm: the lowering of one sem Function to LLVM IR (see
// emit_llvm.h for the execution model and the value mapping). Expressions are
// in lower_expr.cc; statements, the group and work-item loops and the
// splitting of kernels at barriers in lower_stmt.cc.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <array>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/sem/ir.h"
#include "hal/llvm/inline_math.h"
#include "hal/llvm/vector_math.h"

namespace tilec::hal::cpu {

// `t`, or a vector of `width` lanes of it.
inline llvm::Type* WithLanes(llvm::Type* t, int width) {
  return width == 1 ? t : llvm::FixedVectorType::get(t, static_cast<unsigned>(width));
}

class FunctionLowering {
 public:
  // `local` is the work-group size of a kernel (ignored for helpers); math
  // builtins on vectors call the libmvec variants `vector_isa` runs; `fma`:
  // the CPU has FMA instructions, so the inline math may be used
  // (EmitOptions::fma).
  FunctionLowering(llvm::Module& module, const sem::Function& f, std::array<int64_t, 3> local,
                   VectorIsa vector_isa, bool fma = true);

  // Emits @name (and @name_groups for a kernel) into the module.
  void Emit();

 private:
  // A declared name: a parameter, variable, loop variable or array.
  struct Var {
    sem::Type type;
    llvm::Value* addr = nullptr;  // alloca (per-item: of [group size x ty])
    llvm::Type* ty = nullptr;     // the type of one copy
    bool per_item = false;        // one copy per work item (barrier form)
  };

  // --- Types (lower_expr.cc) ---
  llvm::Type* IndexTy();
  llvm::Type* ScalarTy(sem::DataType dtype, bool storage);
  llvm::Type* ValueTy(const sem::Type& t);         // a value (bool: i1)
  llvm::Type* StorageTy(const sem::Type& c);       // one element of a pointer/array (bool: i8)
  llvm::Type* VarTy(const sem::Type& t);           // a variable of any kind
  uint64_t ScalarBytes(const sem::Type& t) const;  // bytes of one lane of a value/element

  // --- Expressions (lower_expr.cc) ---
  llvm::Value* E(const sem::Expr& e);
  llvm::Value* Truth(const sem::Expr& e);  // a scalar condition as i1
  llvm::Value* IntConstant(int64_t v, const sem::Type& t);
  llvm::Value* Limit(const sem::LimitConst& n);
  llvm::Value* ElementAddress(const sem::Expr& base, const sem::Expr& index);
  llvm::Value* LoadValue(const sem::Load& n);
  llvm::Value* BinaryValue(const sem::Binary& n);
  llvm::Value* Arith(sem::BinaryOp op, const sem::Type& t, llvm::Value* a, llvm::Value* b);
  llvm::Value* Compare(sem::BinaryOp op, const sem::Type& t, llvm::Value* a, llvm::Value* b);
  llvm::Value* Lazy(const sem::Expr& cond, bool when, const std::function<llvm::Value*()>& taken,
                    llvm::Value* otherwise);
  llvm::Value* CondValue(const sem::Cond& n);
  llvm::Value* CastValue(llvm::Value* v, const sem::Type& from, const sem::Type& to);
  llvm::Value* UnsignedToFloat(llvm::Value* v, llvm::Type* dst);  // see lower_expr.cc
  llvm::Value* CallValue(const sem::Call& n);
  // A library builtin (vector_math.h: exp, tanh, …), in float for half;
  // `node`: the call, when it may be one of a versioned run's.
  llvm::Value* MathCall(sem::CallFn fn, const sem::Type& t, std::vector<llvm::Value*> args,
                        const sem::Call* node = nullptr);
  // Each call's fast path (float lanes) and the lanes it holds for.
  std::vector<FastMath> FastMathCalls(sem::CallFn fn, const sem::Type& t,
                                      const std::vector<std::vector<llvm::Value*>>& calls);
  llvm::Value* ScalarMathCall(sem::CallFn fn, llvm::Type* ty,
                              const std::vector<llvm::Value*>& args);
  llvm::Value* VectorMathCall(const std::vector<VectorFunction>& variants, int width,
                              const std::vector<llvm::Value*>& args);
  llvm::Value* ThreadIndexValue(const sem::ThreadIndex& n);
  llvm::Value* ToI64(llvm::Value* v, const sem::Type& t);  // a subscript, sign per type

  // --- Names (lower_stmt.cc) ---
  const Var& Lookup(const std::string& name) const;
  llvm::Value* Address(const Var& v);  // this work item's copy
  Var& Declare(const std::string& name, const sem::Type& type, bool per_item);
  llvm::AllocaInst* EntryAlloca(llvm::Type* ty, const std::string& name);

  // --- Statements (lower_stmt.cc) ---
  void S(const sem::Stmt& s);
  void Scoped(const sem::Stmt& s);
  // A statement list; a run of declarations with two or more exp/log/pow
  // calls is lowered by VersionedDeclares.
  void Stmts(const std::vector<sem::Stmt>& stmts);
  void VersionedDeclares(const std::vector<sem::Stmt>& stmts, size_t begin, size_t end);
  void DeclareStmt(const sem::Declare& n, bool per_item);
  void StoreStmt(const sem::Store& n);
  void IfStmt(const sem::If& n, bool uniform);
  void ForStmt(const sem::For& n, bool uniform);
  void WhileStmt(const sem::While& n, bool uniform);
  void ReturnStmt(const sem::Return& n);
  void Body(const sem::Stmt& s, bool uniform);  // a nested body in its own scope
  void StartDeadBlock();                        // after a terminator

  // --- Kernels (lower_stmt.cc) ---
  void EmitKernel();
  void EmitHelper();
  void EmitGroupsEntry(llvm::Function* kernel);
  // Whether pow on `lanes` f32 lanes may look up 32-entry tables by AVX-512's
  // vpermi2ps: whole 16-lane vectors (inline_math.h, InlinePow).
  bool Avx512Tables(int lanes) const { return vector_isa_ == VectorIsa::Avx512 && lanes % 16 == 0; }
  // Whether inline math on `lanes` may look up 16-entry tables by AVX-512's
  // vpermps (erf, log: inline_math.h): one whole zmm register.
  bool Avx512Table(int lanes) const { return vector_isa_ == VectorIsa::Avx512 && lanes == 16; }
  // for (i = begin; i < end; ++i) body(i), i64, rotated; nothing if begin >= end.
  void Loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
            const std::function<void(llvm::Value*)>& body);
  // Runs `stmts` for every work item of the group in turn.
  void ForAllItems(const std::vector<sem::Stmt>& stmts, bool per_item_decls);
  void ItemZeroContext();  // uniform code sees work item 0
  // Barrier form: statements executed once per group, split at barriers.
  void Uniform(const sem::Stmt& s);
  void UniformStmts(const std::vector<sem::Stmt>& stmts);
  bool HasBarrier(const sem::Stmt& s);

  llvm::LLVMContext& ctx_;
  llvm::Module& module_;
  const sem::Function& f_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* alloca_block_ = nullptr;

  std::array<int64_t, 3> local_;
  VectorIsa vector_isa_;
  bool fma_ = true;
  int64_t group_size_ = 1;
  bool barrier_form_ = false;

  // The current work item, as i64 values.
  std::array<llvm::Value*, 3> group_id_{}, local_id_{}, num_groups_{};
  llvm::Value* item_ = nullptr;           // linear local id
  llvm::BasicBlock* item_end_ = nullptr;  // where a kernel's Return goes
  llvm::Value* done_ = nullptr;           // barrier form: [group size x i8] returned flags

  std::vector<std::map<std::string, Var>> scopes_;
  // While VersionedDeclares lowers a run's fast version: MathCall takes the
  // fast paths and appends here whether some lane is outside (an i1).
  std::vector<llvm::Value*>* fast_checks_ = nullptr;
  // The fast paths of the run's calls, for its exact version: a call whose
  // own lanes all hold takes its fast value, so nothing of the fast path is
  // recomputed there (LLVM's machine CSE had merged the two and kept every
  // intermediate of the fast path live, spilled, across the test).
  std::map<const sem::Call*, FastMath> fast_results_;
  std::unordered_map<const sem::StmtNode*, bool> has_barrier_;
};

}  // namespace tilec::hal::cpu
