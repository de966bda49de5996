#include "cli/train/checkpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/read_file.hpp"
#include "io/staged_directory.hpp"

namespace tessel::cli {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    throw_error(ErrorCode::IoFailure,
                fmt::format("[checkpoint] writing '{}' failed", path.string()));
  }
}

std::string read_text(const fs::path& path) { return io::read_text_file(path); }

json state_json(const TrainState& s) {
  return {{"format", "tessel-train-1"},
          {"task", s.task},
          {"data", s.data},
          {"seq_len", s.seq_len},
          {"seed", s.seed},
          {"step", s.step},
          {"total_steps", s.total_steps},
          {"batch_size", s.batch_size},
          {"lr", s.lr},
          {"min_lr", s.min_lr},
          {"warmup_steps", s.warmup_steps},
          {"weight_decay", s.weight_decay},
          {"beta1", s.beta1},
          {"beta2", s.beta2},
          {"clip", s.clip},
          {"evaluation", s.evaluation},
          {"losses", s.losses}};
}

}  // namespace

void save_checkpoint(const fs::path& dir, const CausalLM& lm,
                     const Optimizer& optimizer, const TrainState& state) {
  io::StagedDirectory staging(dir);
  const fs::path& staged = staging.path();
  lm.save(staged);
  const auto names = lm.named_parameters();
  std::vector<Tensor> tensors;
  for (auto& [key, t] : optimizer.state_dict()) {
    // "3.exp_avg" -> "<name of parameter 3>.exp_avg".
    const auto dot = key.find('.');
    std::string name = key;
    if (dot != std::string::npos) {
      name = names.at(std::stoul(key.substr(0, dot))).first + key.substr(dot);
    }
    Tensor named = t;
    named.set_name(name);
    tensors.push_back(named);
  }
  save_safetensors(staged / "optimizer.safetensors", tensors);
  write_text(staged / "trainer_state.json", state_json(state).dump(1) + "\n");
  write_text(
      staged / "loss.svg",
      loss_curve_svg(state.losses, fmt::format("tessel train: {} ({} steps)",
                                               state.task, state.step)));
  staging.commit();
}

TrainState load_train_state(const fs::path& dir) {
  json j;
  try {
    j = json::parse(read_text(dir / "trainer_state.json"));
  } catch (const json::exception& e) {
    throw_error(ErrorCode::BadConfig,
                fmt::format("[checkpoint] {}: {}",
                            (dir / "trainer_state.json").string(), e.what()));
  }
  TrainState s;
  try {
    if (j.at("format") != "tessel-train-1") {
      throw_error(ErrorCode::BadConfig,
                  fmt::format("[checkpoint] unknown trainer_state format {}",
                              j.at("format").dump()));
    }
    s.task = j.at("task");
    s.data = j.at("data");
    s.seq_len = j.at("seq_len");
    s.seed = j.at("seed");
    s.step = j.at("step");
    s.total_steps = j.at("total_steps");
    s.batch_size = j.at("batch_size");
    s.lr = j.at("lr");
    s.min_lr = j.at("min_lr");
    s.warmup_steps = j.at("warmup_steps");
    s.weight_decay = j.at("weight_decay");
    s.beta1 = j.at("beta1");
    s.beta2 = j.at("beta2");
    s.clip = j.at("clip");
    s.evaluation = j.at("evaluation");
    s.losses = j.at("losses").get<std::vector<double>>();
  } catch (const json::exception& e) {
    throw_error(ErrorCode::BadConfig,
                fmt::format("[checkpoint] {}: {}",
                            (dir / "trainer_state.json").string(), e.what()));
  }
  return s;
}

std::map<std::string, Tensor> load_optimizer_state(const fs::path& dir,
                                                   const CausalLM& lm) {
  const SafetensorsFile file = load_safetensors(dir / "optimizer.safetensors");
  // "<parameter name>.<buffer>" -> "<parameter index>.<buffer>"; buffer
  // names have no dots, parameter names do.
  std::map<std::string, std::size_t> index;
  const auto names = lm.named_parameters();
  for (std::size_t i = 0; i < names.size(); ++i) index[names[i].first] = i;
  std::map<std::string, Tensor> state;
  for (const Tensor& t : file.tensors) {
    std::string key = t.name();
    const auto dot = key.rfind('.');
    if (dot != std::string::npos) {
      if (const auto it = index.find(key.substr(0, dot)); it != index.end()) {
        key = std::to_string(it->second) + key.substr(dot);
      }
    }
    state[key] = t.clone();  // the optimiser updates its buffers in place
  }
  return state;
}

std::string loss_curve_svg(const std::vector<double>& losses,
                           const std::string& title) {
  constexpr double kW = 640, kH = 400, kLeft = 60, kRight = 20, kTop = 40,
                   kBottom = 50;
  std::vector<double> finite;
  for (double l : losses) {
    if (std::isfinite(l) && l > 0) finite.push_back(l);
  }
  double lo = 1e-3, hi = 10;
  if (!finite.empty()) {
    lo = *std::min_element(finite.begin(), finite.end());
    hi = *std::max_element(finite.begin(), finite.end());
  }
  const double y0 = std::floor(std::log10(lo)),
               y1 = std::ceil(std::log10(hi)) + (lo == hi ? 1 : 0);
  const double n = std::max<double>(1, static_cast<double>(losses.size()) - 1);
  auto px = [&](double i) { return kLeft + (kW - kLeft - kRight) * i / n; };
  auto py = [&](double l) {
    return kTop + (kH - kTop - kBottom) * (y1 - std::log10(l)) /
                      std::max(1.0, y1 - y0);
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"24\" font-size=\"15\">{}</text>\n",
      kW, kH, kLeft, title);
  for (double e = y0; e <= y1; ++e) {
    const double y = py(std::pow(10.0, e));
    svg += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" "
        "stroke=\"#ddd\"/>\n<text x=\"{}\" y=\"{:.1f}\" "
        "text-anchor=\"end\">1e{}</text>\n",
        kLeft, y, kW - kRight, y, kLeft - 6, y + 4, static_cast<int>(e));
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">step</text>\n"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n"
      "<text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" "
      "text-anchor=\"middle\">training loss</text>\n",
      (kW + kLeft) / 2, kH - 12, kW - kRight, kH - 30, losses.size(), kH / 2,
      kH / 2);
  std::string points;
  for (std::size_t i = 0; i < losses.size(); ++i) {
    if (!std::isfinite(losses[i]) || losses[i] <= 0) continue;
    points += fmt::format("{:.1f},{:.1f} ", px(static_cast<double>(i)),
                          py(losses[i]));
  }
  svg += fmt::format(
      "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" "
      "points=\"{}\"/>\n</svg>\n",
      points);
  return svg;
}

}  // namespace tessel::cli
