#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace tessel::cli {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<std::int64_t>(std::llround(seconds));
  if (s >= 3600) {
    return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  }
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string format_rate(double per_second) {
  if (per_second >= 1e6) return fmt::format("{:.1f}M", per_second / 1e6);
  if (per_second >= 1e3) return fmt::format("{:.1f}k", per_second / 1e3);
  return fmt::format("{:.1f}", per_second);
}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::int64_t total, std::string unit,
                   std::int64_t plain_every, bool shown)
    : total_(total),
      unit_(std::move(unit)),
      plain_every_(plain_every > 0 ? plain_every : 1),
      terminal_(stderr_is_terminal()),
      shown_(shown),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(std::int64_t done, double amount,
                      const std::string& status) {
  if (!shown_) return;
  if (first_done_ < 0) {
    // The rate counts from the first update, so that start-up work (and
    // the steps of a resumed run) do not distort it.
    first_done_ = done;
    first_amount_ = amount;
    start_ = std::chrono::steady_clock::now();
  }
  last_done_ = done;
  last_amount_ = amount;
  last_status_ = status;
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    if (now - last_draw_ >= std::chrono::milliseconds(100) || done == total_) {
      last_draw_ = now;
      draw(done, amount, status, false);
    }
  } else if (done % plain_every_ == 0 || done == total_) {
    draw(done, amount, status, false);
  }
}

void Progress::draw(std::int64_t done, double amount, const std::string& status,
                    bool final) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  const double rate = elapsed > 0 ? (amount - first_amount_) / elapsed : 0.0;
  const double step_rate =
      elapsed > 0 ? static_cast<double>(done - first_done_) / elapsed : 0.0;
  const double eta =
      step_rate > 0 ? static_cast<double>(total_ - done) / step_rate : NAN;
  const std::string timing =
      final ? fmt::format("{} {}/s, {} elapsed", format_rate(rate), unit_,
                          format_duration(elapsed))
            : fmt::format("{} {}/s, ETA {}", format_rate(rate), unit_,
                          format_duration(eta));
  if (terminal_) {
    constexpr int kWidth = 24;
    const double frac =
        total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_)
                   : 1.0;
    const int filled = static_cast<int>(frac * kWidth);
    fmt::print(stderr, "\r\x1b[2K[{}{}] {}/{} {} | {}",
               std::string(filled, '#'), std::string(kWidth - filled, '.'),
               done, total_, status, timing);
  } else {
    fmt::print(stderr, "{}/{} {} | {}\n", done, total_, status, timing);
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (finished_ || first_done_ < 0) return;
  finished_ = true;
  if (terminal_) {
    draw(last_done_, last_amount_, last_status_, true);
    fmt::print(stderr, "\n");
  } else if (last_done_ % plain_every_ != 0 && last_done_ != total_) {
    draw(last_done_, last_amount_, last_status_, true);
  }
}

}  // namespace tessel::cli
