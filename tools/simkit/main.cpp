// simkit: finds what is alike, fast. One program, one command per capability.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "cli.hpp"
#include "core/blas_kernel.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"

namespace {

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "simkit: error: %s\n", simkit::one_line(message).c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace simkit;
  // Restart once with the faster OpenBLAS kernels where its own detection falls short
  // (see core/blas_kernel.hpp); OPENBLAS_CORETYPE set by the user always wins.
  restart_with_better_blas(argv);
  install_interrupt_cleanup();
  CLI::App app{"simkit: finds what is alike, fast: nearest word vectors and analogies, near-duplicate files (ssdeep "
               "fuzzy hashes, edit rates), documents holding every word of a query (posting lists), distributionally similar words (DISCO) and word vectors from their counts, nearest-prototype classifiers (GLVQ), correlated streams (sliding-window CCA), on the CPU or a GPU.\nRun 'simkit COMMAND --help' for a command's options.",
               "simkit"};
  app.set_version_flag("--version", "simkit 0.1.0");
  app.require_subcommand(1);
  app.fallthrough(false);
  cli::Runner neighbors = cli::add_neighbors_command(app);
  cli::Runner hash = cli::add_hash_command(app);
  cli::Runner dedup = cli::add_dedup_command(app);
  cli::Runner postings = cli::add_postings_command(app);
  cli::Runner disco = cli::add_disco_command(app);
  cli::Runner embed = cli::add_embed_command(app);
  cli::Runner lvq = cli::add_lvq_command(app);
  cli::Runner cca = cli::add_cca_command(app);
  cli::Runner devices = cli::add_devices_command(app);
  cli::Runner bench = cli::add_bench_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where = "simkit";
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().front();
      where += " " + sub->get_name();
    }
    return fail(cli::kExitBadInput, std::string(e.what()) + " (see '" + where + " --help')");
  }

  try {
    if (app.got_subcommand("neighbors")) return neighbors();
    if (app.got_subcommand("hash")) return hash();
    if (app.got_subcommand("dedup")) return dedup();
    if (app.got_subcommand("postings")) return postings();
    if (app.got_subcommand("disco")) return disco();
    if (app.got_subcommand("embed")) return embed();
    if (app.got_subcommand("lvq")) return lvq();
    if (app.got_subcommand("cca")) return cca();
    if (app.got_subcommand("devices")) return devices();
    if (app.got_subcommand("bench")) return bench();
    return fail(cli::kExitBadInput, "no command given (see 'simkit --help')");
  } catch (const InputError& e) {
    return fail(cli::kExitBadInput, e.what());
  } catch (const UsageError& e) {
    return fail(cli::kExitBadInput, e.what());
  } catch (const std::bad_alloc&) {
    return fail(cli::kExitFailure, "out of memory");
  } catch (const std::exception& e) {
    return fail(cli::kExitFailure, e.what());
  }
}
