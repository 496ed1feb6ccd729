// Opening the device `--target` names (see targets.h).
#include "tools/tilec/targets.h"

#include "hal/llvm/cpu_info.h"
#include "runtime/program_cache.h"
#include "runtime/settings.h"
#include "support/error.h"
#include "tools/tilec/common.h"

namespace tilec::tools {

std::shared_ptr<hal::Device> OpenTargetDevice(const std::string& target, bool with_ref, bool shared) {
  // An unknown or misqualified CPU is --cpu's error, whatever the target.
  if (!TargetCpu().empty()) {
    try {
      hal::cpu::NamedCpu(TargetCpu());
    } catch (const UserError& e) {
      TILEC_USER_ERROR("--cpu {}: {}", TargetCpu(), e.message());
    }
  }
  try {
    if (!shared) return runtime::OpenDevice(target, TargetCpu());
    return runtime::OpenSharedDevice(target, TargetCpu());
  } catch (const UserError& e) {
    TILEC_USER_ERROR("--target {}: {}{}", target, e.message(), with_ref ? "; 'ref' is the reference evaluator" : "");
  }
}

}  // namespace tilec::tools
