// The Form interface and its registry (compiler/forms/form.h): the order in
// which each device class tries the forms, each form's Plan turning away a
// kernel it does not fit, and a plan's printed text and hash.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "compiler/forms/forms.h"
#include "compiler/passes/lower.h"
#include "hal/llvm/cpu_info.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"

namespace tilec::compiler {
namespace {

lang::Shape F32(std::vector<int64_t> dims) { return {lang::DataType::F32, std::move(dims)}; }

CodegenOptions Cpu() {
  CodegenOptions o;
  o.use_local = false;
  o.vectorize = true;
  return o;
}

std::vector<std::string> Names(const std::vector<const FormImpl*>& forms) {
  std::vector<std::string> names;
  for (const FormImpl* f : forms) names.push_back(f->name());
  return names;
}

// A program and its first kernel, kept together (a plan points at both).
struct Lowered {
  lang::Program program;
  KernelPlan plan;
  const KernelSpec& kernel() const { return plan.kernels.at(0); }
};

Lowered LowerOne(const std::string& source, const std::map<std::string, lang::Shape>& shapes) {
  Lowered l{lang::Bind(lang::Parse(MakeSource("t.tile", source)), shapes, {}), {}};
  l.plan = Lower(l.program, {});
  return l;
}

HardwareModel Avx512() { return hal::cpu::CpuHardwareModel(hal::cpu::NamedCpu("x86-64-v4")); }

const char* kRowSum = "function (A[N, M]) -> (R) { R[n : N] = +(A[n, m]); }\n";
const char* kTranspose = "function (A[N, M]) -> (B) { B[m, n : M, N] = =(A[n, m]); }\n";
const char* kScale = "function (A[N, M]) -> (B) { B = A * 2; }\n";

TEST(FormRegistry, OneOrderedListPerDeviceClass) {
  using V = std::vector<std::string>;
  for (KernelKind kind : {KernelKind::Contraction, KernelKind::Elementwise, KernelKind::Fill}) {
    EXPECT_EQ(Names(FormsFor(kind, Cpu())), (V{"vector", "reduce", "transpose", "flat"}));
    CodegenOptions gpu = Cpu();
    gpu.use_local = true;
    EXPECT_EQ(Names(FormsFor(kind, gpu)), V{"flat"});
    CodegenOptions scalar = Cpu();
    scalar.vectorize = false;
    EXPECT_EQ(Names(FormsFor(kind, scalar)), V{"flat"});
  }
  EXPECT_EQ(Names(FormsFor(KernelKind::Special, Cpu())), V{"special"});
  EXPECT_EQ(Names(FormsFor(KernelKind::Direct, Cpu())), V{"special"});
  EXPECT_EQ(Names(FormsFor(KernelKind::RowGroup, Cpu())), V{"row group"});
  for (const FormImpl* f : {&FlatForm(), &VectorForm(), &ReduceForm(), &TransposeForm(), &RowGroupForm(),
                            &SpecialForm()})
    EXPECT_EQ(std::string(f->name()), Name(f->id()));
}

// Each kernel fits exactly the forms the table in docs/architecture.md
// ("Kernel forms") gives it, and GenerateCpuForm takes the first of them.
TEST(FormRegistry, EachFormPlansOnlyWhatFitsIt) {
  HardwareModel hw = Avx512();
  struct Case {
    const char* source;
    Form expected;
  };
  for (Case c : {Case{kScale, Form::Vector}, Case{kRowSum, Form::Reduce}, Case{kTranspose, Form::Transpose}}) {
    Lowered l = LowerOne(c.source, {{"A", F32({64, 96})}});
    const KernelSpec& k = l.kernel();
    ASSERT_TRUE(IsFlatKind(k.kind)) << c.source;
    std::vector<Form> fits;
    for (const FormImpl* f : FormsFor(k.kind, Cpu()))
      if (std::optional<FormPlan> p = f->Plan(k, l.program, hw, Cpu())) {
        EXPECT_EQ(p->form, f->id());
        fits.push_back(f->id());
      }
    EXPECT_EQ(fits.at(0), c.expected) << c.source;
    EXPECT_EQ(fits.back(), Form::Flat) << c.source;  // the flat form takes every flat kernel
    EXPECT_FALSE(SpecialForm().Plan(k, l.program, hw, Cpu())) << c.source;
    EXPECT_FALSE(RowGroupForm().Plan(k, l.program, hw, Cpu())) << c.source;
    std::optional<GeneratedKernel> g = GenerateCpuForm(k, l.program, hw, Cpu());
    ASSERT_TRUE(g) << c.source;
    EXPECT_EQ(g->form, c.expected);
  }
  // A row sum moves no output index by 1: not the vector form; not a copy:
  // not the transpose form.
  Lowered sum = LowerOne(kRowSum, {{"A", F32({64, 96})}});
  EXPECT_FALSE(VectorForm().Plan(sum.kernel(), sum.program, hw, Cpu()));
  EXPECT_FALSE(TransposeForm().Plan(sum.kernel(), sum.program, hw, Cpu()));
}

TEST(FormRegistry, PlansPrintTheirChoicesAndHashThem) {
  HardwareModel hw = Avx512();
  Lowered scale = LowerOne(kScale, {{"A", F32({64, 96})}});
  std::optional<FormPlan> vec = VectorForm().Plan(scale.kernel(), scale.program, hw, Cpu());
  ASSERT_TRUE(vec);
  std::string text = VectorForm().Print(*vec);
  EXPECT_EQ(text.rfind("form vector\nvectors ", 0), 0u) << text;
  EXPECT_NE(text.find("\nrows "), std::string::npos) << text;
  EXPECT_NE(text.find("Vector form: "), std::string::npos) << text;
  // Emit gives the kernel the plan describes.
  GeneratedKernel g = VectorForm().Emit(*vec);
  EXPECT_EQ(g.form, Form::Vector);
  EXPECT_EQ(g.plan_text, vec->text);

  // The flat form's plan is the tile and work group it was given.
  CodegenOptions flat = Cpu();
  flat.tile = std::vector<int64_t>(scale.kernel().flat.num_indices(), 1);
  std::optional<FormPlan> a = FlatForm().Plan(scale.kernel(), scale.program, hw, flat);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->params.size(), flat.tile.size());
  EXPECT_EQ(FlatForm().Print(*a).rfind("form flat\ntile ", 0), 0u) << FlatForm().Print(*a);
  flat.tile.back() = 2;
  std::optional<FormPlan> b = FlatForm().Plan(scale.kernel(), scale.program, hw, flat);
  ASSERT_TRUE(b);
  EXPECT_EQ(HashPlan(*a).size(), 16u);
  EXPECT_EQ(HashPlan(*a), HashPlan(*FlatForm().Plan(scale.kernel(), scale.program, hw, a->options)));
  EXPECT_NE(HashPlan(*a), HashPlan(*b));
  EXPECT_EQ(FlatForm().Emit(*b).form, Form::Flat);
}

}  // namespace
}  // namespace tilec::compiler
