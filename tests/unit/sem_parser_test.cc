// Tests of the sem parser (compiler/sem/parser.h): the round trip
// print(parse(print(m))) == print(m) over the kernels of every example, each
// construct the printer writes, what the text does not spell out (which node
// an ambiguous-looking form is), and the errors malformed text gives.
#include "compiler/sem/parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/sem/printer.h"
#include "compiler/sem/verify.h"
#include "runtime/program.h"
#include "support/error.h"
#include "tests/unit/pipeline_check.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"

namespace tilec::sem {
namespace {

Module ParseText(const std::string& text) { return Parse(MakeSource("test.sem", text)); }

// The first statement of the first function's body.
Stmt FirstStmt(const Module& m) { return As<Block>(m.functions.at(0).body)->stmts.at(0); }

// The initializer of `index v = …;`, the only statement of a kernel.
Expr IndexInit(const std::string& expr) {
  Module m = ParseText("kernel void k(index n) index(i64) {\n  index v = " + expr + ";\n}\n");
  return As<Declare>(FirstStmt(m))->init;
}

// Every node kind and statement form the printer writes, in its printed
// form (so parsing and printing gives the same text back), passing Verify.
const char* const kAllConstructs = R"(kernel void k(global float* restrict out, global const float* restrict in, global const uchar* bytes, global const float4* vecs, local float* scratch, constant int* table, int n, long big) index(i64) work_group_size(8, 2, 1) {
  // every statement and expression the printer writes
  //
  //   indented text
  local float tile[64];
  float acc[4] = {fill 0.0f};
  float4 vacc[2];
  index gid = get_global_id(0);
  index lid = get_local_id(1);
  index grp = (get_group_id(2) + (get_local_size(0) * get_num_groups(1)));
  float4 v = in[(gid * 4):+4];
  float16 w = in[gid:+16 if (broadcast16((int)(gid)) < broadcast16(n))];
  float4 e = vecs[gid];
  float x = v.s3;
  x = w.sf;
  x = ((float4)(v)).s0;
  v = insert(v, 2, x);
  float8 s = shuffle(v, v, [0 1 2 3 7 6 5 4]);
  int c = (int)-5;
  c = (c + (int)7);
  long l = (long)-9223372036854775808;
  ulong u = (ulong)18446744073709551615;
  uchar b = bytes[gid];
  bool flag = ((b > (uchar)3) && (!(c != (int)0)));
  short h = (short)(c);
  index neg = (-5);
  index sum = (-5 + gid);
  index dneg = (--5);
  index minus = (gid - -3);
  index mod = ((gid % 3) / 2);
  index bits = ((((gid & 3) | 4) ^ 1) << 2);
  index shr = ((gid >> 1) * 9223372036854775807);
  float y = min(x, max(x, 1.5f));
  y = clamp(y, (-1.0f), 1e+30f);
  y = select(flag, y, -0.0f);
  y = (flag ? y : (float)nan);
  y = ((float)inf + (float)-inf);
  half hh = 2.5h;
  double d = (1e-05 + 0.1);
  double dn = (double)-inf;
  y = fma(y, y, mad(y, y, exp(log(sqrt(pow(y, y))))));
  y = fmod(tanh(sin(cos(tan(y)))), fabs(floor(ceil(round(erf(atan(acos(asin(cosh(sinh(y)))))))))));
  float mx = max_value(float);
  int mn = min_value(int);
  index z = zero(index);
  double one1 = one(double);
  float4 bv = broadcast4(y);
  int4 iv = (int4)(v);
  bool4 m4 = (v >= broadcast4(0.0f));
  bool t = true;
  t = (t || false);
  index tt = (~gid);
  global const float* p = (in + 4);
  p = (p - gid);
  y = (p + 1)[2];
  y = p[gid];
  tile[lid] = y;
  scratch[lid] = tile[(lid + 1)];
  acc[0] = (acc[1] * 2.0f);
  vacc[1] = v;
  barrier(local);
  barrier(global);
  barrier(local|global);
  prefetch(in[(gid + 16)]);
  out[gid:+4] = stream v;
  out[gid:+4 if m4] = v;
  out[gid] = (float)(table[0]);
  if (((int)(gid) < n)) {
    out[gid] = y;
  }
  if ((gid == 0)) {
    out[0] = 1.0f;
  } else if ((gid == 1)) {
    out[1] = 2.0f;
  } else {
    if ((gid == 2)) {
      return;
    }
  }
  for (index i = 0; i < 64; i += 8) {
    float q = tile[i];
    out[i] = q;
  }
  #pragma unroll 1
  for (int j = (int)0; j < n; j += (int)2) {
    c = (c + j);
  }
  for (long k2 = big; k2 < (big + (long)4); k2 += (long)1) {
  }
  while ((c > (int)0)) {
    c = (c - (int)1);
  }
  {
    float x = 3.0f;
    out[0] = x;
  }
  return;
}

float helper(float a, index i) index(i64) {
  return (a * 2.0f);
}

void plain() index(i64) {
}
)";

TEST(SemParser, EveryConstructRoundTrips) {
  Module m = ParseText(kAllConstructs);
  EXPECT_EQ(Print(m), kAllConstructs);
  EXPECT_TRUE(Problems(m).empty()) << Problems(m).at(0);
  ASSERT_EQ(m.functions.size(), 3u);
  const Function& k = m.functions[0];
  EXPECT_TRUE(k.is_kernel);
  EXPECT_EQ(k.index_type, DataType::I64);
  EXPECT_EQ(k.work_group_size, (std::array<int64_t, 3>{8, 2, 1}));
  EXPECT_TRUE(k.params[0].noalias);
  EXPECT_FALSE(k.params[2].noalias);
  EXPECT_EQ(k.params[1].type, Type::Pointer(Type::Scalar(DataType::F32), AddressSpace::Global, true));
  EXPECT_EQ(k.params[4].type.space, AddressSpace::Local);
  const Function& helper = m.functions[1];
  EXPECT_FALSE(helper.is_kernel);
  EXPECT_EQ(helper.return_type, Type::Scalar(DataType::F32));
  EXPECT_FALSE(helper.work_group_size);
}

// Forms that look alike in text but are different nodes.
TEST(SemParser, NegativeConstantsAndNegations) {
  Expr neg = IndexInit("(-5)");
  ASSERT_TRUE(As<Unary>(neg));
  EXPECT_EQ(ConstInt(As<Unary>(neg)->operand), 5);
  Expr sum = IndexInit("(-5 + n)");
  ASSERT_TRUE(As<Binary>(sum));
  EXPECT_EQ(ConstInt(As<Binary>(sum)->a), -5);
  Expr double_neg = IndexInit("(--5)");
  ASSERT_TRUE(As<Unary>(double_neg));
  EXPECT_EQ(ConstInt(As<Unary>(double_neg)->operand), -5);
  EXPECT_EQ(ConstInt(IndexInit("-9223372036854775808")), INT64_MIN);
  Expr cond = IndexInit("(-1 ? n : 2)");
  ASSERT_TRUE(As<Cond>(cond));
  EXPECT_EQ(ConstInt(As<Cond>(cond)->cond), -1);
}

TEST(SemParser, TypedConstantsAndCasts) {
  Module m = ParseText(
      "kernel void k(int x) index(i32) {\n  ulong u = (ulong)18446744073709551615;\n  int c = (int)(x);\n"
      "  int d = (int)-7;\n  float f = (float)-inf;\n  half h = 0.5h;\n  double g = 0.1;\n}\n");
  const auto& s = As<Block>(m.functions[0].body)->stmts;
  auto init = [&](size_t i) { return As<Declare>(s.at(i))->init; };
  EXPECT_EQ(As<IntConst>(init(0))->value, -1);  // the bit pattern of 2^64 - 1
  EXPECT_EQ(init(0)->type, Type::Scalar(DataType::U64));
  EXPECT_TRUE(As<Cast>(init(1)));
  EXPECT_EQ(As<IntConst>(init(2))->value, -7);
  EXPECT_EQ(As<FloatConst>(init(3))->value, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(init(4)->type, Type::Scalar(DataType::F16));
  EXPECT_EQ(init(5)->type, Type::Scalar(DataType::F64));
}

// A variable's type is its innermost declaration's.
TEST(SemParser, NamesResolveByScope) {
  Module m = ParseText(
      "kernel void k(global float* out) index(i32) {\n  index x = 1;\n  {\n    float x = 2.0f;\n"
      "    out[0] = x;\n  }\n  out[x] = 3.0f;\n}\n");
  const auto& s = As<Block>(m.functions[0].body)->stmts;
  auto* inner = As<Store>(As<Block>(s.at(1))->stmts.at(1));
  EXPECT_EQ(inner->value->type, Type::Scalar(DataType::F32));
  EXPECT_EQ(As<Store>(s.at(2))->index->type, Type::Index());
}

// Words of the notation (`stream`, built-in function names, `true`) are
// ordinary names where the text uses them so.
TEST(SemParser, NotationWordsAsNames) {
  const std::string text =
      "kernel void k(global float* out, global const float* stream, float min, bool true) index(i32) {\n"
      "  out[0] = stream[1];\n  out[1] = stream;\n  out[2] = stream min;\n  out[3] = min(min, stream[2]);\n"
      "  out[4] = select(true, min, 0.0f);\n}\n";
  try {
    ParseText(text);
    ADD_FAILURE() << "a stored pointer parsed";
  } catch (const UserError& e) {
    EXPECT_EQ(e.span().begin.line, 3) << e.Render();  // `out[1] = stream;` stores a pointer
  }
  std::string valid = text.substr(0, text.find("  out[1]")) + text.substr(text.find("  out[2]"));
  Module m = ParseText(valid);
  EXPECT_EQ(Print(m), valid);
  const auto& s = As<Block>(m.functions[0].body)->stmts;
  EXPECT_FALSE(As<Store>(s.at(0))->streaming);
  EXPECT_TRUE(As<Store>(s.at(1))->streaming);
  EXPECT_TRUE(As<VarRef>(As<Store>(s.at(1))->value));
  EXPECT_TRUE(As<Binary>(As<Store>(s.at(2))->value));
  EXPECT_TRUE(As<VarRef>(As<Select>(As<Store>(s.at(3))->value)->cond));
}

TEST(SemParser, SkipsCommentsOutsideFunctions) {
  Module m = ParseText("// ----- sem\nkernel void a() index(i32) {\n}\n// ----- sem\n// RUN: x\nkernel void b() index(i32) {\n  // kept\n}\n");
  ASSERT_EQ(m.functions.size(), 2u);
  EXPECT_EQ(Print(m), "kernel void a() index(i32) {\n}\n\nkernel void b() index(i32) {\n  // kept\n}\n");
}

// Malformed text: a UserError at the place, with a message naming what is wrong.
struct BadText {
  const char* text;
  int line, col;
  const char* message;
};

TEST(SemParser, ErrorsNameTheirPlace) {
  const BadText cases[] = {
      {"kernel void k() index(i32) {\n  index x = y;\n}\n", 2, 13, "'y' is not declared"},
      {"kernel void k() index(i32) {\n  float x = (1.0f + 2);\n}\n", 2, 19, "operands of + differ: float vs index"},
      {"kernel void k() index(i32) {\n  index x = 1\n}\n", 3, 1, "expected ';', found '}'"},
      {"kernel void k() index(i32) {\n  index x = 1;\n", 3, 1, "expected '}' to close the block at 1:28"},
      {"kernel void k() index(q16) {\n}\n", 1, 23, "unknown index type 'q16'"},
      {"kernel void k() index(i32) {\n  float5 x;\n}\n", 2, 3, "'float5' is not declared"},
      {"kernel void k() index(i32) {\n  index x = frob(1);\n}\n", 2, 13, "unknown function 'frob'"},
      {"kernel void k() index(i32) {\n  index x = 1 @ 2;\n}\n", 2, 15, "unexpected character '@'"},
      {"kernel void k() index(i32) {\n  index x = 12ab;\n}\n", 2, 13, "malformed number '12a'"},
      {"kernel void k(global float* p) index(i32) {\n  p[0:+4] = 1.0f;\n}\n", 2, 13, "a store of 4 elements"},
      {"kernel void k(float4 v) index(i32) {\n  float x = v.s9;\n}\n", 2, 14, "lane 9 of float4"},
      {"kernel void k(float4 v) index(i32) {\n  float x = v.x;\n}\n", 2, 15, "expected a lane s0"},
      {"kernel void k() index(i32) {\n  index x = (int)99999999999;\n}\n", 2, 18, "does not fit int"},
      {"kernel void k() index(i32) {\n  index x = 99999999999999999999;\n}\n", 2, 13, "out of range"},
      {"kernel void k() index(i32) {\n  for (int i = 0; i < 4; i += 1) {\n  }\n}\n", 2, 8, "begins at a index"},
      {"kernel void k() index(i32) {\n  for (index i = 0; j < 4; i += 1) {\n  }\n}\n", 2, 21, "expected the loop variable 'i'"},
      {"kernel void k() index(i32) {\n  barrier(shared);\n}\n", 2, 3, "unknown memory fence 'shared'"},
      {"kernel void k() index(i32) {\n  float t[4];\n  prefetch(t[1]);\n}\n", 3, 3, "not a global pointer"},
      {"kernel void k(global float* p) index(i32) {\n  prefetch(p[1]]);\n}\n", 2, 16, "expected ')'"},
      {"kernel void k() index(i32) {\n  #pragma unroll 4\n}\n", 2, 18, "out of range"},
      {"kernel void k(global float* p) index(i32) {\n  local float t;\n}\n", 2, 15, "expected '['"},
      {"kernel void k() index(i32) {\n  x = 1;\n}\n", 2, 3, "'x' is not declared"},
      {"kernel void k(float a) index(i32) {\n  float x = exp(a, a);\n}\n", 2, 18, "expected ')'"},
  };
  for (const BadText& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      ParseText(c.text);
      ADD_FAILURE() << "parsed";
    } catch (const UserError& e) {
      EXPECT_EQ(e.span().begin.line, c.line) << e.Render();
      EXPECT_EQ(e.span().begin.col, c.col) << e.Render();
      EXPECT_NE(e.message().find(c.message), std::string::npos) << e.Render();
    }
  }
}

// Verify's rules are not the parser's: such a module parses, and
// sem::Problems names what is wrong.
TEST(SemParser, VerifyProblemsAreNotParseErrors) {
  Module m = ParseText(
      "kernel void k(global const float* p) index(f16) {\n  index i = 0;\n  index i = 1;\n  p[0] = 1.0f;\n}\n");
  std::vector<std::string> problems = Problems(m);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0], "k: index type f16 (want i32 or i64)");
  EXPECT_EQ(problems[1], "k: 'i' is declared twice in one scope");
  EXPECT_EQ(problems[2], "k: store through global const float* 'p'");
}

// Every prefix of valid text, and the text with any one character removed,
// parses or gives a UserError: nothing else escapes.
TEST(SemParser, DamagedTextGivesOnlyUserErrors) {
  std::string text = kAllConstructs;
  auto check = [](const std::string& t) {
    try {
      ParseText(t);
    } catch (const UserError&) {
    }
  };
  for (size_t n = 0; n <= text.size(); ++n) check(text.substr(0, n));
  for (size_t n = 0; n < text.size(); ++n) check(text.substr(0, n) + text.substr(n + 1));
}

TEST(SemParser, DeepNestingIsAnError) {
  std::string deep = std::string(100000, '(');
  EXPECT_THROW(ParseText("kernel void k() index(i32) {\n  index x = " + deep + ";\n}\n"), UserError);
  std::string blocks;
  for (int i = 0; i < 100000; ++i) blocks += "{\n";
  EXPECT_THROW(ParseText("kernel void k() index(i32) {\n" + blocks), UserError);
}

// --- The round trip over the kernels of every example ---

struct Example {
  std::string name;
  std::map<std::string, lang::Shape> shapes;
};

// The examples with the input shapes tests/e2e gives them (written by the
// build: tests/e2e/example_shapes.py).
std::vector<Example> Examples() {
  std::ifstream in(TILEC_EXAMPLE_SHAPES);
  std::vector<Example> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    Example e;
    words >> e.name;
    for (std::string arg; words >> arg;) {
      size_t eq = arg.find('=');
      e.shapes.emplace(arg.substr(0, eq), lang::ParseShape(arg.substr(eq + 1)));
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Each form the llvm device chooses (vector forms, and the flat form with
// --vector 0): the printed module parses back to the same text, and to a
// module the emitter turns into the same LLVM IR.
TEST(SemParser, EveryExampleRoundTrips) {
  std::shared_ptr<hal::Device> device = testing::PinnedDevice("llvm", testing::kAvx512Cpu);
  ASSERT_TRUE(device);
  std::vector<Example> examples = Examples();
  ASSERT_GE(examples.size(), 60u) << "no example shapes in " << TILEC_EXAMPLE_SHAPES;
  size_t kernels = 0;
  for (bool vectorize : {true, false}) {
    for (const Example& e : examples) {
      SCOPED_TRACE(fmt::format("{} (vectorize {})", e.name, vectorize));
      std::string path = std::string(TILEC_SOURCE_DIR) + "/examples/" + e.name + ".tile";
      std::ifstream file(path);
      std::string source((std::istreambuf_iterator<char>(file)), {});
      lang::Program bound = lang::Bind(lang::Parse(MakeSource(path, source)), e.shapes);
      compiler::CompileOptions options;
      options.vectorize = vectorize;
      runtime::Program program = runtime::Program::CompileOnly(bound, device, options);
      Module m = program.compiled().Module();
      std::string printed = Print(m);
      Module back = Parse(MakeSource(e.name + ".sem", printed));
      EXPECT_EQ(Print(back), printed);
      if (vectorize) {
        EXPECT_EQ(device->EmitCode(back), device->EmitCode(m));
      }
      kernels += m.functions.size();
    }
  }
  EXPECT_GE(kernels, 2 * examples.size());
}

}  // namespace
}  // namespace tilec::sem
