#include "compiler/ir/verify.h"

#include <algorithm>
#include <set>

#include "support/error.h"

namespace tilec::compiler {

void Verify(const KernelPlan& plan, const lang::Program& program, std::string_view stage) {
  // Inputs, and tensors without elements (Lower gives them no kernel: the
  // runtime allocates an empty buffer), need no writer.
  std::set<std::string> written(program.inputs.begin(), program.inputs.end());
  for (const auto& [name, t] : program.tensors)
    if (t.shape.ElementCount() == 0) written.insert(name);
  std::set<std::string> names;
  for (const KernelSpec& k : plan.kernels) {
    TILEC_CHECK(names.insert(k.name).second, "after {}: two kernels are named {}", stage, k.name);
    std::set<std::string> buffers;
    for (const std::vector<std::string>* list : {&k.outputs, &k.inputs})
      for (const std::string& t : *list) {
        TILEC_CHECK(program.tensors.count(t), "after {}: kernel {} names the undeclared tensor '{}'", stage,
                    k.name, t);
        TILEC_CHECK(buffers.insert(t).second, "after {}: kernel {} names '{}' twice", stage, k.name, t);
      }
    for (const std::string& t : k.inputs)
      TILEC_CHECK(written.count(t), "after {}: kernel {} reads '{}' before any kernel writes it", stage, k.name,
                  t);
    TILEC_CHECK(!k.outputs.empty(), "after {}: kernel {} writes nothing", stage, k.name);
    if (IsFlatKind(k.kind)) {
      Verify(k.flat);
      TILEC_CHECK(k.outputs == k.flat.kernel_outputs, "after {}: kernel {} writes {} buffers, its table {}", stage,
                  k.name, k.outputs.size(), k.flat.kernel_outputs.size());
    }
    written.insert(k.outputs.begin(), k.outputs.end());
  }
  for (const std::string& o : program.outputs)
    TILEC_CHECK(written.count(o), "after {}: no kernel writes the output '{}'", stage, o);
  for (const std::string& t : plan.temporaries) {
    TILEC_CHECK(written.count(t), "after {}: no kernel writes the temporary '{}'", stage, t);
    bool io = std::count(program.inputs.begin(), program.inputs.end(), t) ||
              std::count(program.outputs.begin(), program.outputs.end(), t);
    TILEC_CHECK(!io, "after {}: the temporary '{}' is a program input or output", stage, t);
  }
}

}  // namespace tilec::compiler
