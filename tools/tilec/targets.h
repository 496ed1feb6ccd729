// What `--target NAME` names: the reference evaluator ('ref', where a
// subcommand accepts it) or a device ('llvm', 'opencl', or an id from
// `tilec devices`). Every subcommand opens its device here, so an unknown
// name gets one message everywhere.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "hal/hal.h"

namespace tilec::tools {

inline constexpr std::string_view kReferenceTarget = "ref";

inline bool IsReferenceTarget(std::string_view target) { return target == kReferenceTarget; }

// The device for `target`: the process's shared one with the disk cache of
// kernels (runtime::OpenSharedDevice), or with `shared` false a new one
// without it (hal::OpenDevice: what bench times and compile prints). UserError "--target x: unknown device 'x' (available: llvm:cpu, …)"
// otherwise; `with_ref` adds that 'ref' is the reference evaluator.
std::shared_ptr<hal::Device> OpenTargetDevice(const std::string& target, bool with_ref, bool shared = true);

}  // namespace tilec::tools
