// libFuzzer harness: the C API (include/tilec/tilec.h) as a careless caller
// would use it, on the llvm:cpu device. Input "SOURCE\0PARAMS": the source
// and shapes as in the binder harness (bind_input.h, sizes up to 8), then
// parameter bytes that damage the call the way callers do — a bad dtype or
// rank, NULL dims or names, two specs for one input, a made-up layout,
// forced tiles of any length and size, constant inputs (a NULL, made-up or
// real name, a count without its array), too few bytes or wrong strides for
// a tensor at run time. Every call must return TILEC_OK or a user, usage or
// device error with an error object; TILEC_ERROR_INTERNAL, a missing error
// object, a crash or a sanitizer report is a finding. A program that
// compiles is run on the caller's memory (sizes are small), so the run
// path's checks of tensors are fuzzed as well.
#include <cstring>
#include <string>
#include <vector>

#include <tilec/tilec.h>
#include "tests/fuzz/bind_input.h"

namespace tilec::fuzz {
namespace {

[[noreturn]] void Finding(const char* call, tilec_status status, tilec_error error) {
  std::fprintf(stderr, "fuzz finding: %s returned %d: %s\n", call, static_cast<int>(status),
               error ? tilec_error_text(error) : "(no error object)");
  std::abort();
}

// Checks one call's result against the contract of tilec.h and releases the
// error. Returns whether the call succeeded.
// `error` is read here, after the call (an argument `e` beside the call's
// own `&e` could be read before the call runs).
bool Expect(const char* call, tilec_status status, tilec_error* error_out) {
  tilec_error error = *error_out;
  *error_out = nullptr;
  static const bool verbose = std::getenv("TILEC_FUZZ_VERBOSE") != nullptr;
  if (verbose)
    std::fprintf(stderr, "  %s: %d %s\n", call, static_cast<int>(status),
                 error ? tilec_error_message(error) : "");
  if (status == TILEC_OK) {
    if (error) Finding(call, status, error);
    return true;
  }
  if (!error || status == TILEC_ERROR_INTERNAL || tilec_error_kind(error) != status)
    Finding(call, status, error);
  // Every accessor works on every error.
  const char* file = nullptr;
  int line = 0, column = 0;
  tilec_error_location(error, &file, &line, &column);
  if (!tilec_error_message(error) || !tilec_error_text(error)) Finding(call, status, error);
  tilec_error_release(error);
  return false;
}

tilec_device Device() {
  static tilec_device device = [] {
    tilec_device d = nullptr;
    tilec_error e = nullptr;
    if (!Expect("tilec_device_open", tilec_device_open("llvm:cpu", &d, &e), &e)) std::abort();
    return d;
  }();
  return device;
}

const char* Layout(uint8_t b) {
  static const char* const kLayouts[] = {"row-major",  "nhwc",          "nchw",       "nChw16c",
                                         "bogus",      "order(1,0)",    "order(0,0)", "strides(1)",
                                         "strides(4,1)", "nChw4c:extra", "",           "OIhw16i16o"};
  return kLayouts[b % (sizeof(kLayouts) / sizeof(kLayouts[0]))];
}

// Bytes for one tensor, filled from the parameters (or a pattern).
struct Memory {
  std::vector<unsigned char> bytes;
  std::vector<int64_t> dims, strides;
};

// `runs` > 1: the same call again (a program with constant inputs skips
// their kernels then).
void RunProgram(tilec_program program, ParamReader& params, int runs) {
  size_t counts[2] = {0, 0};
  tilec_error e = nullptr;
  if (!Expect("num_inputs", tilec_program_num_inputs(program, &counts[0], &e), &e)) return;
  if (!Expect("num_outputs", tilec_program_num_outputs(program, &counts[1], &e), &e)) return;
  std::vector<Memory> memory;
  std::vector<tilec_tensor> tensors[2];
  for (int side = 0; side < 2; ++side) {
    for (size_t i = 0; i < counts[side]; ++i) {
      tilec_tensor_info info{};
      tilec_status s = side == 0 ? tilec_program_input(program, i, &info, &e)
                                 : tilec_program_output(program, i, &info, &e);
      if (!Expect("tilec_program_input/output", s, &e)) return;
      if (info.bytes > (size_t{1} << 24)) return;  // sizes are small; keep the run cheap
      Memory& m = memory.emplace_back();
      m.dims.assign(info.dims, info.dims + info.rank);
      tilec_tensor t{};
      t.dtype = info.dtype;
      t.rank = info.rank;
      uint8_t damage = params.Next(0);
      size_t bytes = info.bytes;
      switch (damage % 16) {
        case 1: bytes = bytes / 2; break;                   // too little memory
        case 2: t.dtype = static_cast<tilec_dtype>((t.dtype + 1) % 12); break;
        case 3: t.rank = info.rank + 1; m.dims.push_back(1); break;
        case 4: if (!m.dims.empty()) m.dims[0] += 1; break;  // another shape
        case 5:  // a strided view: strides from the parameters, maybe negative or huge
          for (int d = 0; d < info.rank; ++d)
            m.strides.push_back(static_cast<int8_t>(params.Next(1)));
          break;
        case 6:  // the plain layout's own strides, given explicitly
          if (info.strides) m.strides.assign(info.strides, info.strides + info.rank);
          break;
        case 7: t.dtype = static_cast<tilec_dtype>(200); break;
        default: break;
      }
      m.bytes.resize(bytes);
      for (size_t k = 0; k < bytes; ++k) m.bytes[k] = static_cast<unsigned char>(k * 37 + i);
      t.data = damage % 16 == 8 ? nullptr : m.bytes.data();
      t.bytes = bytes;
      t.dims = m.dims.data();
      t.strides = m.strides.empty() ? nullptr : m.strides.data();
      tensors[side].push_back(t);
    }
  }
  // An output that is also an input overlaps it: the library must say so.
  if (params.Next(0) == 7 && !tensors[0].empty() && !tensors[1].empty())
    tensors[1][0] = tensors[0][0];
  for (int run = 0; run < runs; ++run)
    Expect("tilec_program_run",
           tilec_program_run(program, tensors[0].data(), tensors[0].size(), tensors[1].data(),
                             tensors[1].size(), &e),
           &e);
}

void CompileAndRun(const SplitInput& in, ParamReader& params) {
  std::string source(in.text);
  std::vector<tilec_tensor_spec> specs;
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::string> layouts;
  try {
    BindInput b = MakeBindInput(in, params, {.max_small = 8, .huge = false});
    for (const auto& [name, shape] : b.shapes) {
      names.push_back(name);
      dims.push_back(shape.dims);
      auto l = b.layouts.find(name);
      layouts.push_back(l == b.layouts.end() ? std::string() : l->second);
      specs.push_back({nullptr, static_cast<tilec_dtype>(shape.dtype),
                       static_cast<int>(shape.dims.size()), nullptr, nullptr});
    }
  } catch (const UserError&) {
    // Does not parse: the C API must say so too (no specs).
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    tilec_tensor_spec& s = specs[i];
    s.name = names[i].c_str();
    s.dims = dims[i].data();
    s.layout = layouts[i].empty() ? nullptr : layouts[i].c_str();
    uint8_t damage = params.Next(0);
    switch (damage % 24) {
      case 1: s.dtype = static_cast<tilec_dtype>(12 + damage); break;
      case 2: s.dtype = static_cast<tilec_dtype>(-1); break;
      case 3: s.rank = -1; break;
      case 4: s.rank = s.rank + 1 + damage % 3; dims[i].resize(s.rank, 3); s.dims = dims[i].data(); break;
      case 5: if (s.rank > 0) s.dims = nullptr; break;
      case 6: s.name = nullptr; break;
      case 7: s.name = "no_such_input"; break;
      case 8: s.layout = Layout(params.Next(0)); break;
      case 9: if (s.rank > 0) dims[i][0] = -dims[i][0] - 1; break;
      case 10: if (s.rank > 0) dims[i][0] = int64_t{1} << 62; break;
      case 11: if (i > 0) s.name = names[i - 1].c_str(); break;  // two specs for one input
      default: break;
    }
  }
  uint8_t o = params.Next(0);
  tilec_compile_options options{};
  options.no_vector = o & 1;
  options.no_cache = 1;  // every input compiles: no growth of the process cache
  std::vector<int64_t> tile_sizes;
  tilec_tile_spec tile{};
  tilec_layout_spec extra{};
  if (o & 2) {
    int count = params.Next(0) % 9;
    for (int k = 0; k < count; ++k) {
      uint8_t b = params.Next(1);
      tile_sizes.push_back(b == 255 ? -1 : b == 254 ? (int64_t{1} << 40) : b % 17);
    }
    tile.kernel = (o & 4) ? "kernel_0" : "kernel_9";
    tile.count = (o & 8) ? -count : count;
    tile.sizes = tile_sizes.empty() ? nullptr : tile_sizes.data();
    options.tiles = &tile;
    options.num_tiles = 1;
  }
  if (o & 32) {
    extra.tensor = (o & 64) ? "O" : nullptr;
    extra.layout = Layout(params.Next(0));
    options.layouts = &extra;
    options.num_layouts = 1;
  }
  if (o & 128) {  // a count without its array
    if (!options.tiles) options.num_tiles = 3;
    if (!options.layouts) options.num_layouts = 2;
  }
  tilec_program program = nullptr;
  tilec_error e = nullptr;
  // Fewer specs than inputs (the last ones missing), or a count without an array.
  size_t num_specs = specs.size();
  const tilec_tensor_spec* spec_array = specs.empty() ? nullptr : specs.data();
  uint8_t count_damage = params.Next(0);
  if (count_damage == 1 && num_specs > 0) num_specs -= 1;
  if (count_damage == 2) spec_array = nullptr, num_specs = num_specs ? num_specs : 1;
  // Constant inputs, from the same byte (its values 3..7 damaged nothing before).
  std::vector<const char*> constants;
  switch (count_damage) {
    case 3: if (!names.empty()) constants.push_back(names[0].c_str()); break;
    case 4: for (const std::string& n : names) constants.push_back(n.c_str()); break;
    case 5: constants = {nullptr}; break;
    case 6: constants = {"no_such_input", "O"}; break;
    case 7: options.num_constant_inputs = 2; break;  // a count without its array
    default: break;
  }
  if (!constants.empty()) {
    options.constant_inputs = constants.data();
    options.num_constant_inputs = constants.size();
  }
  bool ok = Expect("tilec_program_compile",
                   tilec_program_compile(Device(), source.c_str(), "fuzz.tile", spec_array,
                                         num_specs, &options, &program, &e),
                   &e);
  if (!ok) {
    if (program) Finding("tilec_program_compile (a program handle after a failure)", TILEC_OK, nullptr);
    return;
  }
  RunProgram(program, params, options.num_constant_inputs > 0 ? 2 : 1);
  if (options.num_constant_inputs > 0)
    Expect("tilec_program_invalidate_constants", tilec_program_invalidate_constants(program, &e), &e);
  if (tilec_program_release(program) != TILEC_OK) Finding("tilec_program_release", TILEC_ERROR_INTERNAL, nullptr);
  // A second release is a usage error, never a crash.
  tilec_status s = tilec_program_release(program);
  if (s != TILEC_ERROR_USAGE) Finding("tilec_program_release (twice)", s, nullptr);
  s = tilec_program_invalidate_constants(program, &e);
  if (s != TILEC_ERROR_USAGE || !e) Finding("tilec_program_invalidate_constants (released)", s, e);
  tilec_error_release(e);
}

}  // namespace
}  // namespace tilec::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tilec::fuzz;
  SplitInput in = Split(data, size);
  ParamReader params(in.params);
  CompileAndRun(in, params);
  return 0;
}
