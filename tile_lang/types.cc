#include "tile_lang/types.h"

#include <fmt/format.h>

#include "support/error.h"

namespace tilec::lang {
namespace {
enum class Class { Bool, Signed, Unsigned, Float };
struct Info {
  std::string_view name;
  int bits;
  Class cls;
};
constexpr Info kInfo[] = {
#define TILEC_X(e, n, b, c) {n, b, Class::c},
    TILEC_DATA_TYPES(TILEC_X)
#undef TILEC_X
};
const Info& Get(DataType t) { return kInfo[static_cast<int>(t)]; }
}  // namespace

std::string_view Name(DataType t) { return Get(t).name; }

std::optional<DataType> ParseDataType(std::string_view name) {
  struct Alias {
    std::string_view name;
    DataType t;
  };
  static constexpr Alias kAliases[] = {
      {"boolean", DataType::Bool}, {"int8", DataType::I8},     {"int16", DataType::I16},
      {"int32", DataType::I32},    {"int64", DataType::I64},   {"uint8", DataType::U8},
      {"uint16", DataType::U16},   {"uint32", DataType::U32},  {"uint64", DataType::U64},
      {"float16", DataType::F16},  {"float32", DataType::F32}, {"float64", DataType::F64},
      {"half", DataType::F16},     {"float", DataType::F32},   {"double", DataType::F64},
  };
  for (int i = 0; i < static_cast<int>(std::size(kInfo)); ++i)
    if (kInfo[i].name == name) return static_cast<DataType>(i);
  for (const auto& a : kAliases)
    if (a.name == name) return a.t;
  return std::nullopt;
}

int BitWidth(DataType t) { return Get(t).bits; }
int ByteSize(DataType t) { return Get(t).bits / 8; }
bool IsFloat(DataType t) { return Get(t).cls == Class::Float; }
bool IsSigned(DataType t) { return Get(t).cls == Class::Signed; }
bool IsUnsigned(DataType t) { return Get(t).cls == Class::Unsigned; }
bool IsInteger(DataType t) { return IsSigned(t) || IsUnsigned(t); }

DataType Promote(DataType a, DataType b) {
  if (IsFloat(a) != IsFloat(b)) return IsFloat(a) ? a : b;
  if ((a == DataType::Bool) != (b == DataType::Bool)) return a == DataType::Bool ? b : a;
  return BitWidth(b) > BitWidth(a) ? b : a;
}

int64_t Shape::ElementCount() const {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) TILEC_USER_ERROR("negative dimension {} in shape {}", d, ToString(*this));
    if (d != 0 && n > INT64_MAX / d)
      TILEC_USER_ERROR("shape {} has more elements than fit in 64 bits", ToString(*this));
    n *= d;
  }
  return n;
}

std::string ToString(const Shape& s) {
  return fmt::format("{}[{}]", Name(s.dtype), fmt::join(s.dims, ", "));
}

}  // namespace tilec::lang
