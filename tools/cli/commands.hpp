// Each subcommand of `tessel` registers its options on the app and returns
// the function that runs it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace tessel::cli {

using Runner = std::function<int()>;

Runner add_info_command(CLI::App& app);
Runner add_train_command(CLI::App& app);
Runner add_generate_command(CLI::App& app);
Runner add_perplexity_command(CLI::App& app);
Runner add_inspect_command(CLI::App& app);
Runner add_convert_command(CLI::App& app);
Runner add_plan_command(CLI::App& app);
Runner add_quantize_command(CLI::App& app);
Runner add_merge_command(CLI::App& app);
Runner add_ops_command(CLI::App& app);

}  // namespace tessel::cli
