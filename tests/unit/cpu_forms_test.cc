// Execution tests of the CPU forms for reductions along a contiguous axis
// (compiler/forms/reduce.cc) and for transposes (compiler/forms/transpose.cc),
// on the llvm device and on OpenCL (PoCL): each case asserts the form the
// generator chose (its plan text) and compares the results with the
// reference evaluator on random inputs, with sizes no vector or tile
// divides (1, 7, 333, 1031), every aggregation, floats and integers.
#include <gtest/gtest.h>

#include <iostream>

#include "compiler/sem/printer.h"
#include "tests/unit/pipeline_cases.h"

namespace tilec {
namespace {

using testing::Case;
using testing::F32;
using testing::F64;
using testing::Of;

// The plans asserted here are those of an AVX-512 CPU (testing::kAvx512Cpu:
// 16 f32 lanes, 32 vector registers) unless a test says otherwise
// (cpu_ = testing::kAvx2Cpu: 8 lanes, 16 registers); the device plans for
// that CPU whatever the host is, and runs the kernels where the host can.
class CpuForms : public ::testing::TestWithParam<std::string> {
 protected:
  std::shared_ptr<hal::Device> Device() const { return testing::PinnedDevice(GetParam(), cpu_); }
  // Compiles `c` in the CPU form for the device, compares with the evaluator
  // and returns the plans of all kernels.
  std::string Check(const Case& c, const std::string& what) {
    auto device = Device();
    if (!device) return "";
    compiler::CompileOptions o;
    o.use_local = false;
    auto program = testing::CheckCase(device, c, o, fmt::format("{} on {} for {}", what, GetParam(), cpu_));
    return testing::VectorPlans(*program);
  }
  void SetUp() override {
    if (!testing::DeviceFor(GetParam())) GTEST_SKIP() << "no " << GetParam() << " device";
  }
  std::string cpu_ = testing::kAvx512Cpu;
};

const char* kAllAggregations = R"(function (X[N, M]) -> (S, P, MX, MN) {
  S[i : N] = +(X[i, j]);
  P[i : N] = *(X[i, j]);
  MX[i : N] = >(X[i, j]);
  MN[i : N] = <(X[i, j]);
})";

TEST_P(CpuForms, RowReductionsEveryAggregationAndType) {
  using lang::DataType;
  for (DataType t : {DataType::F32, DataType::F64, DataType::I32, DataType::I64, DataType::U8,
                     DataType::I16}) {
    for (int64_t m : {1, 7, 333, 1031}) {
      std::string name = fmt::format("{} x {}", lang::Name(t), m);
      std::string plans = Check({kAllAggregations, {{"X", Of(t, {3, m})}}}, name);
      if (m == 1) continue;  // a run of one value: whatever form, just right
      std::string type(sem::ScalarName(t));
      for (const char* agg : {"sum", "product", "max", "min"})
        EXPECT_NE(plans.find(fmt::format("Reduction form: {} of {} along j ({} values)", agg, type, m)),
                  std::string::npos)
            << name << "\n" << plans;
      if (m % 16 != 0) {
        EXPECT_NE(plans.find("masked tail"), std::string::npos) << plans;
      }
    }
  }
  // 1031 = 16 * 64 + 7: the loop of 4 accumulators, 0 whole vectors left, a tail.
  std::string plans = Check({kAllAggregations, {{"X", F32({2, 1031})}}}, "accumulators");
  EXPECT_NE(plans.find("4 accumulators x 16 lanes"), std::string::npos) << plans;
  // With AVX2: 1031 = 8 * 128 + 7, the same 4 accumulators of 8 lanes.
  cpu_ = testing::kAvx2Cpu;
  plans = Check({kAllAggregations, {{"X", F32({2, 1031})}}}, "accumulators");
  EXPECT_NE(plans.find("4 accumulators x 8 lanes"), std::string::npos) << plans;
}

TEST_P(CpuForms, GemvFullSumPoolingSoftmax) {
  const char* gemv = "function (A[M, K], X[K]) -> (Y) { Y[m : M] = +(A[m, k] * X[k]); }";
  for (auto shapes : {std::map<std::string, lang::Shape>{{"A", F32({7, 1031})}, {"X", F32({1031})}},
                      {{"A", F64({5, 333})}, {"X", F64({333})}}}) {
    std::string plans = Check({gemv, shapes}, "gemv");
    EXPECT_NE(plans.find("Inputs: A vector, X vector"), std::string::npos) << plans;
  }
  // No output index: one work item over one merged run of 333 * 7.
  std::string plans = Check({"function (X[N, M]) -> (Y) { Y[] = +(X[i, j]); }", {{"X", F32({333, 7})}}},
                            "full sum");
  EXPECT_NE(plans.find("along j*i (2331 values)"), std::string::npos) << plans;
  // Global average pooling of NCHW data: h and w merge, the mean a post-op.
  const char* pool = R"(function (I[N, C, H, W]) -> (O) {
  S[n, c : N, C] = +(I[n, c, h, w]);
  O = S / (H * W);
})";
  plans = Check({pool, {{"I", F32({2, 5, 7, 9})}}}, "global pooling");
  EXPECT_NE(plans.find("along w*h (63 values)"), std::string::npos) << plans;
  // A reduction with an outer loop (j) around the contiguous run (k).
  plans = Check({"function (X[J, I, K]) -> (O) { O[i : I] = <(X[j, i, k]); }", {{"X", F32({3, 5, 333})}}},
                "outer loop");
  EXPECT_NE(plans.find("Outer reduction loops: j"), std::string::npos) << plans;
  // Integers: a max whose result a post-op converts.
  plans = Check({"function (X[N, M]) -> (O) { T[i : N] = >(X[i, j]); O = as_float(T, 32) * 2; }",
                 {{"X", Of(lang::DataType::I32, {4, 333})}}},
                "int max with post-op");
  EXPECT_NE(plans.find("Reduction form: max of int"), std::string::npos) << plans;
  const char* softmax = R"(function (X[N, D]) -> (Y) {
  M[i, 0 : N, 1] = >(X[i, j]);
  E = exp(X - M);
  S[i, 0 : N, 1] = +(E[i, j]);
  Y = E / S;
})";
  // Rows that fit the cache: one row group (row_group_test.cc); over 3-D
  // data whose rows are not the last axis, the reduction forms.
  plans = Check({softmax, {{"X", F32({7, 333})}}}, "softmax");
  EXPECT_NE(plans.find("Row group form: 7 rows of 333 values"), std::string::npos) << plans;
  const char* col_softmax = R"(function (X[N, D]) -> (Y) {
  M[0, j : 1, D] = >(X[i, j]);
  E = exp(X - M);
  S[0, j : 1, D] = +(E[i, j]);
  Y = E / S;
})";
  plans = Check({col_softmax, {{"X", F32({333, 7})}}}, "column softmax");
  EXPECT_EQ(plans.find("Row group form"), std::string::npos) << plans;
}

TEST_P(CpuForms, BorderRowsOfSmallImagesAreConstants) {
  // A "same" convolution whose rows fit one block (2 vectors: 14 rows, with
  // 32 channels and, ChooseVectorBlock's pick, with 64), or whose blocks all
  // belong to one work item (17 rows: 3 blocks of 6, the last shifted
  // back), knows its border rows
  // when the kernel is generated: the window offsets along the rows are
  // unrolled and no row guard (ok_) is left.
  auto device = Device();
  struct Shape {
    int64_t hw, c;
    const char* plan;  // on llvm
  };
  for (const Shape& s : {Shape{14, 32, "2 x 16 lanes of float along co, block of 14 along y"},
                         Shape{14, 64, "2 x 16 lanes of float along co, block of 14 along y"},
                         Shape{17, 64, "4 x 16 lanes of float along co, block of 6 along y (the last block shifted back)"}}) {
    compiler::CompileOptions o;
    o.use_local = false;
    std::string name = fmt::format("{}x{}x{} on {}", s.hw, s.hw, s.c, GetParam());
    auto program = testing::CheckCase(
        device,
        {testing::kConvRelu, {{"D", F32({1, s.hw, s.hw, s.c})}, {"K", F32({3, 3, s.c, s.c})}}}, o, name);
    if (GetParam() != "llvm") continue;
    std::string plans = testing::VectorPlans(*program);
    EXPECT_NE(plans.find(s.plan), std::string::npos) << name << "\n" << plans;
    std::string sem = sem::Print(program->compiled().Module());
    EXPECT_EQ(sem.find("ok_"), std::string::npos) << name;
  }
}

// An elementwise epilogue of inline math (exp, log, tanh: no library call)
// is emitted operation by operation across its vectors, so their chains sit
// side by side; one that calls a library (sin) keeps vector after vector,
// since a call clobbers every vector register. Sizes with masked tails
// (1031, 7), against the evaluator on both devices.
TEST_P(CpuForms, InlineMathEpiloguesInterleaveTheirVectors) {
  auto device = Device();
  compiler::CompileOptions o;
  o.use_local = false;
  const char* softplus = "function (X[N]) -> (Y) { Y = log(1.0 + exp(X)); }";
  const char* tanh = "function (X[N]) -> (Y) { Y = tanh(X) + exp(X); }";
  const char* sin = "function (X[N]) -> (Y) { Y = sin(X) + exp(X); }";
  for (int64_t n : {int64_t{1} << 16, int64_t{1031}, int64_t{7}}) {
    for (const char* source : {softplus, tanh, sin}) {
      std::string name = fmt::format("{} over {} on {}", source, n, GetParam());
      auto program = testing::CheckCase(device, {source, {{"X", F32({n})}}}, o, name);
      if (GetParam() != "llvm" || n != int64_t{1} << 16) continue;
      std::string sem = sem::Print(program->compiled().Module());
      size_t first_exp = sem.find("= exp("), second_exp = sem.find("= exp(", first_exp + 1);
      ASSERT_NE(second_exp, std::string::npos) << name << "\n" << sem;
      if (source == softplus) {
        EXPECT_LT(second_exp, sem.find("= log(")) << name << "\n" << sem;  // exp, exp, ..., log
        continue;
      }
      const char* call = source == tanh ? "= tanh(" : "= sin(";
      size_t second_call = sem.find(call, sem.find(call) + 1);
      ASSERT_NE(second_call, std::string::npos) << name << "\n" << sem;
      if (source == tanh) {
        EXPECT_LT(second_call, first_exp) << name << "\n" << sem;  // tanh, tanh, ..., exp
      } else {
        EXPECT_LT(first_exp, second_call) << name << "\n" << sem;  // sin, exp, +, sin, ...
      }
    }
  }
}

TEST_P(CpuForms, ColumnReductionsInTheVectorForm) {
  // The output index is contiguous: lanes along it (the vector form), every
  // aggregation starting from its identity, masked tails at 333 and 7.
  const char* cols = R"(function (X[N, M]) -> (S, P, MX, MN) {
  S[j : M] = +(X[i, j]);
  P[j : M] = *(X[i, j]);
  MX[j : M] = >(X[i, j]);
  MN[j : M] = <(X[i, j]);
})";
  for (auto shape : {F32({5, 333}), F32({1031, 7}), F64({3, 40})}) {
    std::string plans = Check({cols, {{"X", shape}}}, "column reductions");
    for (const char* agg : {"(product)", "(max)", "(min)"})
      EXPECT_NE(plans.find(fmt::format("along j {}", agg)), std::string::npos) << plans;
  }
  // NHWC global max pooling.
  std::string plans = Check({"function (I[N, H, W, C]) -> (O) { O[n, c : N, C] = >(I[n, h, w, c]); }",
                             {{"I", F32({2, 5, 7, 19})}}},
                            "global max pooling");
  EXPECT_NE(plans.find("along c (max)"), std::string::npos) << plans;
}

// Column reductions of inputs larger than the caches walk the rows in
// chunks of a few steps, each work item covering a strip of v blocks with
// its accumulators in memory (PlanColumnChunks): rows split in 8 or 7, two
// levels of reduction, v's tail (2050 = 32 * 64 + 2) in the strip's last
// block, post-ops after the last chunk, max from its identity; 2053 rows
// (prime): chunks of 8 and a last one of 5. Inputs of 16-17 MB: above 4
// times the L2 total of two cores with 2 MB each; 1400 x 1400 (7.8 MB) is
// not.
TEST_P(CpuForms, LargeColumnReductionsWalkTheRowsInChunks) {
  struct C {
    const char* source;
    lang::Shape shape;
    const char* chunks;  // the plan's chunk loops on llvm, or null: none
  };
  const char* sum = "function (X[N, M]) -> (Y) { Y[j : M] = +(X[i, j]); }";
  const char* max = "function (X[N, M]) -> (Y) { Y[j : M] = >(X[i, j]); }";
  const char* mean = R"(function (X[B, N, M]) -> (Y) {
  S[b, j : B, M] = +(X[b, i, j]);
  Y = S / N;
})";
  const char* two = "function (X[A, K, M]) -> (Y) { Y[j : M] = +(X[a, k, j]); }";
  for (const C& c : {C{sum, F32({2056, 2050}), "Reduction chunks: i/8 "},
                     C{sum, F32({2051, 2048}), "Reduction chunks: i/7 "},
                     C{max, F32({2056, 2049}), "Reduction chunks: i/8 "},
                     C{mean, F32({3, 1400, 1000}), "Reduction chunks: i/8 "},
                     C{two, F32({300, 8, 1800}), "Reduction chunks: a "},
                     C{sum, F32({2053, 2050}), "Reduction chunks: i/8 "},
                     C{sum, F32({1400, 1400}), nullptr}}) {
    std::string name = fmt::format("column reduction of {}", lang::ToString(c.shape));
    std::string plans = Check({c.source, {{"X", c.shape}}}, name);
    if (GetParam() != "llvm") continue;
    EXPECT_EQ(plans.find("Reduction chunks") != std::string::npos, c.chunks != nullptr) << name << "\n" << plans;
    if (c.chunks) {
      EXPECT_NE(plans.find(c.chunks), std::string::npos) << name << "\n" << plans;
      EXPECT_NE(plans.find(" j blocks"), std::string::npos) << name << "\n" << plans;
    }
  }
}

TEST_P(CpuForms, SplitReductions) {
  // Too few outputs for the cores: partial results per row (i), then a
  // combine kernel over them; every aggregation, floats and integers.
  using lang::DataType;
  const char* all = R"(function (X[N, M]) -> (S, MX, MN, P) {
  S[] = +(X[i, j]);
  MX[] = >(X[i, j]);
  MN[] = <(X[i, j]);
  P[] = *(X[i, j]);
})";
  for (DataType t : {DataType::F32, DataType::I32, DataType::F64}) {
    auto device = Device();
    compiler::CompileOptions o;
    o.use_local = false;
    Case c{all, {{"X", Of(t, {333, 1031})}}};
    auto program = testing::CheckCase(device, c, o, fmt::format("split {}", lang::Name(t)));
    const auto& kernels = program->compiled().kernels;
    ASSERT_EQ(kernels.size(), 8u);
    for (size_t k = 0; k < kernels.size(); k += 2) {
      EXPECT_NE(kernels[k].spec.flat.comment.find("(partial results)"), std::string::npos);
      EXPECT_NE(kernels[k + 1].spec.flat.comment.find("(combine)"), std::string::npos);
      EXPECT_NE(kernels[k].code.plan_text.find("Grid: 333 work items"), std::string::npos)
          << kernels[k].code.plan_text;
    }
    // The chunks are fixed by the shapes: the same bits on every run.
    if (!device->WhyCannotRun().empty()) continue;  // (CheckCase said it skipped)
    lang::Program bound = testing::BindCase(c);
    auto inputs = testing::RandomInputs(bound, 7);
    auto a = program->Run(inputs), b = program->Run(inputs);
    for (const auto& [name, tensor] : a)
      for (int64_t i = 0; i < tensor.size(); ++i) EXPECT_EQ(tensor.GetDouble(i), b.at(name).GetDouble(i));
  }
  // Global average pooling of one NCHW image with 3 channels: split along c's
  // rows (h), w contiguous.
  const char* pool = R"(function (I[N, C, H, W]) -> (O) {
  S[n, c : N, C] = +(I[n, c, h, w]);
  O = S / (H * W);
})";
  Check({pool, {{"I", F32({1, 3, 67, 333})}}}, "split pooling");
  // A 1-D sum is not split (each part would be one element).
  std::string plans = Check({"function (X[N]) -> (Y) { Y[] = +(X[i]); }", {{"X", F32({70000})}}}, "1-D sum");
  EXPECT_NE(plans.find("Grid: 1 work items"), std::string::npos) << plans;
}

TEST_P(CpuForms, Transposes) {
  using lang::DataType;
  const char* t2 = "function (I[N, M]) -> (O) { O[j, i : M, N] = =(I[i, j]); }";
  struct T {
    DataType type;
    int64_t n, m;
  };
  for (T t : {T{DataType::F32, 1, 7}, T{DataType::F32, 7, 333}, T{DataType::F32, 1031, 17},
              T{DataType::F32, 16, 32}, T{DataType::F64, 33, 20}, T{DataType::I32, 333, 7},
              T{DataType::I64, 9, 10}, T{DataType::U8, 40, 70}, T{DataType::I16, 50, 21}}) {
    std::string name = fmt::format("transpose {} {} x {}", lang::Name(t.type), t.n, t.m);
    std::string plans = Check({t2, {{"I", Of(t.type, {t.n, t.m})}}}, name);
    if (t.n == 1) continue;  // one row: a plain copy
    EXPECT_NE(plans.find("Transpose form"), std::string::npos) << name << "\n" << plans;
    if (t.n % 16 != 0 || t.m % 16 != 0) {
      EXPECT_NE(plans.find("masked tails"), std::string::npos) << plans;
    }
  }
  const char* p021 = "function (X[A, B, C]) -> (Y) { Y[a, c, b : A, C, B] = =(X[a, b, c]); }";
  std::string plans = Check({p021, {{"X", F32({3, 17, 35})}}}, "permute 021");
  EXPECT_NE(plans.find("output along b (17 values), input along c (35 values)"), std::string::npos)
      << plans;
  // NCHW -> NHWC: h and w merge into one run of the input.
  const char* to_nhwc = R"(function (X[N, C, H, W]) -> (Y) {
  Y[n, h, w, c : N, H, W, C] = =(X[n, c, h, w]);
})";
  plans = Check({to_nhwc, {{"X", F32({2, 19, 5, 7})}}}, "nchw to nhwc");
  EXPECT_NE(plans.find("output along c (19 values), input along w*h (35 values)"), std::string::npos)
      << plans;
  const char* to_nchw = R"(function (X[N, H, W, C]) -> (Y) {
  Y[n, c, h, w : N, C, H, W] = =(X[n, h, w, c]);
})";
  plans = Check({to_nchw, {{"X", F64({2, 3, 11, 20})}}}, "nhwc to nchw");
  EXPECT_NE(plans.find("output along w*h (33 values), input along c (20 values)"), std::string::npos)
      << plans;
}

// Two rules for short reductions (forms/vector.h): the block one register
// over the budget that divides the rows exactly only over an innermost
// reduction of 16 steps or more (over 3 input channels its spilled
// accumulator costs more than it saves), and reduction chunks only of 48
// steps or more (5x5 over 32 channels: chunks of 32 steps, not worth
// moving the accumulators; 3x3 over 64: chunks of 64 steps stay).
TEST_P(CpuForms, ShortReductionsKeepTheirBlocksAndChunksSmall) {
  const char* strided = R"(function (D[N, H, W, CI], K[KH, KW, CI, CO]) -> (O) {
  O[n, x, y, co : N, (H + 1) / 2, (W + 1) / 2, CO] = +(D[n, 2 * x + i - 3, 2 * y + j - 3, ci] * K[i, j, ci, co]);
})";
  const char* same = R"(function (D[N, H, W, CI], K[KH, KW, CI, CO]) -> (O) {
  O[n, x, y, co : N, H, W, CO] = +(D[n, x + i - (KH - 1) / 2, y + j - (KW - 1) / 2, ci] * K[i, j, ci, co]);
})";
  // Rows of 49 outputs (the input's height kept small): 7 divides them, and
  // no block of two vectors does with as many accumulators
  // (ChooseVectorBlock keeps the four of the widest block).
  struct Conv {
    const char* source;
    int64_t h, w, ci, k;
    const char* plan;  // on llvm (32 vector registers)
    bool chunks;
  };
  for (const Conv& c : {Conv{strided, 2, 98, 3, 7, "4 x 16 lanes of float along co, block of 5 along y (the last block shifted back)", false},
                        Conv{strided, 2, 98, 16, 7, "4 x 16 lanes of float along co, block of 7 along y", false},
                        Conv{same, 3, 49, 32, 5, "4 x 16 lanes of float along co, block of 7 along y", false},
                        Conv{same, 3, 49, 64, 3, "4 x 16 lanes of float along co, block of 7 along y", true}}) {
    std::string name = fmt::format("{}x{} conv over {} channels", c.k, c.k, c.ci);
    std::string plans = Check({c.source, {{"D", F32({1, c.h, c.w, c.ci})}, {"K", F32({c.k, c.k, c.ci, 64})}}}, name);
    if (GetParam() != "llvm") continue;
    EXPECT_NE(plans.find(c.plan), std::string::npos) << name << "\n" << plans;
    EXPECT_EQ(plans.find("Reduction chunks") != std::string::npos, c.chunks) << name << "\n" << plans;
  }
}

// Small images with many channels (resnet's 14x14 and 7x7 layers at batch
// 1): one block covers the rows y, so the blocks of a chunked work item are
// values of x instead (PlanGridChunks), each chunk of the weights read from
// memory once per work item and from L1 by the other rows; the padding along
// x is checked once per block and chunk. Sizes no block divides: 11 values
// of x in two work items (6 + 5), 90 output channels (a masked tail), 24
// and 100 input channels (chunks of the kernel row i, and of i, j and 50
// channels), a fused residual add and ReLU, a stride of 2 (its constraint
// on x has coefficient 2). Against the evaluator on both devices; the plans
// on llvm for testing::kAvx512Cpu (32 KB L1, 2 threads).
TEST_P(CpuForms, SmallImagesChunkAlongTheRows) {
  const char* residual = R"(function (D[N, H, W, CI], K[KH, KW, CI, CO], R[N, H, W, CO]) -> (O) {
  C[n, x, y, co : N, H, W, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]);
  S = C + R;
  O = (S > 0 ? S : 0);
})";
  const char* strided = R"(function (D[N, H, W, CI], K[KH, KW, CI, CO]) -> (O) {
  O[n, x, y, co : N, (H + 1) / 2, (W + 1) / 2, CO] = +(D[n, 2 * x + i - 1, 2 * y + j - 1, ci] * K[i, j, ci, co]);
})";
  struct Conv {
    Case c;
    const char* grid;
    const char* chunks;
  };
  std::vector<Conv> convs = {
      {{residual, {{"D", F32({2, 11, 7, 24})}, {"K", F32({3, 3, 24, 90})}, {"R", F32({2, 11, 7, 90})}}},
       "Grid: 1 x 2 x 4 work items (one per y block, co block, 6 x values, n)",
       "Reduction chunks: i (14 KB of vector inputs each; 6 blocks' accumulators in memory; the next chunk's K prefetched)"},
      {{residual, {{"D", F32({2, 11, 7, 100})}, {"K", F32({3, 3, 100, 90})}, {"R", F32({2, 11, 7, 90})}}},
       "Grid: 1 x 2 x 4 work items (one per y block, co block, 6 x values, n)",
       "Reduction chunks: i, j, ci/50 (10 KB of vector inputs each; 6 blocks' accumulators in memory; the next chunk's K prefetched)"},
      {{strided, {{"D", F32({2, 21, 13, 100})}, {"K", F32({3, 3, 100, 90})}}},
       "Grid: 1 x 2 x 4 work items (one per y block, co block, 6 x values, n)",
       "Reduction chunks: i, j, ci/50 (10 KB of vector inputs each; 6 blocks' accumulators in memory; the next chunk's K prefetched)"},
  };
  for (const Conv& c : convs) {
    std::string name = fmt::format("conv {}", c.chunks);
    std::string plans = Check(c.c, name);
    if (GetParam() != "llvm") continue;
    EXPECT_NE(plans.find("3 x 16 lanes of float along co, block of 7 along y, masked tail"), std::string::npos)
        << name << "\n" << plans;
    EXPECT_NE(plans.find(c.grid), std::string::npos) << name << "\n" << plans;
    EXPECT_NE(plans.find(c.chunks), std::string::npos) << name << "\n" << plans;
  }
}

// ChooseVectorBlock: two vectors of 16 and a block of 14 rows where the
// widest block (four vectors) would spill (7 rows: 28 accumulators, their 4
// vectors and a broadcast in 32 registers); four vectors of 4 rows where
// they divide the rows too (224: 8 loads per 16 multiply-adds, against 16
// per 28); the spilling 7 rows where the only exact alternative has fewer
// than 16 accumulators (2 x 7); a clean widest block (4 rows of 28) stays,
// and so does one of a matrix product whose rows no block divides. Against
// the evaluator on both devices; the plans on llvm (32 vector registers).
TEST_P(CpuForms, FewerVectorsWhereTheyMakeACleanBlock) {
  const char* same = R"(function (D[N, H, W, CI], K[KH, KW, CI, CO]) -> (O) {
  O[n, x, y, co : N, H, W, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]);
})";
  const char* matmul = "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";
  struct Shape {
    Case c;
    const char* plan;
  };
  for (const Shape& s :
       {Shape{{same, {{"D", F32({1, 3, 14, 64})}, {"K", F32({3, 3, 64, 64})}}},
              "2 x 16 lanes of float along co, block of 14 along y"},  // spills: 7 rows of 4 vectors
        Shape{{same, {{"D", F32({1, 2, 224, 64})}, {"K", F32({3, 3, 64, 64})}}},
              "4 x 16 lanes of float along co, block of 4 along y"},  // spills: 4 rows of 4 vectors divide 224
        Shape{{same, {{"D", F32({1, 2, 7, 64})}, {"K", F32({3, 3, 64, 64})}}},
              "4 x 16 lanes of float along co, block of 7 along y"},  // 2 x 7 has too few accumulators
        Shape{{same, {{"D", F32({1, 5, 28, 32})}, {"K", F32({3, 3, 32, 64})}}},
              "4 x 16 lanes of float along co, block of 4 along y"},  // clean: 4 rows of 4 vectors stay
        Shape{{matmul, {{"A", F32({97, 32})}, {"B", F32({32, 64})}}}, "4 x 16 lanes of float along j"}}) {
    std::string name = fmt::format("{}", s.plan);
    std::string plans = Check(s.c, name);
    if (GetParam() != "llvm") continue;
    EXPECT_NE(plans.find(s.plan), std::string::npos) << name << "\n" << plans;
  }
}

// Max, min and product over pooling windows whose padding taps are
// constraints: every output keeps a tap inside the image
// (EveryOutputReached), so they take the vector form from the identity
// without `hit` flags. An output that no tap reaches must stay 0: those
// contractions keep the flat form (a fill, then `hit` flags).
TEST_P(CpuForms, PoolingWindowsInTheVectorForm) {
  const char* max3s2 = R"(function (I[N, H, W, C]) -> (O) {
  PadH = (max(0, ((H + 1) / 2 - 1) * 2 + 3 - H)) / 2;
  PadW = (max(0, ((W + 1) / 2 - 1) * 2 + 3 - W)) / 2;
  O[n, x, y, c : N, (H + 1) / 2, (W + 1) / 2, C] = >(I[n, 2 * x + i - PadH, 2 * y + j - PadW, c]), i < 3, j < 3;
})";
  const char* min4s3 = R"(function (I[N, H, W, C]) -> (O) {
  O[n, x, y, c : N, (H + 2) / 3, (W + 2) / 3, C] = <(I[n, 3 * x + i - 1, 3 * y + j - 1, c]), i < 4, j < 4;
})";
  const char* prod2 = R"(function (I[N, H, W, C]) -> (O) {
  O[n, x, y, c : N, H, W, C] = *(I[n, x + i - 1, y + j, c]), i < 2, j < 2;
})";
  for (auto [source, agg] : {std::pair{max3s2, "(max)"}, {min4s3, "(min)"}, {prod2, "(product)"}}) {
    for (auto dims : {std::vector<int64_t>{2, 17, 13, 21}, {1, 9, 11, 5}, {1, 1, 2, 33}}) {
      std::string name = fmt::format("{} on {}x{}x{}x{}", agg, dims[0], dims[1], dims[2], dims[3]);
      std::string plans = Check({source, {{"I", F32(dims)}}}, name);
      EXPECT_NE(plans.find("Vector form"), std::string::npos) << name << "\n" << plans;
      EXPECT_NE(plans.find(agg), std::string::npos) << name << "\n" << plans;
    }
  }
  // The points x + y >= 5 reach no tap (x + y + i < 5 for no i >= 0): O is 0
  // there, a triangle that no trimming of the output box removes.
  std::string plans = Check({"function (I[H, W, K, C]) -> (O) { O[x, y, c : H, W, C] = >(I[x, y, i, c]), "
                             "i < 2, x + y + i < 5; }",
                             {{"I", F32({4, 5, 3, 37})}}},
                            "unreached outputs");
  EXPECT_EQ(plans.find("(max)"), std::string::npos) << plans;
}

// A strided window's gather, the backward data of a strided convolution as
// `tilec grad` derives it (D_grad[n, i, j, ci] = +(O_grad[n, x, y, co] *
// K[i - 2 * x + 1, ...])): the constraints 2 * x - i <= 1 and i - 2 * x <= 1,
// with i fixed in a work item, bound x's loop to the taps that exist (the
// bounds divided by the stride, rounded) instead of guarding its whole range
// (the bench/grad conv3x3/2 backward data, 56x56 64->128: 94 -> 6.5 ms).
// Strides 2 and 3, against the evaluator on both devices.
TEST_P(CpuForms, StridedGathersBoundTheirLoopsByTheStride) {
  const char* stride2 = R"(function (K[KH, KW, CI, CO], G[N, OH, OW, CO]) -> (D) {
  D[n, i, j, ci : N, 2 * OH, 2 * OW, CI] = +(G[n, x, y, co] * K[i - 2 * x + 1, j - 2 * y + 1, ci, co]);
})";
  const char* stride3 = R"(function (K[KH, KW, CI, CO], G[N, OH, OW, CO]) -> (D) {
  D[n, i, j, ci : N, 3 * OH - 1, 3 * OW - 1, CI] = +(G[n, x, y, co] * K[i - 3 * x + 1, j - 3 * y + 1, ci, co]);
})";
  for (auto [source, stride] : {std::pair{stride2, 2}, {stride3, 3}}) {
    for (auto [k, g] : {std::pair{std::vector<int64_t>{3, 3, 64, 128}, std::vector<int64_t>{1, 9, 7, 128}},
                        {{3, 3, 37, 24}, {2, 7, 6, 24}}}) {
      std::string name = fmt::format("stride {} K {}x{} G {}x{}x{}x{}", stride, k[2], k[3], g[0], g[1], g[2], g[3]);
      auto device = Device();
      compiler::CompileOptions o;
      o.use_local = false;
      auto program = testing::CheckCase(device, {source, {{"K", F32(k)}, {"G", F32(g)}}}, o,
                                        fmt::format("{} on {}", name, GetParam()));
      if (GetParam() != "llvm") continue;
      std::string plans = testing::VectorPlans(*program);
      EXPECT_NE(plans.find("Vector form"), std::string::npos) << name << "\n" << plans;
      std::string sem = sem::Print(program->compiled().Module());
      EXPECT_NE(sem.find(fmt::format("for (index x = max(0, ((max((i_0 - 1), 0) + {}) / {}))", stride - 1, stride)),
                std::string::npos)
          << name << "\n" << sem;
    }
  }
}

// A transpose whose result is far larger than the caches (16.8 MB, above 4
// times the L2 caches' total, and with its input above half a 32 MB L3;
// not streamed where the L3 is known to be larger) and whose rows keep vectors aligned (2048
// floats) stores its whole tiles with streaming stores, its masked tails
// (2050 does not divide by 16) with ordinary ones; one whose rows do not
// (2053) and a small one stream nothing. Against the evaluator on both
// devices.
TEST_P(CpuForms, LargeTransposesStream) {
  auto device = Device();
  compiler::CompileOptions o;
  o.use_local = false;
  const char* transpose = "function (I[N, M]) -> (O) { O[j, i : M, N] = =(I[i, j]); }";
  for (auto [n, m] : {std::pair<int64_t, int64_t>{2048, 2050}, {2053, 2050}, {333, 1031}}) {
    std::string name = fmt::format("transpose {}x{} on {}", n, m, GetParam());
    auto program = testing::CheckCase(device, {transpose, {{"I", F32({n, m})}}}, o, name);
    std::string plans = testing::VectorPlans(*program);
    EXPECT_NE(plans.find("Transpose form"), std::string::npos) << name << "\n" << plans;
    std::string sem = sem::Print(program->compiled().Module());
    const compiler::HardwareModel& hw = device->hardware_model();
    // The rule (forms/transpose.cc): above 4 times the L2 caches, and input
    // plus output above half the last-level cache where it is known; a
    // tile's rows (vec_size floats) whole cache lines.
    int64_t bytes = n * m * 4;
    if (n % 16 == 0 && hw.vec_size * 4 >= hw.mem_width &&
        bytes > 4 * hw.l2_bytes * std::max<int64_t>(hw.compute_units, 1) &&
        (hw.l3_bytes == 0 || 2 * bytes > hw.l3_bytes / 2)) {
      EXPECT_NE(sem.find("= stream "), std::string::npos) << name;
    } else {
      EXPECT_EQ(sem.find("stream"), std::string::npos) << name;
    }
    // 8 x 8 tiles per work item where the grid keeps 4 work items per core
    // (the last blocks cut short: 2053 and 1031 fill no block of 128); a
    // column of 32 where the output's rows alias (2048 f32 apart).
    if (hw.vec_size == 16 && hw.compute_units <= 8 && n > 1000) {
      const char* blocks = n == 2048 ? "(one per j tile, 32 i tiles, -)" : "(one per 8 j tiles, 8 i tiles, -)";
      EXPECT_NE(plans.find(blocks), std::string::npos) << name << "\n" << plans;
    }
  }
}

// Output rows a multiple of 4 KB apart (1024 f32, 512 f64) land on one
// offset within a page, so on the same cache sets: a work item takes a
// column of 32 tiles along o and one tile along n (forms/transpose.cc,
// RowsAlias). Input rows that alias alone (600 x 1024), and rows of 1030
// f32 (4120 bytes) that spread over the sets, keep the 8 x 8 blocks.
// Against the evaluator on both devices, masked tails included.
TEST_P(CpuForms, TransposesIntoRowsThatAliasTakeColumnsOfTiles) {
  using lang::DataType;
  const char* transpose = "function (I[N, M]) -> (O) { O[j, i : M, N] = =(I[i, j]); }";
  struct T {
    DataType type;
    int64_t n, m;  // the output's rows are n apart
    bool alias;
  };
  for (T t : {T{DataType::F32, 1024, 600, true}, T{DataType::F64, 512, 601, true},
              T{DataType::F32, 600, 1024, false}, T{DataType::F32, 1030, 601, false}}) {
    std::string name = fmt::format("transpose {} {} x {}", lang::Name(t.type), t.n, t.m);
    std::string plans = Check({transpose, {{"I", Of(t.type, {t.n, t.m})}}}, name);
    EXPECT_NE(plans.find("Transpose form"), std::string::npos) << name << "\n" << plans;
    EXPECT_EQ(plans.find("output rows that alias in the cache") != std::string::npos, t.alias)
        << name << "\n" << plans;
    const compiler::HardwareModel& hw = Device()->hardware_model();
    if (hw.vec_size != 16 || hw.compute_units > 8) continue;  // the grid's size sets the blocks
    const char* blocks = t.alias ? "(one per j tile, 32 i tiles, -)" : "(one per 8 j tiles, 8 i tiles, -)";
    EXPECT_NE(plans.find(blocks), std::string::npos) << name << "\n" << plans;
  }
}

// `R = D` between layouts (the relayouts that layout choice inserts, or a
// user's conversion): one copy kernel into R, in the transpose form where
// the contiguous axis moves. Sizes that fill no tile; padded blocked
// outputs (C = 20 in blocks of 16 or 8) are checked for values only.
TEST_P(CpuForms, RelayoutsBetweenLayouts) {
  const char* copy = "function (D[N, C, H, W]) -> (R) { R = D; }";
  struct L {
    const char *from, *to;
    const char* form;  // where the contiguous axis stays (channels), a vector copy
  };
  for (L l : {L{"nchw", "nChw16c", "Transpose form"}, L{"nChw16c", "nchw", "Transpose form"},
              L{"nchw", "nhwc", "Transpose form"}, L{"nhwc", "nchw", "Transpose form"},
              L{"nchw", "nChw8c", "Transpose form"}, L{"nChw8c", "nhwc", "Vector form"},
              L{"nhwc", "nChw16c", "Vector form"},
              // Blocks of 4 (nChw4c, the MACE images' abDc4d order): 4 vectors
              // of 4 lanes and a block of rows per work item (was 1 x 4 lanes).
              L{"nhwc", "nChw4c", "4 x 4 lanes of float along i1%4 (vectors along i1/4), block of 4 along i3"},
              L{"nChw4c", "nhwc", "Vector form"}}) {
    for (int64_t c : {32, 20}) {
      std::string name = fmt::format("R = D, {} to {}, C = {}", l.from, l.to, c);
      auto device = Device();
      compiler::CompileOptions o;
      o.use_local = false;
      auto program = testing::CheckCase(device, {copy, {{"D", F32({2, c, 5, 7})}}, {{"D", l.from}, {"R", l.to}}}, o,
                                        fmt::format("{} on {}", name, GetParam()));
      if (c != 32) continue;
      EXPECT_EQ(program->compiled().kernels.size(), 1u) << name;
      EXPECT_NE(testing::VectorPlans(*program).find(l.form), std::string::npos)
          << name << "\n" << testing::VectorPlans(*program);
    }
  }
}

// The plans this host (or TILEC_CPU) chooses, printed into the test log
// (build/Testing/Temporary/LastTest.log, or the test binary's output) with
// the CPU they are for, and run against the evaluator: the tests above pin
// the CPU they describe, this one shows what the machine at hand does.
TEST_P(CpuForms, HostPlansArePrintedAndRun) {
  auto device = testing::DeviceFor(GetParam());
  compiler::CompileOptions o;
  o.use_local = false;
  std::vector<Case> cases = {
      {testing::kConvRelu, {{"D", F32({1, 14, 15, 32})}, {"K", F32({3, 3, 32, 32})}}},
      {"function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
       {{"A", F32({97, 33})}, {"B", F32({33, 70})}}},
      {kAllAggregations, {{"X", F32({3, 1031})}}},
      {"function (I[N, M]) -> (O) { O[j, i : M, N] = =(I[i, j]); }", {{"I", F32({333, 1031})}}},
  };
  std::cout << "host plans on " << GetParam() << " for " << device->hardware_model().name << " ("
            << device->hardware_model().vec_size << " f32 lanes, " << device->hardware_model().vector_registers
            << " vector registers):\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    auto program = testing::CheckCase(device, cases[i], o, fmt::format("host case {}", i));
    std::string plans = testing::VectorPlans(*program);
    EXPECT_FALSE(plans.empty()) << "case " << i << ": no kernel took a CPU form";
    std::cout << "case " << i << ":\n" << plans << "\n";
  }
}

// `+(A == B ? C)` (a max pool gradient's routing, tilec grad) takes the
// vector form: A and B compared lane by lane in their own type (i32 keys,
// or floats), C selected or 0. Compared inputs of different types keep the
// flat form.
TEST_P(CpuForms, ConditionalSumInTheVectorForm) {
  const char* routing = R"(function (K[N, H, W, C], Win[N, X, Y, C], G[N, X, Y, C]) -> (R) {
  R[n, 2 * x + xr, 2 * y + yr, c : N, H, W, C] = +(K[n, 2 * x + xr, 2 * y + yr, c] == Win[n, x - xt, y - yt, c] ? G[n, x - xt, y - yt, c]), xr + 2 * xt < 3, yr + 2 * yt < 3, xr < 2, yr < 2;
})";
  for (auto [key, dims] : {std::pair{lang::DataType::I32, std::vector<int64_t>{2, 14, 14, 32}},
                           {lang::DataType::I32, {1, 10, 6, 16}},
                           {lang::DataType::F32, {2, 8, 10, 16}}}) {
    std::vector<int64_t> half = {dims[0], (dims[1] + 1) / 2, (dims[2] + 1) / 2, dims[3]};
    std::string name = fmt::format("routing {} on {}x{}x{}x{}", key == lang::DataType::I32 ? "i32" : "f32", dims[0],
                                   dims[1], dims[2], dims[3]);
    std::string plans = Check({routing, {{"K", Of(key, dims)}, {"Win", Of(key, half)}, {"G", F32(half)}}}, name);
    EXPECT_NE(plans.find("Vector form"), std::string::npos) << name << "\n" << plans;
  }
  std::string plans = Check({routing, {{"K", Of(lang::DataType::I32, {1, 8, 8, 16})},
                                       {"Win", F32({1, 4, 4, 16})}, {"G", F32({1, 4, 4, 16})}}},
                            "routing i32 == f32");
  EXPECT_EQ(plans.find("Vector form"), std::string::npos) << plans;
}

// A reduction that a row guard would unroll (ConstRows) stays a loop when a
// constraint with a grid index bounds it: its copies ran the whole range,
// reading O_grad[y - yt] at y - yt = -1 (a strided convolution's data
// gradient split by phase: p = yr with y on the grid, or p = y with the
// rows' phase yr on the grid).
TEST_P(CpuForms, UnrolledRowGuardsKeepLoopBounds) {
  const char* phase = R"(function (A[N, X, Y, C], B[N, X, Y, C]) -> (R) {
  R[n, 2 * x + xr, 2 * y + yr, c : N, 2 * X, 2 * Y, C] = +(A[n, x - xt, y - yt, c] * B[n, x - xt, y - yt, c]), xr + 2 * xt < 3, yr + 2 * yt < 3, xr < 2, yr < 2;
})";
  for (auto dims : {std::vector<int64_t>{2, 7, 7, 64}, {1, 5, 6, 16}})
    Check({phase, {{"A", F32(dims)}, {"B", F32(dims)}}}, fmt::format("phases on {}x{}", dims[1], dims[2]));
  const char* data_grad = R"(function (G[N, X, Y, CO], K[KH, KW, CI, CO]) -> (D) {
  D[n, 2 * x + xr, 2 * y + yr, ci : N, 2 * X, 2 * Y, CI] = +(G[n, x - xt, y - yt, co] * K[xr + 2 * xt + 1, yr + 2 * yt + 1, ci, co]), xr < 2, yr < 2;
})";
  for (auto [g, k] : {std::pair{std::vector<int64_t>{1, 7, 7, 64}, std::vector<int64_t>{3, 3, 64, 64}},
                      {{4, 8, 8, 16}, {3, 3, 16, 16}}})
    Check({data_grad, {{"G", F32(g)}, {"K", F32(k)}}}, fmt::format("stride-2 data gradient on {}x{}", g[1], g[2]));
}

INSTANTIATE_TEST_SUITE_P(Devices, CpuForms, ::testing::Values("llvm", "opencl"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tilec
