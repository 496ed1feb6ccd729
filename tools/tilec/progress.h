// Progress of long work on one updating terminal line: "tilec: compile:
// tiles, kernel 2 of 5". Nothing shows for work that ends within the delay
// (1 s), when disabled (-q, or stderr is not a terminal), and the line is
// erased when the work ends, so the terminal shows only the results.
//
// Set() says what is being done now; Poll() draws it once the delay has
// passed. A Ticker polls from a background thread so that one long step
// (an LLVM build) still shows; tests call Poll() with a fake clock instead.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace tilec::tools {

class Progress {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  using Sink = std::function<void(std::string_view)>;

  // Disabled: every call is a no-op. `sink` receives the terminal text
  // ("\r\x1b[K" + line); default: stderr. `now` defaults to a steady clock.
  Progress(bool enabled, Sink sink = {}, Clock now = {}, double delay_seconds = 1.0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }

  // What is being done now; drawn at once if the delay has passed.
  void Set(std::string what);
  // Draws the current text if the delay has passed and it changed.
  void Poll();
  // Erases the line if one was drawn (before printing results).
  void Clear();

  // The steady clock in seconds.
  static double SteadySeconds();
  // True when stderr is a terminal.
  static bool StderrIsTerminal();

 private:
  void DrawLocked();

  bool enabled_;
  Sink sink_;
  Clock now_;
  double delay_;
  double start_;
  std::mutex mu_;
  std::string what_;
  std::string shown_;  // the text on the terminal line, empty: none
};

// Polls a Progress every `period_seconds` on a thread until destroyed (no
// thread when the Progress is disabled).
class ProgressTicker {
 public:
  explicit ProgressTicker(Progress& progress, double period_seconds = 0.1);
  ~ProgressTicker();
  ProgressTicker(const ProgressTicker&) = delete;
  ProgressTicker& operator=(const ProgressTicker&) = delete;

 private:
  Progress& progress_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// "compile: tiles, kernel 2 of 5" for the compiler's progress hook
// (CompileOptions::progress): kernel is 0-based, kernels 0 for whole-program stages.
std::string CompileStageText(std::string_view what, std::string_view stage, size_t kernel, size_t kernels);

}  // namespace tilec::tools
