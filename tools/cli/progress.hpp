// Progress of long work on stderr: on a terminal a bar redrawn in place
// (at most ten times a second) with rate and ETA; when stderr is a pipe or
// file, a plain line every `plain_every` updates and at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace tessel::cli {

class Progress {
 public:
  // `unit` names what the rate counts ("tok", "MB"). A progress that is not
  // `shown` draws nothing (the ranks of a distributed run but the first).
  Progress(std::int64_t total, std::string unit, std::int64_t plain_every,
           bool shown = true);
  ~Progress();

  // `done` steps of total are finished, `amount` units processed in all;
  // `status` is shown after the bar (e.g. "loss 0.123").
  void update(std::int64_t done, double amount, const std::string& status);
  // Ends the bar's line (a terminal keeps the last drawing).
  void finish();

  static bool stderr_is_terminal();

 private:
  void draw(std::int64_t done, double amount, const std::string& status,
            bool final);

  std::int64_t total_;
  std::string unit_;
  std::int64_t plain_every_;
  bool terminal_;
  bool shown_;
  bool finished_ = false;
  std::int64_t first_done_ = -1;
  double first_amount_ = 0;
  std::int64_t last_done_ = 0;
  double last_amount_ = 0;
  std::string last_status_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

// 83 s -> "1:23"; 3725 s -> "1:02:05".
std::string format_duration(double seconds);
// 12345.6 -> "12.3k".
std::string format_rate(double per_second);

}  // namespace tessel::cli
