#include "runtime/npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "support/error.h"

namespace tilec::runtime {
namespace {

// Tensors keep elements in host order and the .npy data we accept and write is
// little-endian, so the bytes are copied as they are.
static_assert(std::endian::native == std::endian::little, "Tilec's .npy I/O assumes a little-endian host");

constexpr std::string_view kMagic("\x93NUMPY", 6);
constexpr size_t kAlign = 64;            // NumPy aligns the data to 64 bytes
constexpr size_t kGrowthDigits = 21;     // spare header room NumPy leaves for growing the shape
constexpr int kMaxLiteralDepth = 16;     // nesting limit of the header's Python literals

// Shows arbitrary header bytes in a message without control characters.
std::string Printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 64)) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (s.size() > 64) out += "...";
  return out;
}

uint32_t ReadLittle(std::string_view bytes, size_t pos, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[pos + i]);
  return v;
}

// A value of the Python literal subset that .npy headers use.
struct Value {
  enum class Kind { Str, Int, Bool, None, Tuple, List, Dict } kind = Kind::None;
  std::string str;
  int64_t i = 0;
  bool b = false;
  std::vector<Value> items;        // Tuple, List; Dict: the values
  std::vector<std::string> keys;   // Dict: the (string) key of each item
  // (Not a vector of pair<string, Value>: a pair needs a complete Value,
  // which clang with libstdc++ rejects here.)
};

// Recursive-descent parser of Python literals (as ast.literal_eval reads the
// header): strings without escapes, decimal integers, True/False/None, tuples,
// lists and a dict with string keys.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  Value ParseHeader() {
    SkipSpace();
    if (Peek() != '{') Fail("expected a dict starting with '{'");
    Value v = ParseValue(0);
    SkipSpace();
    if (pos_ != text_.size()) Fail(fmt::format("unexpected '{}' after the dict", Printable(text_.substr(pos_, 1))));
    return v;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    TILEC_USER_ERROR("{}: malformed header: {} at header offset {} in \"{}\"", file_, what, pos_,
                     Printable(text_));
  }

  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool AtEnd() const { return pos_ >= text_.size(); }

  void SkipSpace() {
    while (!AtEnd() && std::strchr(" \t\n\r\f\v", text_[pos_]) != nullptr && text_[pos_] != '\0') ++pos_;
  }

  void Expect(char c) {
    SkipSpace();
    if (Peek() != c || AtEnd()) Fail(fmt::format("expected '{}'", c));
    ++pos_;
  }

  Value ParseValue(int depth) {
    if (depth > kMaxLiteralDepth) Fail("literal nested too deeply");
    SkipSpace();
    if (AtEnd()) Fail("unexpected end of header");
    char c = Peek();
    if (c == '\'' || c == '"') return ParseString();
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return ParseInt();
    if (c == '(') return ParseSequence(depth, ')', Value::Kind::Tuple);
    if (c == '[') return ParseSequence(depth, ']', Value::Kind::List);
    if (c == '{') return ParseDict(depth);
    if (IsNameChar(c)) return ParseKeyword();
    Fail(fmt::format("unexpected '{}'", Printable(text_.substr(pos_, 1))));
  }

  static bool IsNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }

  Value ParseKeyword() {
    size_t begin = pos_;
    while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
    std::string_view word = text_.substr(begin, pos_ - begin);
    Value v;
    if (word == "True" || word == "False") {
      v.kind = Value::Kind::Bool;
      v.b = word == "True";
    } else if (word == "None") {
      v.kind = Value::Kind::None;
    } else {
      pos_ = begin;
      Fail(fmt::format("unknown name '{}'", Printable(word)));
    }
    return v;
  }

  Value ParseString() {
    char quote = text_[pos_++];
    size_t begin = pos_;
    while (!AtEnd() && text_[pos_] != quote) {
      // Real headers never need escapes; refusing them keeps the parser exact.
      if (text_[pos_] == '\\') Fail("escape sequences in strings are not supported");
      if (text_[pos_] == '\n') Fail("newline inside a string");
      ++pos_;
    }
    if (AtEnd()) Fail("unterminated string");
    Value v;
    v.kind = Value::Kind::Str;
    v.str = std::string(text_.substr(begin, pos_ - begin));
    ++pos_;
    return v;
  }

  Value ParseInt() {
    bool negative = false;
    if (Peek() == '-' || Peek() == '+') {
      negative = Peek() == '-';
      ++pos_;
      SkipSpace();
    }
    if (!(Peek() >= '0' && Peek() <= '9') || AtEnd()) Fail("expected a digit");
    uint64_t magnitude = 0;
    size_t begin = pos_;
    while (!AtEnd() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (magnitude > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10) {
        TILEC_USER_ERROR("{}: shape is too large: number {}... in the header does not fit in 64 bits", file_,
                         Printable(text_.substr(begin, 24)));
      }
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    // Python 2 wrote longs as `3L`; NumPy still reads such version 1.0 files.
    if (!AtEnd() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;
    if (!AtEnd() && IsNameChar(text_[pos_])) Fail("malformed number");
    Value v;
    v.kind = Value::Kind::Int;
    v.i = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return v;
  }

  // `(`/`[` items `)`/`]`. In Python `(x)` is just x, `(x,)` a 1-tuple.
  Value ParseSequence(int depth, char close, Value::Kind kind) {
    ++pos_;
    Value v;
    v.kind = kind;
    bool saw_comma = false;
    SkipSpace();
    while (Peek() != close || AtEnd()) {
      v.items.push_back(ParseValue(depth + 1));
      SkipSpace();
      if (Peek() == ',' && !AtEnd()) {
        saw_comma = true;
        ++pos_;
        SkipSpace();
      } else if (Peek() != close || AtEnd()) {
        Fail(fmt::format("expected ',' or '{}'", close));
      }
    }
    ++pos_;
    if (kind == Value::Kind::Tuple && v.items.size() == 1 && !saw_comma) {
      Value inner = std::move(v.items[0]);
      return inner;
    }
    return v;
  }

  Value ParseDict(int depth) {
    ++pos_;
    Value v;
    v.kind = Value::Kind::Dict;
    SkipSpace();
    while (Peek() != '}' || AtEnd()) {
      if (Peek() != '\'' && Peek() != '"') Fail("expected a string key");
      std::string key = ParseString().str;
      for (const std::string& k : v.keys)
        if (k == key) Fail(fmt::format("duplicate key '{}'", Printable(key)));
      Expect(':');
      v.items.push_back(ParseValue(depth + 1));
      v.keys.push_back(std::move(key));
      SkipSpace();
      if (Peek() == ',' && !AtEnd()) {
        ++pos_;
        SkipSpace();
      } else if (Peek() != '}' || AtEnd()) {
        Fail("expected ',' or '}'");
      }
    }
    ++pos_;
    return v;
  }

  std::string_view text_;
  const std::string& file_;
  size_t pos_ = 0;
};

struct DtypeInfo {
  std::string_view descr;  // canonical spelling, as written
  lang::DataType dtype;
};
constexpr DtypeInfo kDtypes[] = {
    {"|b1", lang::DataType::Bool}, {"|i1", lang::DataType::I8},  {"<i2", lang::DataType::I16},
    {"<i4", lang::DataType::I32},  {"<i8", lang::DataType::I64}, {"|u1", lang::DataType::U8},
    {"<u2", lang::DataType::U16},  {"<u4", lang::DataType::U32}, {"<u8", lang::DataType::U64},
    {"<f2", lang::DataType::F16},  {"<f4", lang::DataType::F32}, {"<f8", lang::DataType::F64},
};

std::string_view KindName(char kind) {
  switch (kind) {
    case 'c': return " (complex)";
    case 'O': return " (Python objects)";
    case 'S': case 'a': case 'U': return " (strings)";
    case 'V': return " (structured or void)";
    case 'M': case 'm': return " (datetime)";
    default: return "";
  }
}

lang::DataType ParseDescr(const std::string& descr, const std::string& file) {
  std::string_view d = descr;
  char order = '|';
  if (!d.empty() && std::strchr("<>|=", d[0]) != nullptr && d[0] != '\0') {
    order = d[0];
    d.remove_prefix(1);
  }
  for (const auto& info : kDtypes) {
    if (info.descr.substr(1) != d) continue;
    if (order == '>' && lang::ByteSize(info.dtype) > 1) {
      TILEC_USER_ERROR("{}: big-endian arrays are not supported (dtype '{}'); save with arr.astype('<{}')",
                       file, Printable(descr), d);
    }
    return info.dtype;
  }
  TILEC_USER_ERROR(
      "{}: unsupported dtype '{}'{}; supported: bool, int8/16/32/64, uint8/16/32/64, float16/32/64",
      file, Printable(descr), d.empty() ? "" : KindName(d[0]));
}

std::string ShapeText(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return fmt::format("({},)", dims[0]);
  return fmt::format("({})", fmt::join(dims, ", "));
}

lang::Shape ParseHeaderDict(const Value& dict, const std::string& file) {
  const Value* descr = nullptr;
  const Value* fortran = nullptr;
  const Value* shape = nullptr;
  for (size_t k = 0; k < dict.keys.size(); ++k) {
    const std::string& key = dict.keys[k];
    const Value& value = dict.items[k];
    if (key == "descr") {
      descr = &value;
    } else if (key == "fortran_order") {
      fortran = &value;
    } else if (key == "shape") {
      shape = &value;
    } else {
      TILEC_USER_ERROR("{}: malformed header: unexpected key '{}' (expected 'descr', 'fortran_order', 'shape')",
                       file, Printable(key));
    }
  }
  if (!descr || !fortran || !shape) {
    TILEC_USER_ERROR("{}: malformed header: missing key '{}'", file,
                     !descr ? "descr" : !fortran ? "fortran_order" : "shape");
  }
  if (fortran->kind != Value::Kind::Bool)
    TILEC_USER_ERROR("{}: malformed header: 'fortran_order' must be True or False", file);
  if (shape->kind != Value::Kind::Tuple)
    TILEC_USER_ERROR("{}: malformed header: 'shape' must be a tuple of integers", file);
  if (descr->kind == Value::Kind::List)
    TILEC_USER_ERROR("{}: unsupported dtype: structured arrays are not supported", file);
  if (descr->kind != Value::Kind::Str)
    TILEC_USER_ERROR("{}: malformed header: 'descr' must be a string", file);

  lang::Shape result;
  result.dtype = ParseDescr(descr->str, file);
  for (const Value& d : shape->items) {
    if (d.kind != Value::Kind::Int)
      TILEC_USER_ERROR("{}: malformed header: 'shape' must be a tuple of integers", file);
    if (d.i < 0) TILEC_USER_ERROR("{}: malformed header: negative dimension {} in 'shape'", file, d.i);
    result.dims.push_back(d.i);
  }
  if (fortran->b && result.dims.size() > 1) {
    // Rank 0 and 1 arrays are the same in either order; NumPy marks them C order anyway.
    TILEC_USER_ERROR("{}: Fortran-order arrays are not supported; save with np.ascontiguousarray", file);
  }
  return result;
}

// Byte size of `s`'s data, or nullopt if it does not fit in int64.
std::optional<int64_t> DataBytes(const lang::Shape& s) {
  int64_t n = lang::ByteSize(s.dtype);
  for (int64_t d : s.dims) {
    if (d == 0) return 0;
  }
  for (int64_t d : s.dims) {
    if (n > std::numeric_limits<int64_t>::max() / d) return std::nullopt;
    n *= d;
  }
  return n;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace

lang::Tensor ParseNpy(std::string_view bytes, const std::string& name) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic)
    TILEC_USER_ERROR("{}: not a NumPy .npy file (it does not start with \"\\x93NUMPY\")", name);
  if (bytes.size() < 8) TILEC_USER_ERROR("{}: truncated header: file ends inside the format version", name);
  int major = static_cast<unsigned char>(bytes[6]);
  int minor = static_cast<unsigned char>(bytes[7]);
  if (minor != 0 || major < 1 || major > 3)
    TILEC_USER_ERROR("{}: unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)", name, major, minor);
  int len_bytes = major == 1 ? 2 : 4;
  size_t prefix = 8 + len_bytes;
  if (bytes.size() < prefix)
    TILEC_USER_ERROR("{}: truncated header: file ends inside the header length", name);
  size_t header_len = ReadLittle(bytes, 8, len_bytes);
  if (bytes.size() - prefix < header_len) {
    TILEC_USER_ERROR("{}: truncated header: file ends after {} of {} header bytes", name, bytes.size() - prefix,
                     header_len);
  }
  // Versions 1.0 and 2.0 are latin-1, 3.0 UTF-8; a valid header is ASCII
  // outside strings either way, and no accepted dtype contains other bytes.
  std::string_view header = bytes.substr(prefix, header_len);
  lang::Shape shape = ParseHeaderDict(HeaderParser(header, name).ParseHeader(), name);

  std::optional<int64_t> need = DataBytes(shape);
  if (!need) TILEC_USER_ERROR("{}: shape {} is too large", name, ShapeText(shape.dims));
  size_t data_offset = prefix + header_len;
  uint64_t have = bytes.size() - data_offset;
  if (have < static_cast<uint64_t>(*need))
    TILEC_USER_ERROR("{}: file ends after {} of {} data bytes", name, have, *need);
  if (have > static_cast<uint64_t>(*need)) {
    TILEC_USER_ERROR("{}: trailing garbage: {} bytes after the {} data bytes of shape {}", name,
                     have - static_cast<uint64_t>(*need), *need, ShapeText(shape.dims));
  }

  lang::Tensor t(shape);
  TILEC_CHECK(t.bytes() == static_cast<size_t>(*need), "tensor of {} has {} bytes, expected {}",
              lang::ToString(shape), t.bytes(), *need);
  if (*need > 0) std::memcpy(t.data(), bytes.data() + data_offset, t.bytes());
  if (shape.dtype == lang::DataType::Bool) {
    for (size_t i = 0; i < t.bytes(); ++i) t.data()[i] = t.data()[i] != std::byte{0} ? std::byte{1} : std::byte{0};
  }
  return t;
}

lang::Tensor ReadNpy(const std::string& path) {
  errno = 0;
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) TILEC_USER_ERROR("cannot open '{}': {}", path, std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    size_t n = std::fread(buf, 1, sizeof buf, f.get());
    bytes.append(buf, n);
    if (n < sizeof buf) break;
  }
  if (std::ferror(f.get())) TILEC_USER_ERROR("cannot read '{}': {}", path, std::strerror(errno));
  return ParseNpy(bytes, path);
}

std::string SerializeNpy(const lang::Tensor& t) {
  std::string_view descr;
  for (const auto& info : kDtypes)
    if (info.dtype == t.dtype()) descr = info.descr;
  TILEC_CHECK(!descr.empty(), "no .npy dtype for {}", lang::Name(t.dtype()));
  const std::vector<int64_t>& dims = t.shape().dims;

  // Same text and padding as NumPy's np.save, so files compare byte for byte.
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, ShapeText(dims));
  if (!dims.empty()) dict.append(kGrowthDigits - std::min(kGrowthDigits, fmt::formatted_size("{}", dims[0])), ' ');
  int major = 1;
  size_t prefix = 10;
  size_t padded = dict.size() + 1;
  padded += kAlign - (prefix + padded) % kAlign;
  if (padded > 0xffff) {
    major = 2;
    prefix = 12;
    padded = dict.size() + 1;
    padded += kAlign - (prefix + padded) % kAlign;
  }
  dict.append(padded - dict.size() - 1, ' ');
  dict += '\n';

  std::string out;
  out.reserve(prefix + dict.size() + t.bytes());
  out += kMagic;
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  out += dict;
  out.append(reinterpret_cast<const char*>(t.data()), t.bytes());
  return out;
}

void WriteNpy(const std::string& path, const lang::Tensor& t) {
  std::string bytes = SerializeNpy(t);
  errno = 0;
  FilePtr f(std::fopen(path.c_str(), "wb"));
  if (!f) TILEC_USER_ERROR("cannot write '{}': {}", path, std::strerror(errno));
  if (std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())
    TILEC_USER_ERROR("cannot write '{}': {}", path, std::strerror(errno));
  // fclose flushes; a full disk may only show up here.
  if (std::fclose(f.release()) != 0) TILEC_USER_ERROR("cannot write '{}': {}", path, std::strerror(errno));
}

}  // namespace tilec::runtime
