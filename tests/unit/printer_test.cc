#include "tile_lang/printer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/error.h"
#include "tile_lang/parser.h"

namespace tilec::lang {
namespace {

using namespace ast;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::filesystem::path> TileFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(dir)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".tile") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Parse(Print(f)) == f and Print is a fixed point on its own output.
void CheckRoundTrip(const std::filesystem::path& path) {
  SCOPED_TRACE(path.string());
  Function f;
  try {
    f = Parse(MakeSource(path.string(), ReadFile(path)));
  } catch (const UserError& e) {
    FAIL() << e.Render();
  }
  std::string printed = Print(f);
  Function g;
  try {
    g = Parse(MakeSource("printed", printed));
  } catch (const UserError& e) {
    FAIL() << "printed text does not parse:\n" << printed << "\n" << e.Render();
  }
  EXPECT_TRUE(Equal(f, g)) << printed;
  EXPECT_EQ(Print(g), printed);
}

TEST(PrinterTest, RoundTripsTestData) {
  auto files = TileFiles(std::filesystem::path(TILEC_SOURCE_DIR) / "tests/data/parse");
  ASSERT_GE(files.size(), 10u) << "tests/data/parse is missing";
  for (const auto& path : files) CheckRoundTrip(path);
}

TEST(PrinterTest, RoundTripsExamples) {
  // Other engineers add examples concurrently; every one must round-trip.
  for (const auto& path : TileFiles(std::filesystem::path(TILEC_SOURCE_DIR) / "examples")) {
    CheckRoundTrip(path);
  }
}

TEST(PrinterTest, CanonicalLayout) {
  Function f = Parse(MakeSource("t", "function(A[M,K],B,C[])->(D,E){[[pid(x)]]D[i:M]=+(A[i,k]*B[k]),k<2 "
                                     "no_defract default C;E=D;}"));
  EXPECT_EQ(Print(f),
            "function (A[M, K], B, C[]) -> (D, E) {\n"
            "  [[pid(x)]] D[i : M] = +(A[i, k] * B[k]), k < 2 no_defract default C;\n"
            "  E = D;\n"
            "}\n");
  EXPECT_EQ(Print(Parse(MakeSource("t", "function () -> (O) { O[:] = +(I[]); O[] = =(I[] == J[] ? K[]); }"))),
            "function () -> (O) {\n  O[:] = +(I[]);\n  O[] = =(I[] == J[] ? K[]);\n}\n");
}

ExprPtr N(const std::string& name) { return MakeName(name, NameClass::Index); }

TEST(PrinterTest, MinimalParentheses) {
  auto bin = [](BinaryOp op, ExprPtr a, ExprPtr b) { return MakeBinary(op, a, b); };
  auto a = N("a"), b = N("b"), c = N("c"), d = N("d");
  EXPECT_EQ(Print(*bin(BinaryOp::Sub, bin(BinaryOp::Sub, a, b), c)), "a - b - c");
  EXPECT_EQ(Print(*bin(BinaryOp::Sub, a, bin(BinaryOp::Sub, b, c))), "a - (b - c)");
  EXPECT_EQ(Print(*bin(BinaryOp::Mul, bin(BinaryOp::Add, a, b), c)), "(a + b) * c");
  EXPECT_EQ(Print(*bin(BinaryOp::BitOr, bin(BinaryOp::BitXor, a, b), c)), "(a ^ b) | c");
  EXPECT_EQ(Print(*bin(BinaryOp::BitXor, bin(BinaryOp::BitOr, a, b), c)), "a | b ^ c");
  EXPECT_EQ(Print(*bin(BinaryOp::Lt, bin(BinaryOp::Lt, a, b), c)), "(a < b) < c");
  EXPECT_EQ(Print(*bin(BinaryOp::Lt, a, bin(BinaryOp::Gt, b, c))), "a < (b > c)");
  EXPECT_EQ(Print(*bin(BinaryOp::Eq, bin(BinaryOp::Lt, a, b), c)), "a < b == c");
  EXPECT_EQ(Print(*bin(BinaryOp::Shl, a, bin(BinaryOp::Add, b, c))), "a << b + c");
  EXPECT_EQ(Print(*bin(BinaryOp::Add, a, bin(BinaryOp::Shl, b, c))), "a + (b << c)");
  // ?: is left-associative and loosest.
  EXPECT_EQ(Print(*MakeTernary(MakeTernary(a, b, c), d, a)), "a ? b : c ? d : a");
  EXPECT_EQ(Print(*MakeTernary(a, b, MakeTernary(c, d, a))), "a ? b : (c ? d : a)");
  EXPECT_EQ(Print(*MakeTernary(a, MakeTernary(b, c, d), a)), "a ? b ? c : d : a");
  EXPECT_EQ(Print(*bin(BinaryOp::Add, MakeTernary(a, b, c), d)), "(a ? b : c) + d");
  EXPECT_EQ(Print(*bin(BinaryOp::LogicalOr, a, MakeTernary(a, b, c))), "a || (a ? b : c)");
  EXPECT_EQ(Print(*MakeCall("max", {MakeTernary(a, b, c), d})), "max(a ? b : c, d)");
  // Unary operators and the literal folding.
  EXPECT_EQ(Print(*MakeUnary(UnaryOp::Neg, bin(BinaryOp::Add, a, b))), "-(a + b)");
  EXPECT_EQ(Print(*MakeUnary(UnaryOp::Neg, MakeInt(1))), "-(1)");
  EXPECT_EQ(Print(*MakeUnary(UnaryOp::Neg, MakeInt(-1))), "- -1");
  EXPECT_EQ(Print(*MakeUnary(UnaryOp::Neg, MakeUnary(UnaryOp::Neg, a))), "- -a");
  EXPECT_EQ(Print(*MakeUnary(UnaryOp::BitNot, MakeUnary(UnaryOp::Neg, a))), "~-a");
  EXPECT_EQ(Print(*MakeUnary(UnaryOp::BitNot, MakeInt(1))), "~1");
  EXPECT_EQ(Print(*MakeUnary(UnaryOp::LogicalNot, MakeUnary(UnaryOp::BitNot, a))), "!~a");
  EXPECT_EQ(Print(*bin(BinaryOp::Sub, a, MakeInt(-1))), "a - -1");
  EXPECT_EQ(Print(*bin(BinaryOp::Mul, MakeInt(std::numeric_limits<int64_t>::min()), a)),
            "-9223372036854775808 * a");
}

TEST(PrinterTest, FloatLiterals) {
  EXPECT_EQ(Print(*MakeFloat(1.0)), "1.0");
  EXPECT_EQ(Print(*MakeFloat(100000.0)), "100000.0");
  EXPECT_EQ(Print(*MakeFloat(1e20)), "1e+20");
  EXPECT_EQ(Print(*MakeFloat(0.1)), "0.1");
  EXPECT_EQ(Print(*MakeFloat(-0.0)), "-0.0");
  EXPECT_EQ(Print(*MakeFloat(-2.5)), "-2.5");
  EXPECT_EQ(Print(*MakeFloat(1.5e-7)), "1.5e-07");
  EXPECT_EQ(Print(*MakeFloat(5e-324)), "5e-324");
  EXPECT_THROW(Print(*MakeFloat(std::numeric_limits<double>::infinity())), InternalError);
  EXPECT_THROW(Print(*MakeFloat(std::nan(""))), InternalError);
}

TEST(PrinterTest, NameEscapes) {
  EXPECT_EQ(Print(*MakeName("X", NameClass::Tensor)), "X");
  EXPECT_EQ(Print(*MakeName("x", NameClass::Tensor)), "#x");
  EXPECT_EQ(Print(*MakeName("_T0", NameClass::Tensor)), "#_T0");
  EXPECT_EQ(Print(*MakeName("x'", NameClass::Index)), "x'");
  EXPECT_EQ(Print(*MakeName("X", NameClass::Index)), "$X");
  EXPECT_EQ(Print(*MakeName("0x", NameClass::Index)), "$0x");
  EXPECT_EQ(Print(*MakeName("default", NameClass::Index)), "$default");
  EXPECT_EQ(Print(*MakeName("no_defract", NameClass::Index)), "$no_defract");
  EXPECT_EQ(Print(*MakeCall("Foo", {N("a")})), "Foo(a)");
  EXPECT_EQ(Print(*MakeCall("function", {N("a")})), "$function(a)");
  EXPECT_EQ(Print(*MakeCall("_f", {N("a")})), "$_f(a)");
  EXPECT_THROW(Print(*MakeName("a b", NameClass::Index)), InternalError);
  EXPECT_THROW(Print(*MakeName("a'b", NameClass::Tensor)), InternalError);
}

// Random trees over every node kind: printing then parsing gives the tree back.
class RandomExprs {
 public:
  explicit RandomExprs(uint32_t seed) : rng_(seed) {}

  ExprPtr Make(int depth) {
    int kind = Pick(depth <= 0 ? 3 : 7);
    switch (kind) {
      case 0: {
        static const int64_t kInts[] = {0, 1, -1, 7, -42, std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::min()};
        return MakeInt(kInts[Pick(7)]);
      }
      case 1: {
        static const double kFloats[] = {0.0, -0.0, 1.0, -2.5, 0.1, 1e20, -1e-300, 5e-324, 123456.789};
        if (Pick(2)) return MakeFloat(kFloats[Pick(9)]);
        return MakeFloat(std::uniform_real_distribution<double>(-1e6, 1e6)(rng_));
      }
      case 2: {
        static const char* kNames[] = {"a", "B", "x'", "T'", "default", "_t", "9z", "function", "Q_1"};
        return MakeName(kNames[Pick(9)], Pick(2) ? NameClass::Tensor : NameClass::Index);
      }
      case 3: return MakeUnary(static_cast<UnaryOp>(Pick(3)), Make(depth - 1));
      case 4: return MakeBinary(static_cast<BinaryOp>(Pick(18)), Make(depth - 1), Make(depth - 1));
      case 5: return MakeTernary(Make(depth - 1), Make(depth - 1), Make(depth - 1));
      default: {
        static const char* kFns[] = {"exp", "Foo", "default", "_g"};
        std::vector<ExprPtr> args;
        for (int i = 0, n = 1 + Pick(3); i < n; ++i) args.push_back(Make(depth - 1));
        return MakeCall(kFns[Pick(4)], std::move(args));
      }
    }
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  std::mt19937 rng_;
};

TEST(PrinterTest, RandomExpressionsRoundTrip) {
  RandomExprs gen(12345);
  for (int i = 0; i < 5000; ++i) {
    ExprPtr e = gen.Make(1 + i % 6);
    std::string text = Print(*e);
    ExprPtr back;
    try {
      back = ParseExpr(MakeSource("e", text));
    } catch (const UserError& err) {
      FAIL() << text << "\n" << err.Render();
    }
    ASSERT_TRUE(Equal(*e, *back)) << text << "\nreprinted: " << Print(*back);
  }
}

TEST(PrinterTest, EqualIgnoresSpansButNotStructure) {
  auto p = [](const std::string& t) { return ParseExpr(MakeSource("e", t)); };
  EXPECT_TRUE(Equal(*p("a+b"), *p("  a  +  b ")));
  EXPECT_FALSE(Equal(*p("a+b"), *p("a-b")));
  EXPECT_FALSE(Equal(*p("a"), *p("#a")));
  EXPECT_FALSE(Equal(*p("0.0"), *p("-0.0")));
  EXPECT_FALSE(Equal(*p("-1"), *p("-(1)")));
  auto f = [](const std::string& t) { return Parse(MakeSource("t", t)); };
  EXPECT_TRUE(Equal(f("function (A) -> (B) { B = A; }"), f("function(A)->(B){\nB=A;;}")));
  EXPECT_FALSE(Equal(f("function (A) -> (B) { B = A; }"), f("function (A[]) -> (B) { B = A; }")));
  EXPECT_FALSE(Equal(f("function () -> (B) { B[:] = +(A[]); }"), f("function () -> (B) { B[] = +(A[]); }")));
  EXPECT_FALSE(Equal(f("function () -> (B) { B[i] = +(A[i]) no_defract; }"),
                     f("function () -> (B) { B[i] = +(A[i]); }")));
  EXPECT_FALSE(Equal(f("function () -> (B) { [[a(b)]] B = A; }"), f("function () -> (B) { [[a(c)]] B = A; }")));
}

}  // namespace
}  // namespace tilec::lang
