// Tests of .npy reading and writing (runtime/npy.h).
#include "runtime/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "support/error.h"

namespace tilec::runtime {
namespace {

using lang::DataType;
using lang::Shape;
using lang::Tensor;

constexpr DataType kAllTypes[] = {DataType::Bool, DataType::I8,  DataType::I16, DataType::I32,
                                  DataType::I64,  DataType::U8,  DataType::U16, DataType::U32,
                                  DataType::U64,  DataType::F16, DataType::F32, DataType::F64};

// A .npy file of format `major`.0 with the given header text and data bytes.
std::string MakeNpy(int major, std::string_view header, std::string_view data = {}) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  out += data;
  return out;
}

std::string Bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s += static_cast<char>(v);
  return s;
}

// The rendered UserError ParseNpy throws for `bytes`, or "" if it succeeds.
std::string ParseError(std::string_view bytes) {
  try {
    ParseNpy(bytes, "in.npy");
  } catch (const UserError& e) {
    return e.Render();
  }
  return "";
}

#define EXPECT_NPY_ERROR(bytes, fragment)                                  \
  do {                                                                     \
    std::string msg_ = ParseError(bytes);                                  \
    EXPECT_NE(msg_.find("in.npy"), std::string::npos) << msg_;             \
    EXPECT_NE(msg_.find(fragment), std::string::npos) << "message: " << msg_; \
  } while (0)

void ExpectSameTensor(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.bytes(), b.bytes());
  if (a.bytes() > 0) {
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.bytes()), 0);
  }
}

TEST(Npy, RoundTripEveryDtypeAndRank) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {2, 3}, {2, 1, 3}, {1, 2, 3, 2}, {0, 3}};
  uint64_t seed = 7;
  for (DataType dt : kAllTypes) {
    for (const auto& dims : shapes) {
      SCOPED_TRACE(lang::ToString(Shape{dt, dims}));
      Tensor t(Shape{dt, dims});
      lang::FillRandom(t, ++seed);
      std::string bytes = SerializeNpy(t);
      // Version 1.0, data aligned to 64 bytes, header ending in a newline.
      ASSERT_GE(bytes.size(), 10u);
      EXPECT_EQ(bytes[6], '\x01');
      size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
      EXPECT_EQ((10 + header_len) % 64, 0u);
      EXPECT_EQ(bytes[10 + header_len - 1], '\n');
      EXPECT_EQ(bytes.size(), 10 + header_len + t.bytes());
      ExpectSameTensor(ParseNpy(bytes, "t.npy"), t);
    }
  }
}

TEST(Npy, WritesExactlyWhatNumPyWrites) {
  // np.save of np.zeros((3, 4), np.float32) with NumPy 1.24.
  Tensor t(Shape{DataType::F32, {3, 4}});
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
  header += std::string(128 - 10 - 1 - header.size(), ' ') + "\n";
  EXPECT_EQ(SerializeNpy(t), MakeNpy(1, header, std::string(48, '\0')));

  Tensor b(Shape{DataType::Bool, {3}});
  std::string bytes = SerializeNpy(b);
  EXPECT_NE(bytes.find("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"), std::string::npos);
  Tensor s(Shape{DataType::I64, {}});
  EXPECT_NE(SerializeNpy(s).find("'shape': (), }"), std::string::npos);
}

TEST(Npy, WritesVersion2WhenTheHeaderIsLarge) {
  // 25000 dims of size 1 ("1, " each) make a header longer than 65535 bytes.
  Tensor t(Shape{DataType::U8, std::vector<int64_t>(25000, 1)});
  t.SetInt(0, 42);
  std::string bytes = SerializeNpy(t);
  EXPECT_EQ(bytes[6], '\x02');
  size_t header_len = 0;
  for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
  EXPECT_GT(header_len, 65535u);
  EXPECT_EQ((12 + header_len) % 64, 0u);
  Tensor back = ParseNpy(bytes, "big.npy");
  ExpectSameTensor(back, t);
  EXPECT_EQ(back.GetInt(0), 42);
}

TEST(Npy, ReadsHandWrittenHeaders) {
  std::string f32_2x2 = Bytes({0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40});  // 1 2 3 4
  const char* headers[] = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }      \n",
      "{'shape': (2, 2), 'fortran_order': False, 'descr': '<f4'}",
      "{\"fortran_order\": False, \"descr\": \"<f4\", \"shape\": (2,2)}\n",
      "  { 'descr' : '=f4' ,\n 'fortran_order':False,'shape':( 2 , 2 , ) , }\t \n",
      "{'descr': 'f4', 'fortran_order': False, 'shape': (2L, 2L)}\n",
      "{'descr': '<f4', 'fortran_order': True, 'shape': (4,)}\n",  // rank 1: order does not matter
  };
  for (int major : {1, 2, 3}) {
    for (const char* header : headers) {
      SCOPED_TRACE(fmt::format("v{} {}", major, header));
      Tensor t = ParseNpy(MakeNpy(major, header, f32_2x2), "h.npy");
      EXPECT_EQ(t.dtype(), DataType::F32);
      EXPECT_EQ(t.size(), 4);
      for (int i = 0; i < 4; ++i) EXPECT_EQ(t.GetDouble(i), i + 1);
    }
  }
  Tensor scalar = ParseNpy(MakeNpy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': ()}", Bytes({7, 0, 0, 0})),
                           "s.npy");
  EXPECT_EQ(scalar.shape(), (Shape{DataType::I32, {}}));
  EXPECT_EQ(scalar.GetInt(0), 7);
}

TEST(Npy, ReadsEveryDtypeSpelling) {
  struct Case {
    const char* descr;
    DataType dt;
  };
  const Case cases[] = {
      {"|b1", DataType::Bool}, {"<b1", DataType::Bool}, {"|i1", DataType::I8},  {"<i1", DataType::I8},
      {">i1", DataType::I8},   {"<i2", DataType::I16},  {"|i2", DataType::I16}, {"=i4", DataType::I32},
      {"<i8", DataType::I64},  {"|u1", DataType::U8},   {">u1", DataType::U8},  {"<u2", DataType::U16},
      {"<u4", DataType::U32},  {"<u8", DataType::U64},  {"<f2", DataType::F16}, {"<f4", DataType::F32},
      {"<f8", DataType::F64},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.descr);
    std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': (2,)}}", c.descr);
    std::string data;
    for (int i = 0; i < 2 * lang::ByteSize(c.dt); ++i) data += static_cast<char>(i % 2);
    Tensor t = ParseNpy(MakeNpy(1, header, data), "d.npy");
    EXPECT_EQ(t.dtype(), c.dt);
    ASSERT_EQ(t.bytes(), data.size());
    EXPECT_EQ(std::memcmp(t.data(), data.data(), data.size()), 0);  // copied, never byte-swapped
  }
  // The element value, read little-endian.
  Tensor t = ParseNpy(MakeNpy(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (1,)}", Bytes({0x34, 0x12})),
                      "x.npy");
  EXPECT_EQ(t.GetInt(0), 0x1234);
}

TEST(Npy, BoolBytesOtherThanZeroReadAsOne) {
  Tensor t = ParseNpy(MakeNpy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}", Bytes({0, 7, 255})),
                      "b.npy");
  EXPECT_EQ(t.GetInt(0), 0);
  EXPECT_EQ(t.GetInt(1), 1);
  EXPECT_EQ(t.GetInt(2), 1);
  EXPECT_EQ(static_cast<int>(t.data()[2]), 1);
}

const std::string kGoodHeader = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n";
const std::string kData12(12, '\0');

TEST(Npy, RejectsBadMagic) {
  EXPECT_NPY_ERROR("", "not a NumPy .npy file");
  EXPECT_NPY_ERROR("\x93NUMP", "not a NumPy .npy file");
  EXPECT_NPY_ERROR("PK\x03\x04 this is a zip file", "not a NumPy .npy file");
  std::string good = MakeNpy(1, kGoodHeader, kData12);
  good[1] = 'n';
  EXPECT_NPY_ERROR(good, "not a NumPy .npy file");
}

TEST(Npy, RejectsUnsupportedVersions) {
  EXPECT_NPY_ERROR(MakeNpy(4, kGoodHeader, kData12), "unsupported .npy format version 4.0");
  EXPECT_NPY_ERROR(MakeNpy(0, kGoodHeader, kData12), "unsupported .npy format version 0.0");
  std::string v11 = MakeNpy(1, kGoodHeader, kData12);
  v11[7] = 1;
  EXPECT_NPY_ERROR(v11, "unsupported .npy format version 1.1");
}

TEST(Npy, RejectsTruncation) {
  std::string good = MakeNpy(1, kGoodHeader, kData12);
  EXPECT_NPY_ERROR(good.substr(0, 7), "truncated header");
  EXPECT_NPY_ERROR(good.substr(0, 9), "truncated header");
  EXPECT_NPY_ERROR(good.substr(0, 30), fmt::format("file ends after 20 of {} header bytes", kGoodHeader.size()));
  EXPECT_NPY_ERROR(good.substr(0, good.size() - 4), "file ends after 8 of 12 data bytes");
  EXPECT_NPY_ERROR(MakeNpy(1, kGoodHeader), "file ends after 0 of 12 data bytes");
  EXPECT_NPY_ERROR(MakeNpy(2, kGoodHeader).substr(0, 11), "truncated header");
}

TEST(Npy, RejectsTrailingGarbage) {
  EXPECT_NPY_ERROR(MakeNpy(1, kGoodHeader, kData12 + "xyz"), "trailing garbage: 3 bytes after the 12 data bytes");
}

TEST(Npy, RejectsMalformedHeaders) {
  struct Case {
    const char* header;
    const char* fragment;
  };
  const Case cases[] = {
      {"", "malformed header"},
      {"   \n", "malformed header"},
      {"'descr': '<f4'", "expected a dict"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x", "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
      {"{'descr': '<f4', 'shape': (3,)}", "missing key 'fortran_order'"},
      {"{'fortran_order': False, 'shape': (3,)}", "missing key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}", "unexpected key 'extra'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", "'shape' must be a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [3]}", "'shape' must be a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,)}", "malformed"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ('3',)}", "'shape' must be a tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}", "negative dimension -3"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}", "'fortran_order' must be True or False"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (3,)}", "unknown name 'false'"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (3,)}", "'descr' must be a string"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (3,)}", "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,),, }", "malformed header"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}", "expected ',' or '}'"},
      {"{'descr': '<\\x66\\x34', 'fortran_order': False, 'shape': (3,)}", "escape sequences"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 2,)}", "expected ',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (((((((((((((((((((((3,)))))))))))))))))))))}",
       "nested too deeply"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    EXPECT_NPY_ERROR(MakeNpy(1, c.header, kData12), c.fragment);
  }
}

TEST(Npy, RejectsFortranOrder) {
  EXPECT_NPY_ERROR(MakeNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}", std::string(24, '\0')),
                   "Fortran-order arrays are not supported; save with np.ascontiguousarray");
}

TEST(Npy, RejectsBigEndian) {
  EXPECT_NPY_ERROR(MakeNpy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (3,)}", kData12),
                   "big-endian arrays are not supported (dtype '>f4')");
  EXPECT_NPY_ERROR(MakeNpy(1, "{'descr': '>i2', 'fortran_order': False, 'shape': (6,)}", kData12),
                   "big-endian");
}

TEST(Npy, RejectsUnsupportedDtypes) {
  struct Case {
    const char* descr;
    const char* fragment;
  };
  const Case cases[] = {
      {"<c8", "unsupported dtype '<c8' (complex)"},
      {"<c16", "(complex)"},
      {"|O", "unsupported dtype '|O' (Python objects)"},
      {"|S4", "(strings)"},
      {"<U3", "(strings)"},
      {"|V12", "(structured or void)"},
      {"<M8[ns]", "(datetime)"},
      {"<f16", "unsupported dtype '<f16'"},
      {"<i3", "unsupported dtype '<i3'"},
      {"|b2", "unsupported dtype"},
      {"", "unsupported dtype ''"},
      {"<", "unsupported dtype"},
      {"f\xc3\xa9", "unsupported dtype"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.descr);
    std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': (3,)}}", c.descr);
    EXPECT_NPY_ERROR(MakeNpy(3, header, kData12), c.fragment);
  }
  EXPECT_NPY_ERROR(MakeNpy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}", kData12),
                   "structured arrays are not supported");
}

TEST(Npy, RejectsShapeOverflow) {
  EXPECT_NPY_ERROR(
      MakeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", kData12),
      "shape (4294967296, 4294967296) is too large");
  EXPECT_NPY_ERROR(MakeNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,)}", kData12),
                   "is too large");
  EXPECT_NPY_ERROR(MakeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", kData12),
                   "too large");
  // A huge claimed shape with no data is a truncation, found before allocating.
  EXPECT_NPY_ERROR(MakeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,)}", kData12),
                   "file ends after 12 of 4000000000000 data bytes");
}

class NpyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / fmt::format("tilec_npy_test_{}", ::getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(NpyFiles, WriteThenRead) {
  Tensor t(Shape{DataType::F64, {2, 3}});
  lang::FillRandom(t, 3);
  std::string path = (dir_ / "t.npy").string();
  WriteNpy(path, t);
  ExpectSameTensor(ReadNpy(path), t);
}

TEST_F(NpyFiles, ErrorsNameThePathAndReason) {
  std::string missing = (dir_ / "missing.npy").string();
  try {
    ReadNpy(missing);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(e.Render().find(missing), std::string::npos) << e.Render();
    EXPECT_NE(e.Render().find("No such file or directory"), std::string::npos) << e.Render();
  }
  std::string bad_dir = (dir_ / "no_dir" / "t.npy").string();
  try {
    WriteNpy(bad_dir, Tensor(Shape{DataType::F32, {1}}));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(e.Render().find(bad_dir), std::string::npos) << e.Render();
    EXPECT_NE(e.Render().find("No such file or directory"), std::string::npos) << e.Render();
  }
  try {
    ReadNpy(dir_.string());  // a directory opens but cannot be read
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(e.Render().find(dir_.string()), std::string::npos) << e.Render();
  }
  std::string garbage = (dir_ / "garbage.npy").string();
  std::FILE* f = std::fopen(garbage.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("hello", f);
  std::fclose(f);
  try {
    ReadNpy(garbage);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(e.Render().find(garbage + ": not a NumPy .npy file"), std::string::npos) << e.Render();
  }
}

// Any bytes: ParseNpy returns or throws UserError, nothing else (ASan/UBSan
// builds check for memory errors too).
TEST(Npy, FuzzedInputsOnlyEverThrowUserError) {
  std::mt19937_64 rng(20240607);
  std::vector<std::string> seeds;
  for (DataType dt : kAllTypes) {
    Tensor t(Shape{dt, {2, 3}});
    lang::FillRandom(t, 1);
    seeds.push_back(SerializeNpy(t));
  }
  seeds.push_back(MakeNpy(2, "{'shape': (), 'descr': '<i8', 'fortran_order': False}", std::string(8, '\x05')));
  seeds.push_back(MakeNpy(3, "{\"descr\": \"|b1\", \"fortran_order\": True, \"shape\": (4,)}", "\x01\x00\x01\x00"));
  // Tokens of the header language, to reach the parser's deeper states.
  const char* tokens[] = {"{", "}", "(", ")", "[", "]", ",", ":", " ", "'descr'", "'shape'", "'fortran_order'",
                          "'<f4'", "'|b1'", "'>i8'", "True", "False", "None", "3", "-1", "0", "99999999999999999999",
                          "'", "\"", "\\", "\n", "L", "x", "\xff", "<NUL>"};
  int returned = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string bytes;
    switch (iter % 4) {
      case 0: {  // random bytes, sometimes with a valid prefix
        bytes = iter % 8 == 0 ? std::string("\x93NUMPY\x01\x00", 8) : std::string();
        size_t n = rng() % 96;
        for (size_t i = 0; i < n; ++i) bytes += static_cast<char>(rng());
        break;
      }
      case 1: {  // a valid file with a few bytes changed
        bytes = seeds[rng() % seeds.size()];
        int flips = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < flips; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
        break;
      }
      case 2: {  // a valid file cut short or extended
        bytes = seeds[rng() % seeds.size()];
        if (rng() % 2) {
          bytes.resize(rng() % bytes.size());
        } else {
          bytes += std::string(1 + rng() % 8, static_cast<char>(rng()));
        }
        break;
      }
      case 3: {  // a header made of random tokens
        std::string header;
        size_t n = 1 + rng() % 24;
        for (size_t i = 0; i < n; ++i) {
          size_t k = rng() % std::size(tokens);
          header += k + 1 == std::size(tokens) ? std::string(1, '\0') : std::string(tokens[k]);  // "<NUL>"
        }
        if (rng() % 2) header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + header + "}";
        bytes = MakeNpy(1 + static_cast<int>(rng() % 3), header, std::string(rng() % 16, '\0'));
        break;
      }
    }
    try {
      Tensor t = ParseNpy(bytes, "fuzz.npy");
      EXPECT_EQ(static_cast<int64_t>(t.bytes()), t.size() * lang::ByteSize(t.dtype()));
      ++returned;
    } catch (const UserError&) {
    } catch (const std::exception& e) {
      FAIL() << "iteration " << iter << ": unexpected exception: " << e.what();
    }
  }
  // Mutations of valid files succeed now and then (e.g. a changed data byte).
  EXPECT_GT(returned, 0);
}

}  // namespace
}  // namespace tilec::runtime
