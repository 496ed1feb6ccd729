#include "compiler/config.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/error.h"

namespace tilec::compiler {
namespace {

// A tuned configuration (canonical index order) in the kernel's order, or
// nothing where it does not fit the kernel.
std::optional<KernelConfig> FromCache(const KernelSpec& spec, const KernelSignature& signature,
                                      KernelConfig config) {
  if (!config.tile.empty()) {
    if (config.tile.size() != signature.order.size()) return std::nullopt;
    config.tile = FromCanonical(signature, config.tile);
    if (!TileFits(spec.flat, config.tile)) return std::nullopt;
  }
  if (!config.work_group.empty()) {
    if (config.work_group.size() != signature.order.size()) return std::nullopt;
    config.work_group = FromCanonical(signature, config.work_group);
  }
  return config;
}

}  // namespace

std::string ToString(const KernelConfig& c) {
  std::vector<std::string> parts;
  if (!c.tile.empty()) parts.push_back(fmt::format("tile [{}]", fmt::join(c.tile, ", ")));
  if (c.use_local) parts.push_back(fmt::format("local {}", *c.use_local ? 1 : 0));
  if (c.vector) parts.push_back(fmt::format("vector {}", *c.vector ? 1 : 0));
  if (c.vector_rows) parts.push_back(fmt::format("rows {}", c.vector_rows));
  if (!c.work_group.empty()) parts.push_back(fmt::format("group [{}]", fmt::join(c.work_group, ", ")));
  return parts.empty() ? "default" : fmt::format("{}", fmt::join(parts, " "));
}

const char* Name(ConfigSource source) {
  switch (source) {
    case ConfigSource::Tuner: return "tuner";
    case ConfigSource::Forced: return "forced";
    case ConfigSource::Rank: return "rank";
    case ConfigSource::Cache: return "tuning cache";
    case ConfigSource::Model: return "model";
  }
  return "?";
}

DerivedOptions DeriveOptions(const CompileOptions& options) {
  const HardwareModel& hw = options.hw;
  DerivedOptions d;
  d.codegen.use_local = options.use_local.value_or(hw.local_memory_managed);
  d.codegen.vectorize = options.vectorize;
  d.codegen.vector_rows = options.vector_rows;
  d.cpu_forms = !d.codegen.use_local && d.codegen.vectorize;
  d.lower = options.lower;
  if (d.cpu_forms) {
    d.lower.relayout_for_vectors = true;
    d.lower.vector_block = VectorBlockElements(hw);
    d.lower.padded_panel_min_bytes = hw.l2_bytes / 4;
    // Fewer outputs than a few per core: split the reduction instead.
    d.lower.split_max_outputs = 4 * std::max<int64_t>(hw.compute_units, 1);
    if (d.lower.row_group_max_bytes < 0) d.lower.row_group_max_bytes = hw.l2_bytes / 2;
  }
  if (d.lower.row_group_max_bytes < 0) d.lower.row_group_max_bytes = 0;
  return d;
}

ResolvedConfig ResolveConfig(const KernelSpec& spec, const KernelSignature& signature,
                             const CompileOptions& options, const DerivedOptions& derived) {
  ResolvedConfig r;
  r.codegen = derived.codegen;
  auto forced = options.forced_tiles.find(spec.name);
  auto rank = options.candidate_rank.find(spec.name);
  auto group = options.work_groups.find(spec.name);
  if (forced != options.forced_tiles.end())
    r.flat_settings.push_back(fmt::format("--tile {}={}", spec.name, fmt::join(forced->second, ",")));
  if (rank != options.candidate_rank.end())
    r.flat_settings.push_back(fmt::format("--rank {}={}", spec.name, rank->second));
  std::string group_setting;
  if (group != options.work_groups.end()) {
    group_setting = fmt::format("--work-group {}={}", spec.name, fmt::join(group->second, ","));
    r.flat_settings.push_back(group_setting);
  }

  // The configuration: the tuner's by name; else the cache's by signature
  // unless --tile or --rank name the kernel.
  if (auto c = options.kernel_config.find(spec.name); c != options.kernel_config.end()) {
    r.config = c->second;
    r.source = ConfigSource::Tuner;
  } else if (options.tuned && forced == options.forced_tiles.end() && rank == options.candidate_rank.end()) {
    if (auto t = options.tuned->find(signature.hash); t != options.tuned->end()) {
      r.config = FromCache(spec, signature, t->second);
      if (r.config) r.source = ConfigSource::Cache;
    }
  }
  if (r.source == ConfigSource::Model) {
    if (forced != options.forced_tiles.end() || group != options.work_groups.end()) {
      r.source = ConfigSource::Forced;
    } else if (rank != options.candidate_rank.end()) {
      r.source = ConfigSource::Rank;
    }
  }

  // Its fields over the program-wide options and the flags.
  if (forced != options.forced_tiles.end()) r.tile = forced->second;
  if (rank != options.candidate_rank.end()) r.rank = rank->second;
  if (r.config) {
    if (!r.config->tile.empty()) {
      r.tile = r.config->tile;
      r.rank = 0;
    }
    if (r.config->use_local) r.codegen.use_local = *r.config->use_local;
    if (r.config->vector) r.codegen.vectorize = *r.config->vector;
    if (r.config->vector_rows) r.codegen.vector_rows = r.config->vector_rows;
  }
  if (r.config && !r.config->work_group.empty()) {
    r.work_group = r.config->work_group;
    if (r.source == ConfigSource::Tuner) r.work_group_origin = fmt::format("the work-group shape of {}", spec.name);
  } else if (group != options.work_groups.end()) {
    r.work_group = group->second;
    r.work_group_origin = group_setting;
  }
  return r;
}

std::vector<int64_t> ChooseTile(const KernelSpec& spec, const TileSearchResult& search,
                                const ResolvedConfig& config) {
  if (config.rank == 0) return search.best().tile;
  if (config.rank < 0 || config.rank >= static_cast<int>(search.ranked.size()))
    TILEC_USER_ERROR("kernel {} has {} tile candidates; candidate {} does not exist", spec.name,
                     search.ranked.size(), config.rank);
  return search.ranked[config.rank].tile;
}

std::vector<int64_t> WorkGroupFor(const KernelSpec& spec, const std::vector<int64_t>& tile,
                                  const HardwareModel& hw, ResolvedConfig& config) {
  if (config.work_group.empty()) return {};
  std::string why = CheckWorkGroup(spec.flat, tile, hw, config.work_group);
  if (why.empty()) return config.work_group;
  if (config.work_group_origin.empty()) {
    config.config->work_group.clear();
    config.work_group.clear();
    return {};
  }
  TILEC_USER_ERROR("{}: {} (the tile is {}; see tilec compile --emit plan)", config.work_group_origin, why,
                   TileText(spec.flat, tile));
}

}  // namespace tilec::compiler
