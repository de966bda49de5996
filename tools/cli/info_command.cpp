#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "cli/commands.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

namespace {

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string json_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& i : items) quoted.push_back("\"" + json_escape(i) + "\"");
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

int run_info(bool json) {
  const RuntimeInfo info = runtime_info();
  std::vector<std::string> devices;
  for (const auto& d : info.devices) devices.push_back(d.str());
  if (json) {
    fmt::print(
        "{{\"version\": \"{}\", \"build_type\": \"{}\", \"compiler\": \"{}\", "
        "\"sanitizers\": {}, \"simd\": {{\"supported\": {}, \"dispatched\": "
        "\"{}\"}}, \"threads\": {}, \"devices\": {}, \"gemm\": \"{}\"}}\n",
        info.build.version, info.build.build_type,
        json_escape(info.build.compiler), info.build.sanitizers,
        json_list(info.simd.supported), info.simd.dispatched, info.num_threads,
        json_list(devices), json_escape(info.gemm_engine));
    return 0;
  }
  fmt::print("tessel {}\n", info.build.version);
  fmt::print("  build:    {} ({}{})\n", info.build.build_type,
             info.build.compiler, info.build.sanitizers ? ", ASan+UBSan" : "");
  fmt::print("  simd:     {} (runtime dispatch; supported: {})\n",
             info.simd.dispatched, fmt::join(info.simd.supported, " "));
  fmt::print("  threads:  {}\n", info.num_threads);
  fmt::print("  devices:  {}\n", fmt::join(devices, ", "));
  fmt::print("  gemm:     {}\n", info.gemm_engine);
  return 0;
}

}  // namespace

Runner add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "info", "Version, build, SIMD targets, threads, devices and GEMM engine");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print one JSON object");
  return [json] { return run_info(*json); };
}

}  // namespace tessel::cli
