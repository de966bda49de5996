// The `tessel` command. Library errors become a one-line message and an
// exit code per error family; nothing aborts on user input.
#include <fmt/format.h>

#include <map>

#include "cli/commands.hpp"
#include "cli/foreign_errors.hpp"
#include "tessel/tessel.hpp"

namespace {

int exit_code_for(const tessel::Error& e) {
  switch (e.error_code()) {
    case tessel::ErrorCode::MalformedFile:
    case tessel::ErrorCode::IoFailure: return 3;
    case tessel::ErrorCode::BadConfig: return 4;
    default: return 2;
  }
}

int report(const tessel::Error& e) {
  fmt::print(stderr, "tessel: error {}: {}\n", e.code(), e.message());
  return exit_code_for(e);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessel: tensors, models and their files"};
  app.set_version_flag("--version",
                       std::string("tessel ") + TESSEL_VERSION_STRING);
  app.require_subcommand(1);
  std::map<std::string, tessel::cli::Runner> runners;
  runners["info"] = tessel::cli::add_info_command(app);
  runners["train"] = tessel::cli::add_train_command(app);
  runners["generate"] = tessel::cli::add_generate_command(app);
  runners["perplexity"] = tessel::cli::add_perplexity_command(app);
  runners["inspect"] = tessel::cli::add_inspect_command(app);
  runners["convert"] = tessel::cli::add_convert_command(app);
  runners["plan"] = tessel::cli::add_plan_command(app);
  runners["quantize"] = tessel::cli::add_quantize_command(app);
  runners["merge"] = tessel::cli::add_merge_command(app);
  runners["ops"] = tessel::cli::add_ops_command(app);
  try {
    app.parse(argc, argv);
    for (auto* sub : app.get_subcommands())
      return runners.at(sub->get_name())();
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const tessel::Error& e) {
    return report(e);
  } catch (const std::exception& e) {
    return report(tessel::cli::as_tessel_error(e));
  } catch (...) {
    return report(tessel::Error(tessel::ErrorCode::IoFailure,
                                "[internal] an unknown exception (a tessel "
                                "bug: please report it)"));
  }
  return 0;
}
