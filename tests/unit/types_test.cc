// Element types (tile_lang/types.cc) and shape specs (ParseShape in binder.cc).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/types.h"

namespace tilec::lang {
namespace {

using DT = DataType;

TEST(Promote, FloatBeatsNonFloat) {
  EXPECT_EQ(Promote(DT::I64, DT::F16), DT::F16);
  EXPECT_EQ(Promote(DT::F16, DT::I64), DT::F16);
  EXPECT_EQ(Promote(DT::U8, DT::F32), DT::F32);
  EXPECT_EQ(Promote(DT::Bool, DT::F64), DT::F64);
}

TEST(Promote, WiderWinsFirstOnTie) {
  EXPECT_EQ(Promote(DT::I8, DT::I32), DT::I32);
  EXPECT_EQ(Promote(DT::I32, DT::I8), DT::I32);
  EXPECT_EQ(Promote(DT::F16, DT::F64), DT::F64);
  EXPECT_EQ(Promote(DT::F64, DT::F32), DT::F64);
  EXPECT_EQ(Promote(DT::I32, DT::U32), DT::I32);
  EXPECT_EQ(Promote(DT::U32, DT::I32), DT::U32);
  EXPECT_EQ(Promote(DT::U8, DT::I16), DT::I16);
  EXPECT_EQ(Promote(DT::U64, DT::I32), DT::U64);
}

TEST(Promote, BoolLosesToEverything) {
  EXPECT_EQ(Promote(DT::Bool, DT::I8), DT::I8);
  EXPECT_EQ(Promote(DT::I8, DT::Bool), DT::I8);
  EXPECT_EQ(Promote(DT::Bool, DT::U8), DT::U8);
  EXPECT_EQ(Promote(DT::Bool, DT::Bool), DT::Bool);
}

// The whole table agrees with the rule stated in types.h.
TEST(Promote, FullTableMatchesRule) {
  const DT all[] = {DT::Bool, DT::I8,  DT::I16, DT::I32, DT::I64, DT::U8,
                    DT::U16,  DT::U32, DT::U64, DT::F16, DT::F32, DT::F64};
  for (DT a : all) {
    for (DT b : all) {
      DT expected;
      if (IsFloat(a) != IsFloat(b)) {
        expected = IsFloat(a) ? a : b;
      } else if ((a == DT::Bool) != (b == DT::Bool)) {
        expected = a == DT::Bool ? b : a;
      } else {
        expected = BitWidth(b) > BitWidth(a) ? b : a;
      }
      EXPECT_EQ(Promote(a, b), expected) << Name(a) << " " << Name(b);
    }
  }
}

TEST(DataType, NamesAndPredicates) {
  EXPECT_EQ(Name(DT::F32), "f32");
  EXPECT_EQ(Name(DT::Bool), "bool");
  EXPECT_EQ(Name(DT::U16), "u16");
  EXPECT_EQ(BitWidth(DT::Bool), 8);
  EXPECT_EQ(ByteSize(DT::F64), 8);
  EXPECT_EQ(ByteSize(DT::F16), 2);
  EXPECT_TRUE(IsFloat(DT::F16));
  EXPECT_FALSE(IsFloat(DT::I64));
  EXPECT_TRUE(IsSigned(DT::I8));
  EXPECT_FALSE(IsSigned(DT::U8));
  EXPECT_TRUE(IsUnsigned(DT::U64));
  EXPECT_FALSE(IsInteger(DT::Bool));
  EXPECT_TRUE(IsInteger(DT::U32));
  EXPECT_FALSE(IsInteger(DT::F32));
}

TEST(DataType, Parse) {
  EXPECT_EQ(ParseDataType("f32"), DT::F32);
  EXPECT_EQ(ParseDataType("i8"), DT::I8);
  EXPECT_EQ(ParseDataType("bool"), DT::Bool);
  EXPECT_EQ(ParseDataType("float32"), DT::F32);
  EXPECT_EQ(ParseDataType("int64"), DT::I64);
  EXPECT_EQ(ParseDataType("uint8"), DT::U8);
  EXPECT_EQ(ParseDataType("boolean"), DT::Bool);
  EXPECT_EQ(ParseDataType("half"), DT::F16);
  EXPECT_EQ(ParseDataType("double"), DT::F64);
  EXPECT_EQ(ParseDataType("f31"), std::nullopt);
  EXPECT_EQ(ParseDataType(""), std::nullopt);
  EXPECT_EQ(ParseDataType("F32"), std::nullopt);
  // Every short name round-trips.
  for (int k = 0; k <= static_cast<int>(DT::F64); ++k) {
    DT t = static_cast<DT>(k);
    EXPECT_EQ(ParseDataType(Name(t)), t);
  }
}

TEST(Shape, ElementCountAndToString) {
  Shape s{DT::F32, {2, 3, 4}};
  EXPECT_EQ(s.ElementCount(), 24);
  EXPECT_EQ(s.rank(), 3);
  EXPECT_EQ(ToString(s), "f32[2, 3, 4]");
  EXPECT_EQ(ToString(Shape{DT::I32, {}}), "i32[]");
  EXPECT_EQ((Shape{DT::I32, {}}).ElementCount(), 1);
  EXPECT_EQ((Shape{DT::I32, {5, 0}}).ElementCount(), 0);
  EXPECT_THROW((Shape{DT::F32, {INT64_MAX, 2}}).ElementCount(), UserError);
  EXPECT_THROW((Shape{DT::F32, {-1}}).ElementCount(), UserError);
}

TEST(ParseShape, Basic) {
  EXPECT_EQ(ParseShape("f32[32, 224, 224, 64]"), (Shape{DT::F32, {32, 224, 224, 64}}));
  EXPECT_EQ(ParseShape("f32[]"), (Shape{DT::F32, {}}));
  EXPECT_EQ(ParseShape("u8[7]"), (Shape{DT::U8, {7}}));
  EXPECT_EQ(ParseShape("float16[1,2]"), (Shape{DT::F16, {1, 2}}));
  EXPECT_EQ(ParseShape("bool[0, 3]"), (Shape{DT::Bool, {0, 3}}));
}

TEST(ParseShape, WhitespaceTolerant) {
  EXPECT_EQ(ParseShape("  i32 [ 3 ,4 ]  "), (Shape{DT::I32, {3, 4}}));
  EXPECT_EQ(ParseShape("f64[ ]"), (Shape{DT::F64, {}}));
  EXPECT_EQ(ParseShape("\tf32[\n2]"), (Shape{DT::F32, {2}}));
}

std::string ShapeError(std::string_view spec) {
  try {
    ParseShape(spec);
  } catch (const UserError& e) {
    return e.message();
  }
  return "no error";
}

TEST(ParseShape, ErrorsNameTheSpec) {
  EXPECT_NE(ShapeError("f31[2]").find("'f31[2]'"), std::string::npos);
  EXPECT_NE(ShapeError("f31[2]").find("unknown element type 'f31'"), std::string::npos);
  EXPECT_NE(ShapeError("f32").find("expected '['"), std::string::npos);
  EXPECT_NE(ShapeError("f32[2, ]").find("'f32[2, ]'"), std::string::npos);
  EXPECT_NE(ShapeError("f32[2 3]").find("expected ',' or ']'"), std::string::npos);
  EXPECT_NE(ShapeError("f32[-2]").find("non-negative"), std::string::npos);
  EXPECT_NE(ShapeError("f32[2]x").find("unexpected text after ']'"), std::string::npos);
  EXPECT_NE(ShapeError("").find("missing element type"), std::string::npos);
  EXPECT_NE(ShapeError("[2]").find("missing element type"), std::string::npos);
  EXPECT_NE(ShapeError("f32[2").find("expected ',' or ']'"), std::string::npos);
  EXPECT_NE(ShapeError("f32[99999999999999999999]").find("64 bits"), std::string::npos);
  EXPECT_NE(ShapeError("f32[4294967296, 4294967296]").find("element count"), std::string::npos);
  EXPECT_NE(ShapeError("f32[2.5]").find("expected ',' or ']'"), std::string::npos);
}

}  // namespace
}  // namespace tilec::lang
