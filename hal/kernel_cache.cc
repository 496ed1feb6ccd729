#include "hal/kernel_cache.h"

#include <fmt/format.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/xxhash.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace tilec::hal {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'T', 'I', 'L', 'E', 'C', 'K', 'C', '1'};
constexpr size_t kHeader = sizeof(kMagic) + 2 * sizeof(uint64_t);  // magic, size, checksum
constexpr std::string_view kSuffix = ".bin";

std::string Header(std::string_view payload) {
  std::string h(kMagic, sizeof(kMagic));
  uint64_t size = payload.size();
  uint64_t sum = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t*>(payload.data()), payload.size()));
  h.append(reinterpret_cast<const char*>(&size), sizeof size);
  h.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  return h;
}

bool IsEntry(const fs::path& p) { return p.extension() == kSuffix && p.stem().string().size() == 64; }

}  // namespace

KernelCache::KernelCache(KernelCacheOptions options) : options_(std::move(options)) {}

std::string KernelCache::EntryName(std::string_view key) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t*>(key.data()), key.size()));
  std::string hex;
  for (uint8_t b : digest) hex += fmt::format("{:02x}", b);
  return hex + std::string(kSuffix);
}

std::optional<std::string> KernelCache::Get(std::string_view key) const {
  if (!options_.enabled || options_.dir.empty()) return std::nullopt;
  fs::path path = fs::path(options_.dir) / EntryName(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream data;
  data << in.rdbuf();
  std::string bytes = std::move(data).str();
  in.close();
  std::error_code ec;
  if (bytes.size() < kHeader) {
    fs::remove(path, ec);  // corrupt: dropped, replaced by the next Put
    return std::nullopt;
  }
  std::string_view payload = std::string_view(bytes).substr(kHeader);
  if (bytes.compare(0, kHeader, Header(payload)) != 0) {
    fs::remove(path, ec);
    return std::nullopt;
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used
  return std::string(payload);
}

void KernelCache::Put(std::string_view key, std::string_view payload) const {
  if (!options_.enabled || options_.dir.empty()) return;
  std::error_code ec;
  fs::path dir(options_.dir);
  fs::create_directories(dir, ec);
  // A name no other writer (thread or process) uses.
  static std::atomic<uint64_t> counter{0};
  fs::path tmp = dir / fmt::format(".tmp-{}-{}-{}", getpid(), counter.fetch_add(1),
                                   std::chrono::steady_clock::now().time_since_epoch().count());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    std::string header = Header(payload);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, dir / EntryName(key), ec);
  if (ec) fs::remove(tmp, ec);
  Trim();
}

std::vector<KernelCacheEntry> KernelCache::List() const {
  std::vector<std::pair<fs::file_time_type, KernelCacheEntry>> found;
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (const fs::directory_entry& e : fs::directory_iterator(options_.dir, ec)) {
    if (!IsEntry(e.path())) continue;
    std::error_code ec2;
    uint64_t size = e.file_size(ec2);
    fs::file_time_type time = e.last_write_time(ec2);
    if (ec2) continue;  // removed meanwhile
    KernelCacheEntry entry{e.path().filename().string(), size,
                           std::chrono::duration_cast<std::chrono::seconds>(now - time).count()};
    found.emplace_back(time, entry);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<KernelCacheEntry> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

uint64_t KernelCache::TotalBytes() const {
  uint64_t total = 0;
  for (const KernelCacheEntry& e : List()) total += e.bytes;
  return total;
}

size_t KernelCache::Clear() const {
  size_t removed = 0;
  std::error_code ec;
  std::vector<fs::path> paths;
  for (const fs::directory_entry& e : fs::directory_iterator(options_.dir, ec))
    if (IsEntry(e.path()) || e.path().filename().string().rfind(".tmp-", 0) == 0) paths.push_back(e.path());
  for (const fs::path& p : paths) {
    std::error_code ec2;
    if (fs::remove(p, ec2) && IsEntry(p)) ++removed;
  }
  return removed;
}

void KernelCache::Trim() const {
  std::vector<KernelCacheEntry> entries = List();  // newest first
  uint64_t total = 0;
  for (const KernelCacheEntry& e : entries) {
    total += e.bytes;
    if (total > options_.max_bytes) {
      std::error_code ec;
      fs::remove(fs::path(options_.dir) / e.name, ec);
    }
  }
}

}  // namespace tilec::hal
