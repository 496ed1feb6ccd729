// The Form interface: one kernel form (docs/architecture.md, "Kernel forms")
// as the compiler sees it, and the registry that lists the forms per device
// class in the order they are tried.
//
// A form plans a kernel, then emits it:
//
//   std::optional<FormPlan> plan = form.Plan(spec, program, hw, options);
//   if (plan) GeneratedKernel k = form.Emit(*plan);
//
// Plan returns nullopt when the kernel does not fit the form; the next form
// of the list is tried then (FormsFor). A FormPlan is data: the form, the
// choices it made as named integers (the flat form's tile and work group,
// the vector form's rows and vectors per work item) and its printed text;
// Print shows it and HashPlan hashes it. The kernel signature
// (ir/kernel_signature.h) does not include the plan: it keys the
// configuration the plan is made from (the comment there says why).
//
// Plan decides and Emit builds; Plan builds no part of the kernel:
//   * flat, special: Plan only records the choices (the tile search and the
//     work group are made before, in the pipeline); Emit runs the generator.
//   * vector, reduce, transpose, row group: Plan runs the planning half of
//     the form's generator, whose decisions (the form's own FormState: the
//     vector form's VecPlan, ReducePlan, TransposePlan, RowGroupPlan) the
//     plan keeps in `state` beside the choices and the printed plan; Emit
//     runs the emitting half (VecEmitter, ReduceEmitter, ...) on a copy of
//     that state, so a plan can be emitted more than once.
//
// Adding a form: a file in forms/ that defines a FormImpl, and one line in
// FormsFor (forms/forms.cc) at the place in the order where it is tried.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/kernel.h"
#include "compiler/schedule/hardware_model.h"
#include "compiler/schedule/read_plan.h"
#include "compiler/schedule/thread_plan.h"
#include "compiler/sem/ir.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

struct CodegenOptions {
  // Stage input tiles in local memory (the GPU form). Off: threads read
  // global memory directly and rely on caches (the CPU form).
  bool use_local = true;
  // Without local staging, emit the vector form where a kernel fits it.
  bool vectorize = true;
  // Vector form: rows of the register block along p (0: from the registers).
  int64_t vector_rows = 0;
  // Flat form: the work-group shape, threads along each flat index
  // (PlanThreads; empty: AssignOutputThreads). The other forms ignore it.
  std::vector<int64_t> work_group;
  // Flat form: the tile, one size per flat index (the tile search's, or
  // forced). GenerateKernel sets it from its `tile`; the other forms ignore it.
  std::vector<int64_t> tile;
};

// The form a kernel was generated in (docs/architecture.md, "Kernel forms").
enum class Form : uint8_t { Flat, Vector, Reduce, Transpose, RowGroup, Special };
const char* Name(Form form);  // "flat", "vector", "reduce", "transpose", "row group", "special"

struct GeneratedKernel {
  Form form = Form::Flat;
  sem::Function function;
  std::array<int64_t, 3> global = {1, 1, 1};  // work items per dimension
  std::array<int64_t, 3> local = {1, 1, 1};   // work-group size
  ThreadPlan threads;                          // flat kernels only
  std::vector<ReadPlan> reads;                 // staged inputs only
  std::string plan_text;                       // the CPU forms and row groups: their plan, printed
};

// What a form's Plan decided beyond `params`, for its Emit: each form that
// needs more derives its own (immutable once planned) and downcasts it
// (StateOf, forms/common.h). It may refer to the plan's spec, program and
// hardware model, which outlive it as FormPlan says.
struct FormState {
  virtual ~FormState() = default;
};

// One form's plan for one kernel.
struct FormPlan {
  Form form = Form::Flat;
  // The form's choices, named, in the order the form prints them: the flat
  // form's "tile.<index>" and "group.<index>", the vector form's "rows" and
  // "vectors"; the other forms' choices are printed in `text` only (and
  // kept for Emit in `state`).
  std::vector<std::pair<std::string, int64_t>> params;
  std::string text;  // the form's own account of the plan (GeneratedKernel::plan_text); may be empty
  // What was planned, for Emit: the caller keeps these alive until then.
  const KernelSpec* spec = nullptr;
  const lang::Program* program = nullptr;
  const HardwareModel* hw = nullptr;
  CodegenOptions options;
  // The form's own decisions, for Emit (null for the flat and special
  // forms, whose `params` and `options` say all).
  std::shared_ptr<const FormState> state;
};

// "form vector\nrows 4\nvectors 2\n" then the text: the plan's data, the
// same for the same plan.
std::string ToString(const FormPlan& plan);
// 16 lower-case hex digits of FNV-1a 64 over ToString(plan).
std::string HashPlan(const FormPlan& plan);

class FormImpl {
 public:
  virtual ~FormImpl() = default;
  virtual const char* name() const { return Name(id()); }
  virtual Form id() const = 0;
  // nullopt: `spec` does not fit this form.
  virtual std::optional<FormPlan> Plan(const KernelSpec& spec, const lang::Program& program,
                                       const HardwareModel& hw, const CodegenOptions& options) const = 0;
  // Pre: `plan` came from this form's Plan and what it points to lives.
  // Post: a kernel whose function passes sem::Verify and whose `form` is id().
  virtual GeneratedKernel Emit(const FormPlan& plan) const = 0;
  virtual std::string Print(const FormPlan& plan) const { return ToString(plan); }
};

// The forms tried, in order, for a kernel of `kind` on a device `options`
// describes: CPU forms (no local staging, `vectorize`) vector, reduce,
// transpose, flat; with local staging (GPUs) or without `vectorize`: flat;
// Special and Direct: special; RowGroup: row group.
const std::vector<const FormImpl*>& FormsFor(KernelKind kind, const CodegenOptions& options);

// The forms, one per file of forms/ (registered in FormsFor).
const FormImpl& FlatForm();
const FormImpl& VectorForm();
const FormImpl& ReduceForm();
const FormImpl& TransposeForm();
const FormImpl& RowGroupForm();
const FormImpl& SpecialForm();

}  // namespace tilec::compiler
