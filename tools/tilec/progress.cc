// Progress of long work on one terminal line (see progress.h).
#include "tools/tilec/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace tilec::tools {

double Progress::SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool Progress::StderrIsTerminal() { return isatty(STDERR_FILENO) != 0; }

Progress::Progress(bool enabled, Sink sink, Clock now, double delay_seconds)
    : enabled_(enabled),
      sink_(sink ? std::move(sink) : Sink([](std::string_view s) {
        std::fwrite(s.data(), 1, s.size(), stderr);
        std::fflush(stderr);
      })),
      now_(now ? std::move(now) : Clock(&SteadySeconds)),
      delay_(delay_seconds),
      start_(enabled ? now_() : 0) {}

Progress::~Progress() { Clear(); }

void Progress::Set(std::string what) {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  what_ = std::move(what);
  DrawLocked();
}

void Progress::Poll() {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  DrawLocked();
}

void Progress::Clear() {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  if (!shown_.empty()) sink_("\r\x1b[K");
  shown_.clear();
  what_.clear();
}

void Progress::DrawLocked() {
  if (what_.empty() || what_ == shown_ || now_() - start_ < delay_) return;
  sink_(fmt::format("\r\x1b[Ktilec: {}", what_));
  shown_ = what_;
}

ProgressTicker::ProgressTicker(Progress& progress, double period_seconds) : progress_(progress) {
  if (!progress.enabled()) return;
  auto period = std::chrono::duration<double>(period_seconds);
  thread_ = std::thread([this, period] {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, period, [this] { return stop_; })) progress_.Poll();
  });
}

ProgressTicker::~ProgressTicker() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

std::string CompileStageText(std::string_view what, std::string_view stage, size_t kernel, size_t kernels) {
  if (kernels == 0) return fmt::format("{}: {}", what, stage);
  return fmt::format("{}: {}, kernel {} of {}", what, stage, kernel + 1, kernels);
}

}  // namespace tilec::tools
