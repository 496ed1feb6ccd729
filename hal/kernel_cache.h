// The persistent cache of compiled kernels: device code (LLVM object code,
// OpenCL program binaries) in files under one directory, so a second process
// compiling the same kernels skips code generation.
//
// An entry's name is the SHA-256 of its key; a backend's key holds
// everything the code depends on: the kernel IR's text (the llvm device's:
// the sem text and the emitter's build id, hal/llvm/emit_llvm.h), Tilec's version
// (KernelCacheOptions::version), the device fingerprint (name, driver, CPU
// features) and the code generation options. Each file holds a header
// (magic, payload size, xxh3 checksum) and the payload.
//
//  * Writes are atomic: a temporary file in the directory, then rename, so
//    readers in any process see a whole entry or none.
//  * An entry that is short, has a bad magic or checksum is corrupt: Get
//    deletes it and reports a miss, and the next Put replaces it.
//  * The directory is kept under max_bytes by deleting the least recently
//    used entries (by modification time, which Get refreshes) after a Put.
//  * I/O failures never fail a compile: the cache just misses.
//
// Thread and process safety: any number of threads and processes may use one
// directory at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::hal {

struct KernelCacheOptions {
  bool enabled = false;
  std::string dir;                      // created on first Put
  uint64_t max_bytes = 512ull << 20;    // the directory's bound
  std::string version;                  // Tilec's version, part of every key
};

struct KernelCacheEntry {
  std::string name;  // file name (hex SHA-256 of the key)
  uint64_t bytes = 0;
  int64_t age_seconds = 0;  // since last use
};

// How often a device's Build found its code in the disk cache.
struct KernelCacheStats {
  uint64_t disk_hits = 0;
  uint64_t disk_misses = 0;
  // The llvm device: modules lowered from sem to LLVM IR (a module whose
  // code the caches hold is not, where its sem text keys it).
  uint64_t modules_emitted = 0;
};

class KernelCache {
 public:
  explicit KernelCache(KernelCacheOptions options);

  const KernelCacheOptions& options() const { return options_; }

  // The payload stored under `key`; nullopt if absent, disabled or corrupt.
  std::optional<std::string> Get(std::string_view key) const;
  void Put(std::string_view key, std::string_view payload) const;

  std::vector<KernelCacheEntry> List() const;  // newest first
  uint64_t TotalBytes() const;
  // Deletes every entry (and stray temporary files); returns how many.
  size_t Clear() const;

  // Hex SHA-256 of `key`: the entry's file name.
  static std::string EntryName(std::string_view key);

 private:
  void Trim() const;
  KernelCacheOptions options_;
};

}  // namespace tilec::hal
