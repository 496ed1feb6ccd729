#include "runtime/tuning_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <llvm/Support/JSON.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace tilec::runtime {
namespace {

namespace json = llvm::json;

// A list of sizes (a tile, a work-group shape) as a JSON array.
json::Array SizesJson(const std::vector<int64_t>& sizes) {
  json::Array a;
  for (int64_t t : sizes) a.push_back(t);
  return a;
}

json::Value ConfigJson(const compiler::KernelConfig& c) {
  json::Object o;
  if (!c.tile.empty()) o["tile"] = SizesJson(c.tile);
  if (c.use_local) o["local"] = *c.use_local;
  if (c.vector) o["vector"] = *c.vector;
  if (c.vector_rows) o["vector_rows"] = c.vector_rows;
  if (!c.work_group.empty()) o["work_group"] = SizesJson(c.work_group);
  return o;
}

// Member `key` of `o`, if present, as positive sizes appended to `out`.
bool ParseSizes(const json::Object& o, llvm::StringRef key, std::vector<int64_t>& out, std::string& error) {
  const json::Value* v = o.get(key);
  if (!v) return true;
  const json::Array* a = v->getAsArray();
  if (!a) return error = fmt::format("'{}' is not an array", key.str()), false;
  for (const json::Value& t : *a) {
    std::optional<int64_t> n = t.getAsInteger();
    if (!n || *n < 1)
      return error = fmt::format("'{}' holds a size that is not a positive integer", key.str()), false;
    out.push_back(*n);
  }
  return true;
}

bool ParseConfig(const json::Value* v, compiler::KernelConfig& c, std::string& error) {
  const json::Object* o = v ? v->getAsObject() : nullptr;
  if (!o) return error = "a configuration is not an object", false;
  if (!ParseSizes(*o, "tile", c.tile, error)) return false;
  if (const json::Value* l = o->get("local")) {
    if (!l->getAsBoolean()) return error = "'local' is not a boolean", false;
    c.use_local = *l->getAsBoolean();
  }
  if (const json::Value* l = o->get("vector")) {
    if (!l->getAsBoolean()) return error = "'vector' is not a boolean", false;
    c.vector = *l->getAsBoolean();
  }
  if (const json::Value* r = o->get("vector_rows")) {
    std::optional<int64_t> n = r->getAsInteger();
    if (!n || *n < 0 || *n > 64) return error = "'vector_rows' is not an integer in [0, 64]", false;
    c.vector_rows = *n;
  }
  if (!ParseSizes(*o, "work_group", c.work_group, error)) return false;
  return true;
}

std::string Str(const json::Object& o, llvm::StringRef key) {
  std::optional<llvm::StringRef> s = o.getString(key);
  return s ? s->str() : std::string();
}

double Num(const json::Object& o, llvm::StringRef key, double fallback) {
  std::optional<double> d = o.getNumber(key);
  return d ? *d : fallback;
}

}  // namespace

std::string DeviceFingerprint(const hal::Device& device) {
  return fmt::format("{} | {}", device.id(), device.Describe());
}

std::string ToJsonLine(const TuningRecord& r) {
  json::Array trials;
  for (const TuningTrial& t : r.trials) {
    json::Object o{{"config", ConfigJson(t.config)}, {"median_ms", t.median_ms}, {"min_ms", t.min_ms},
                   {"max_ms", t.max_ms},           {"ok", t.ok},               {"model_score", t.model_score}};
    if (t.model_rank >= 0) o["model_rank"] = t.model_rank;
    if (!t.note.empty()) o["note"] = t.note;
    if (t.paired) o["paired"] = true;
    trials.push_back(std::move(o));
  }
  json::Object o{{"signature", r.signature}, {"device", r.device},       {"version", r.version},
                 {"kernel", r.kernel},       {"program", r.program},     {"winner", ConfigJson(r.winner)},
                 {"median_ms", r.median_ms}, {"model_ms", r.model_ms},   {"flops", r.flops},
                 {"trials", std::move(trials)}};
  std::string s;
  llvm::raw_string_ostream os(s);
  os << json::Value(std::move(o));
  os.flush();
  return s;
}

std::optional<TuningRecord> ParseJsonLine(std::string_view line, std::string* error) {
  std::string why;
  auto fail = [&](std::string message) -> std::optional<TuningRecord> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  llvm::Expected<json::Value> v = json::parse(llvm::StringRef(line.data(), line.size()));
  if (!v) return fail(llvm::toString(v.takeError()));
  const json::Object* o = v->getAsObject();
  if (!o) return fail("not a JSON object");
  TuningRecord r;
  r.signature = Str(*o, "signature");
  r.device = Str(*o, "device");
  r.version = Str(*o, "version");
  if (r.signature.empty() || r.device.empty() || r.version.empty())
    return fail("no 'signature', 'device' or 'version'");
  r.kernel = Str(*o, "kernel");
  r.program = Str(*o, "program");
  if (!ParseConfig(o->get("winner"), r.winner, why)) return fail("winner: " + why);
  r.median_ms = Num(*o, "median_ms", 0);
  r.model_ms = Num(*o, "model_ms", 0);
  r.flops = Num(*o, "flops", 0);
  if (const json::Array* trials = o->getArray("trials")) {
    for (const json::Value& tv : *trials) {
      const json::Object* t = tv.getAsObject();
      if (!t) return fail("a trial is not an object");
      TuningTrial trial;
      if (!ParseConfig(t->get("config"), trial.config, why)) return fail("trial: " + why);
      trial.median_ms = Num(*t, "median_ms", -1);
      trial.min_ms = Num(*t, "min_ms", -1);
      trial.max_ms = Num(*t, "max_ms", -1);
      trial.ok = t->getBoolean("ok").value_or(false);
      trial.note = Str(*t, "note");
      trial.model_score = Num(*t, "model_score", 0);
      trial.model_rank = static_cast<int>(t->getInteger("model_rank").value_or(-1));
      trial.paired = t->getBoolean("paired").value_or(false);
      r.trials.push_back(std::move(trial));
    }
  }
  return r;
}

TuningLookup TuningCache::Load(const std::string& device_fingerprint) const {
  TuningLookup out;
  if (!options_.enabled || options_.path.empty()) return out;
  std::ifstream in(options_.path);
  if (!in) return out;
  int corrupt = 0, foreign = 0, line_no = 0;
  std::string first_corrupt, line;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string error;
    std::optional<TuningRecord> r = ParseJsonLine(line, &error);
    if (!r) {
      if (corrupt++ == 0) first_corrupt = fmt::format("line {}: {}", line_no, error);
      continue;
    }
    if (r->device != device_fingerprint || r->version != options_.version) {
      ++foreign;
      continue;
    }
    std::string key = r->signature;
    out.records.insert_or_assign(std::move(key), std::move(*r));
  }
  if (corrupt)
    out.notices.push_back(fmt::format("tuning cache {}: skipped {} that {} not parse (first: {})",
                                      options_.path, corrupt == 1 ? "1 line" : fmt::format("{} lines", corrupt),
                                      corrupt == 1 ? "does" : "do", first_corrupt));
  if (foreign)
    out.notices.push_back(
        fmt::format("tuning cache {}: ignored {} record{} of another device or Tilec version (this is "
                    "'{}', version {})",
                    options_.path, foreign, foreign == 1 ? "" : "s", device_fingerprint, options_.version));
  return out;
}

bool TuningCache::Append(const TuningRecord& record, std::string* error) const {
  auto fail = [&](std::string message) {
    if (error) *error = std::move(message);
    return false;
  };
  if (!options_.enabled || options_.path.empty()) return fail("the tuning cache is disabled");
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(options_.path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::string line = ToJsonLine(record) + "\n";
  int fd = ::open(options_.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return fail(fmt::format("cannot open {}: {}", options_.path, std::strerror(errno)));
  ssize_t n = ::write(fd, line.data(), line.size());
  int write_errno = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size()))
    return fail(fmt::format("cannot write {}: {}", options_.path, std::strerror(write_errno)));
  return true;
}

std::map<std::string, compiler::KernelConfig> TunedConfigs(const TuningLookup& lookup) {
  std::map<std::string, compiler::KernelConfig> out;
  for (const auto& [signature, record] : lookup.records) out.emplace(signature, record.winner);
  return out;
}

}  // namespace tilec::runtime
