// `tilec devices [--json]`: the devices `--target` can name, with their
// descriptions and hardware models.
#include <memory>
#include <optional>

#include "compiler/schedule/hardware_model.h"
#include "hal/hal.h"
#include "runtime/settings.h"
#include "tools/tilec/common.h"
#include "tools/tilec/json.h"

namespace tilec::tools {
namespace {

// A number or a boolean as JSON, or nothing when `v` reads as neither.
std::optional<Json> ScalarValue(const std::string& v) {
  if (v == "true" || v == "false") return Json(v == "true");
  try {
    size_t used = 0;
    long long i = std::stoll(v, &used);
    if (used == v.size()) return Json(static_cast<int64_t>(i));
    double d = std::stod(v, &used);
    if (used == v.size()) return Json(d);
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// A `key=value` value as JSON: a number or a boolean when it reads as one, a
// comma-separated list of numbers ("1024,1024,1024") as an array, else the
// text (a name may hold commas: "…, planned for neoverse-n1").
Json ModelValue(const std::string& v) {
  if (v.find(',') != std::string::npos) {
    Json a = Json::Array();
    for (size_t pos = 0;;) {
      size_t comma = v.find(',', pos);
      size_t length = comma == std::string::npos ? std::string::npos : comma - pos;
      std::optional<Json> item = ScalarValue(v.substr(pos, length));
      if (!item) return Json(v);
      a.Push(std::move(*item));
      if (comma == std::string::npos) return a;
      pos = comma + 1;
    }
  }
  return ScalarValue(v).value_or(Json(v));
}

// compiler::ToString(HardwareModel)'s `key=value` lines as an object.
Json ModelJson(const compiler::HardwareModel& hw) {
  Json j = Json::Object();
  std::string text = compiler::ToString(hw);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    j.Set(line.substr(0, eq), ModelValue(line.substr(eq + 1)));
  }
  return j;
}

std::string DevicesJson() {
  Json devices = Json::Array();
  for (const std::string& id : hal::ListDeviceIds()) {
    Json d = Json::Object();
    d.Set("id", id);
    try {
      std::unique_ptr<hal::Device> device = runtime::OpenDevice(id, TargetCpu());
      d.Set("description", device->Describe()).Set("hardware_model", ModelJson(device->hardware_model()));
    } catch (const Error& e) {
      d.Set("unavailable", e.what());
    }
    devices.Push(std::move(d));
  }
  return Json::Object().Set("default", kDefaultTarget).Set("devices", std::move(devices)).Dump(2);
}

}  // namespace

Command AddDevicesCommand(CLI::App& parent, const GlobalOptions& /*global*/) {
  auto json = std::make_shared<bool>(false);
  CLI::App* app = parent.add_subcommand("devices", "List the devices --target can name, with their hardware models");
  app->footer(Footer("'llvm' names llvm:cpu and 'opencl' the first OpenCL device.\n\nExamples:\n"
                     "  tilec devices\n  tilec devices --json"));
  AddJsonFlag(app, *json, "default (the default --target), devices [{id, description, hardware_model {field: value}}]");
  app->add_option("--cpu", TargetCpu(), "Describe the llvm device compiling for this CPU (an LLVM CPU name, x86-64 "
                                        "level or AArch64 core; default: TILEC_CPU, else the host)")
      ->type_name("NAME");
  return {app, [json] {
            hal::DeviceOptions options = runtime::ProcessSettings().device;
            if (!TargetCpu().empty()) options.cpu = TargetCpu();
            fmt::print("{}", *json ? DevicesJson() + "\n" : hal::DescribeAllDevices(options));
          }};
}

}  // namespace tilec::tools
