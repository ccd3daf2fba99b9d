// A small program the cluster tests start under mpirun to see how the collectives behave
// when a rank fails inside one (no simkit command can be made to fail there at will):
//   simkit_cluster_probe gather      every rank's bytes gathered on rank 0 (rank R's:
//                                    R + 1 MiB, past what MPI sends before the
//                                    receiver is ready)
//   simkit_cluster_probe root-fails  the same, rank 0 out of memory for them
// Each rank prints one line ("rank R: ...") and exits as simkit's main does: with the
// agreed code, the failing rank's message printed by rank 0.
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "simkit/cluster.hpp"

int main(int argc, char** argv) {
  using namespace simkit;
  cluster::start(argc, argv);
  const std::string mode = argc > 1 ? argv[1] : "gather";
  const std::size_t bytes = (std::size_t{1} << 20) * static_cast<std::size_t>(cluster::rank() + 1);
  const std::string mine(bytes, static_cast<char>('a' + cluster::rank()));
  int code = 0;
  std::string error;
  try {
    std::vector<char> all;
    const std::vector<std::size_t> sizes = cluster::gather_into(mine, [&](std::size_t total) {
      if (mode == "root-fails") throw std::bad_alloc();
      all.resize(total);
      return all.data();
    });
    std::size_t received = 0;
    for (const std::size_t size : sizes) received += size;
    cluster::barrier();
    std::printf("rank %d: gathered %zu bytes\n", cluster::rank(), received);
  } catch (const cluster::RankFailure& e) {  // another rank failed; all agreed on it
    std::printf("rank %d: stopped: %s\n", cluster::rank(), e.what());
    std::fflush(stdout);
    cluster::stop();
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    code = 1;
    error = "out of memory";
    std::printf("rank %d: failed: %s\n", cluster::rank(), error.c_str());
  }
  std::fflush(stdout);
  const cluster::Verdict verdict = cluster::conclude(code, error);
  if (cluster::root() && !verdict.error.empty()) std::fprintf(stderr, "probe: %s\n", verdict.error.c_str());
  cluster::stop();
  return verdict.exit_code;
}
