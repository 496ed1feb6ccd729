// Element types and logical tensor shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::lang {

// X-macro: (enumerator, short name, bit width, class). Drives the enum, names
// and predicates, so a type is listed once.
#define TILEC_DATA_TYPES(X) \
  X(Bool, "bool", 8, Bool)  \
  X(I8, "i8", 8, Signed)    \
  X(I16, "i16", 16, Signed) \
  X(I32, "i32", 32, Signed) \
  X(I64, "i64", 64, Signed) \
  X(U8, "u8", 8, Unsigned)  \
  X(U16, "u16", 16, Unsigned) \
  X(U32, "u32", 32, Unsigned) \
  X(U64, "u64", 64, Unsigned) \
  X(F16, "f16", 16, Float)  \
  X(F32, "f32", 32, Float)  \
  X(F64, "f64", 64, Float)

enum class DataType : uint8_t {
#define TILEC_X(e, n, b, c) e,
  TILEC_DATA_TYPES(TILEC_X)
#undef TILEC_X
};

std::string_view Name(DataType t);                    // "f32"
std::optional<DataType> ParseDataType(std::string_view name);  // "f32", also "float32", "int8", …
int BitWidth(DataType t);                             // bool counts as 8 (stored as one byte)
int ByteSize(DataType t);
bool IsFloat(DataType t);
bool IsSigned(DataType t);    // signed integers only
bool IsUnsigned(DataType t);  // unsigned integers only
bool IsInteger(DataType t);   // signed or unsigned (not bool)

// PlaidML's upcast for the result type of an elementwise op over operands a, b:
// a float beats a non-float; otherwise the wider bit width wins; on a tie the
// first operand wins. (Bool loses to everything.)
DataType Promote(DataType a, DataType b);

// A logical shape: element type and dimensions (row-major logical order).
// Rank 0 is a scalar.
struct Shape {
  DataType dtype = DataType::F32;
  std::vector<int64_t> dims;

  int rank() const { return static_cast<int>(dims.size()); }
  // Number of elements; throws UserError if the product overflows int64.
  int64_t ElementCount() const;
  bool operator==(const Shape&) const = default;
};

// "f32[32, 224, 224, 64]", "i32[]".
std::string ToString(const Shape& s);

}  // namespace tilec::lang
