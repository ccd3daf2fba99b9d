// One simkit run over several processes: the MPI ranks that `mpirun -np N simkit ...` (or
// `srun --mpi=pmix`) starts, on one host or many. Every rank runs the same command; rank 0
// reads what is read once and writes the output. This is the small communication layer
// the pairwise engine and the modules share: who this process is, the few collectives
// simkit needs, and errors that every rank agrees on. Started alone (or built without
// MPI), a process is rank 0 of 1 and every collective returns its input.
//
// Errors are collective: each collective first checks in with every rank, so when a rank
// fails (bad input, out of memory, a lost GPU) the others learn it at their next
// collective, stop with RankFailure, and every rank exits with the failing rank's code and
// one message naming it. A rank that fails reports through conclude().
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "simkit/error.hpp"

namespace simkit::cluster {

// Starts MPI when an MPI launcher started this process and the build has MPI
// (SIMKIT_MPI). A launcher of several processes and a build without MPI: UsageError, since
// every process would do the whole job alone. Call once, first thing in main().
void start(int& argc, char**& argv);
// Ends MPI; call once before leaving main() (nothing to do when start() found no launcher).
void stop();

bool mpi_built() noexcept;
int rank() noexcept;       // 0 alone
int size() noexcept;       // 1 alone
bool root() noexcept;      // rank 0: reads what is read once, writes outputs and messages
int local_rank() noexcept; // this rank's number among the ranks of its host
int local_size() noexcept; // the ranks of this host (1 alone)
std::string host_name();

// A rank failed: thrown on the other ranks by their next collective. what() names the
// rank and its cause ("rank 1 of 2 on node7: cannot read ..."); exit_code() is what the
// failing rank would have exited with (2: bad input or usage, 1: failure).
class RankFailure : public Error {
 public:
  RankFailure(int exit_code, const std::string& message) : Error(message), exit_code_(exit_code) {}
  int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

// The outcome every rank agrees on at the end of a command.
struct Verdict {
  int exit_code = 0;
  std::string error;  // the one line to print (by rank 0); empty when no rank failed
};
// Every rank calls this once when its command ends, with its exit code and, when it
// failed, its error message (not after catching RankFailure, which already agreed).
// With several ranks the first failing rank's code and message win, the message
// prefixed with "rank R of N on HOST: "; otherwise the largest exit code.
Verdict conclude(int exit_code, std::string_view error);

// ---- collectives: every rank calls them in the same order

// Root's bytes, on every rank.
std::string broadcast(std::string bytes);
// On root: every rank's bytes in rank order; elsewhere: nothing.
std::vector<std::string> gather(std::string_view bytes);
// The same, received straight into the caller's memory: on root, every rank's bytes one
// after another in rank order into `place(total)` (called once, with their total), and
// each rank's byte count returned; elsewhere: this rank's bytes sent, nothing returned.
// For large gathers (a million hashes' pairs), which need no copies on the way.
std::vector<std::size_t> gather_into(std::string_view bytes, const std::function<char*(std::size_t total)>& place);
// Element-wise sums over the ranks, in place on every rank.
void sum(std::span<double> values);
void sum(std::span<std::uint64_t> values);
// The largest and smallest values over the ranks.
std::uint64_t max(std::uint64_t value);
std::uint64_t min(std::uint64_t value);
// Waits for every rank (and checks in, as every collective does).
void barrier();
// Only the check-in: throws RankFailure when another rank failed. Call it before a
// collective of another library (NCCL), which would wait forever for a rank that failed.
void check_in();

// Root's strings, on every rank.
std::vector<std::string> broadcast_strings(std::vector<std::string> strings);
// Every rank's strings, concatenated in rank order, on every rank.
std::vector<std::string> allgather_strings(const std::vector<std::string>& mine);

// Plain values through broadcast and gather.
template <typename T>
std::vector<T> broadcast_values(std::vector<T> values) {
  std::string bytes(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  bytes = broadcast(std::move(bytes));
  values.resize(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}
// On root: every rank's values, concatenated in rank order; elsewhere: nothing.
template <typename T>
std::vector<T> gather_values(std::span<const T> values) {
  std::vector<T> out;  // (received in place: no copies on the way)
  gather_into({reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)}, [&](std::size_t total) {
    out.resize(total / sizeof(T));
    return reinterpret_cast<char*>(out.data());
  });
  return out;
}

// Refuses inputs that differ between ranks (a model file that differs between hosts):
// compares a digest of each rank's `path` (its size, its first and last MiB) and throws
// InputError on every rank naming the file and the ranks that disagree.
void check_same_file(const std::string& path);

// This process's share of a job's workers: one a GPU it drives (or one for the CPU),
// numbered across the ranks in rank order.
struct Parts {
  std::size_t first = 0;  // the number of this process's first worker
  std::size_t local = 1;  // workers in this process
  std::size_t total = 1;  // workers of all ranks
};
Parts parts(std::size_t local);

}  // namespace simkit::cluster
