// simkit: finds what is alike, fast. One program, one command per capability.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include "cli.hpp"
#include "core/blas_kernel.hpp"
#include "simkit/cluster.hpp"
#include "simkit/device.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"

namespace {

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "simkit: error: %s\n", simkit::one_line(message).c_str());
  return code;
}

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  using namespace simkit;
  // Restart once with the faster OpenBLAS kernels where its own detection falls short
  // (see core/blas_kernel.hpp); OPENBLAS_CORETYPE set by the user always wins.
  restart_with_better_blas(argv);
  install_interrupt_cleanup();
  try {
    cluster::start(argc, argv);
  } catch (const UsageError& e) {
    return fail(cli::kExitBadInput, e.what());
  }
  const int code = run(argc, argv);
  cluster::stop();
  if (cuda_started()) {
    // Every output is written and closed by now; the CUDA runtime's teardown of the
    // contexts at exit (0.15-0.28 s on an H100, against 0.03 s for a CPU run:
    // bench/results/embed.md) is left to the driver, which frees them when the process ends.
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}

namespace {

// The command, and its outcome agreed with the other ranks under mpirun: every rank exits
// with the same code, and rank 0 prints the one error line.
int run(int argc, char** argv) {
  using namespace simkit;
  const auto outcome = [](int code, const std::string& error) {
    const cluster::Verdict verdict = cluster::conclude(code, error);
    return verdict.error.empty() || !cluster::root() ? verdict.exit_code : fail(verdict.exit_code, verdict.error);
  };
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
  } catch (const CLI::CallForHelp& e) {  // the same on every rank: rank 0 prints it
    return cluster::root() ? app.exit(e) : 0;
  } catch (const CLI::CallForAllHelp& e) {
    return cluster::root() ? app.exit(e) : 0;
  } catch (const CLI::CallForVersion& e) {
    return cluster::root() ? app.exit(e) : 0;
  } catch (const CLI::ParseError& e) {
    std::string where = "simkit";
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().front();
      where += " " + sub->get_name();
    }
    return outcome(cli::kExitBadInput, std::string(e.what()) + " (see '" + where + " --help')");
  }

  cli::hide_unused_gpus(app);
  try {
    int code = cli::kExitBadInput;
    if (app.got_subcommand("neighbors")) code = neighbors();
    else if (app.got_subcommand("hash")) code = hash();
    else if (app.got_subcommand("dedup")) code = dedup();
    else if (app.got_subcommand("postings")) code = postings();
    else if (app.got_subcommand("disco")) code = disco();
    else if (app.got_subcommand("embed")) code = embed();
    else if (app.got_subcommand("lvq")) code = lvq();
    else if (app.got_subcommand("cca")) code = cca();
    else if (app.got_subcommand("devices")) code = devices();
    else if (app.got_subcommand("bench")) code = bench();
    else return outcome(cli::kExitBadInput, "no command given (see 'simkit --help')");
    return outcome(code, "");
  } catch (const cluster::RankFailure& e) {  // another rank failed; all agreed on it
    return cluster::root() ? fail(e.exit_code(), e.what()) : e.exit_code();
  } catch (const InputError& e) {
    return outcome(cli::kExitBadInput, e.what());
  } catch (const UsageError& e) {
    return outcome(cli::kExitBadInput, e.what());
  } catch (const std::bad_alloc&) {
    return outcome(cli::kExitFailure, "out of memory");
  } catch (const std::exception& e) {
    return outcome(cli::kExitFailure, e.what());
  }
}

}  // namespace
