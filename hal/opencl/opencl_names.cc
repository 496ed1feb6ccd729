#include "hal/opencl/opencl_names.h"

#include <set>
#include <string>

namespace tilec::hal::opencl {
namespace {

// Every name a function's body declares or uses.
class NameCollector : public sem::Visitor {
 public:
  std::set<std::string> names;
  using sem::Visitor::Visit;

 protected:
  void VisitDeclare(const sem::Declare& n) override {
    names.insert(n.name);
    sem::Visitor::VisitDeclare(n);
  }
  void VisitFor(const sem::For& n) override {
    names.insert(n.var);
    sem::Visitor::VisitFor(n);
  }
  void VisitVarRef(const sem::VarRef& n) override { names.insert(n.name); }
};

}  // namespace

bool IsReservedInOpenCL(std::string_view name) {
  static const std::set<std::string_view> kWords = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
      "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
      "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
      "union", "unsigned", "void", "volatile", "while", "bool", "half", "uchar", "ushort", "uint",
      "ulong", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "true", "false", "kernel",
      "global", "local", "constant", "private", "read_only", "write_only", "read_write",
      "image1d_t", "image2d_t", "image3d_t", "image1d_array_t", "image2d_array_t",
      "image1d_buffer_t", "sampler_t", "event_t", "quad", "complex", "imaginary", "_Bool",
      "uniform", "pipe", "min", "max", "fmin", "fmax", "clamp", "select", "mad", "fma",
      "barrier", "mem_fence", "exp", "log", "sqrt", "pow", "tanh", "sin", "cos", "tan", "sinh",
      "cosh", "asin", "acos", "atan", "erf", "fabs", "floor", "ceil", "round", "NAN", "INFINITY",
      "MAXFLOAT", "HUGE_VALF", "HUGE_VAL", "CHAR_BIT", "CHAR_MAX", "CHAR_MIN", "INT_MAX",
      "INT_MIN", "LONG_MAX", "LONG_MIN", "SCHAR_MAX", "SCHAR_MIN", "SHRT_MAX", "SHRT_MIN",
      "UCHAR_MAX", "UINT_MAX", "ULONG_MAX", "USHRT_MAX", "FP_FAST_FMA", "FP_FAST_FMAF",
      "FP_FAST_FMA_HALF", "ENDIAN_LITTLE", "IMAGE_SUPPORT", "NULL"};
  static const std::string_view kPrefixes[] = {"convert_", "as_",  "vload", "vstore", "native_",
                                               "half_",    "get_", "atomic_", "async_", "__",
                                               "tilec_",   "FLT_", "DBL_",  "HALF_",  "M_",
                                               "CL_",      "CLK_", "cl_"};
  static const std::string_view kVectorBases[] = {"char", "uchar", "short", "ushort",
                                                  "int",  "uint",  "long",  "ulong",
                                                  "float", "double", "half", "bool"};
  if (kWords.count(name)) return true;
  for (std::string_view p : kPrefixes)
    if (name.starts_with(p)) return true;
  for (std::string_view b : kVectorBases) {
    if (!name.starts_with(b)) continue;
    std::string_view rest = name.substr(b.size());
    if (rest == "2" || rest == "3" || rest == "4" || rest == "8" || rest == "16") return true;
  }
  return false;
}

std::map<std::string, std::string> RenameReservedNames(const sem::Function& f) {
  NameCollector names;
  names.Visit(f.body);
  for (const sem::Param& p : f.params) names.names.insert(p.name);
  std::map<std::string, std::string> rename;
  for (const std::string& n : std::set<std::string>(names.names)) {
    if (!IsReservedInOpenCL(n)) continue;
    std::string fresh = n + "_";
    while (!IsReservedInOpenCL(fresh) && names.names.count(fresh)) fresh += "_";
    // A reserved prefix (`get_`, `CL_`, `__`) stays reserved whatever follows:
    // prefix such a name instead. `r<k>_` is never reserved.
    for (int k = 0; IsReservedInOpenCL(fresh) || names.names.count(fresh); ++k)
      fresh = "r" + (k ? std::to_string(k) : std::string()) + "_" + n;
    names.names.insert(fresh);
    rename[n] = fresh;
  }
  return rename;
}

}  // namespace tilec::hal::opencl
