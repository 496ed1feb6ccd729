// libFuzzer harness: the .npy reader (runtime/npy.h ParseNpy). The input is
// the file's bytes. A file that parses must serialize (SerializeNpy) to bytes
// that parse back to the same tensor.
#include <cstring>

#include "runtime/npy.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tilec;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::Guarded([&] {
    lang::Tensor t = runtime::ParseNpy(bytes, "fuzz.npy");
    std::string written = runtime::SerializeNpy(t);
    lang::Tensor back;
    try {
      back = runtime::ParseNpy(written, "written.npy");
    } catch (const UserError& e) {
      std::fprintf(stderr, "fuzz finding: SerializeNpy output does not parse: %s\n",
                   e.Render().c_str());
      std::abort();
    }
    if (!(back.shape() == t.shape()) || back.bytes() != t.bytes() ||
        (t.bytes() != 0 && std::memcmp(back.data(), t.data(), t.bytes()) != 0)) {
      std::fprintf(stderr, "fuzz finding: .npy round trip changed the tensor\n");
      std::abort();
    }
  });
  return 0;
}
