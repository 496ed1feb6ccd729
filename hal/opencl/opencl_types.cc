#include "hal/opencl/opencl_types.h"

#include <fmt/format.h>

#include <string_view>

namespace tilec::hal::opencl {
namespace {

using namespace tilec::sem;  // NOLINT: a visitor of every sem node

// Which optional floating types a module uses.
class TypeScan : public Visitor {
 public:
  bool f16 = false, f64 = false;
  void Note(const Type& t) {
    if (t.IsVoid() || t.elem_kind == TypeKind::Index || t.IsIndex()) return;
    f16 |= t.dtype == DataType::F16;
    f64 |= t.dtype == DataType::F64;
  }
  void Scan(const Function& f) {
    Note(f.return_type);
    for (const Param& p : f.params) Note(p.type);
    Visit(f.body);
  }
  using Visitor::Visit;

 protected:
  void VisitDeclare(const Declare& n) override {
    Note(n.type);
    Visitor::VisitDeclare(n);
  }
  // Every expression kind carries a type; note them all through one hook.
#define TILEC_X_Expr(n)                   \
  void Visit##n(const n& node) override { \
    Note(node.type);                      \
    Visitor::Visit##n(node);              \
  }
#define TILEC_X_Stmt(n)
#define TILEC_X(n, c) TILEC_X_##c(n)
  TILEC_SEM_NODES(TILEC_X)
#undef TILEC_X
#undef TILEC_X_Stmt
#undef TILEC_X_Expr
};

}  // namespace

FloatTypes OptionalFloatTypes(const sem::Function& f) {
  TypeScan scan;
  scan.Scan(f);
  return {scan.f16, scan.f64};
}

std::string Lane(int lane) { return fmt::format("s{:x}", lane); }

std::string MaskType(int bits, int width) {
  std::string_view base = bits == 8 ? "char" : bits == 16 ? "short" : bits == 32 ? "int" : "long";
  return fmt::format("{}{}", base, width);
}

}  // namespace tilec::hal::opencl
