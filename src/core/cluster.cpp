// The processes of a run (simkit/cluster.hpp): MPI when the build has it and a launcher
// started this process, else the one-process case.
#include "simkit/cluster.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <oneapi/tbb/parallel_for.h>
#include <xxhash.h>

#ifdef SIMKIT_HAVE_MPI
#include <mpi.h>
#endif

namespace simkit::cluster {

namespace {

struct State {
  bool mpi = false;  // MPI_Init was called (and MPI_Finalize is due)
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
};
State state;

// The number of processes an MPI launcher says it started, or 0 without one (OpenMPI's
// mpirun, PMIx as srun --mpi=pmix and MPICH's hydra set these).
int launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') return std::atoi(value);
  if (std::getenv("PMIX_RANK") != nullptr) return 1;  // PMIx tells the size only through its API
  return 0;
}

#ifdef SIMKIT_HAVE_MPI
// Every collective starts here: an allreduce of "who failed" (the lowest failing rank, or
// INT_MAX), then the failing rank's code and message from it. Returns normally when no
// rank failed; otherwise the verdict.
bool exchange_status(bool failed, int exit_code, std::string_view error, Verdict& verdict) {
  int mine = failed ? state.rank : INT_MAX, first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == INT_MAX) return false;
  std::string message = state.rank == first ? std::string(error) : std::string();
  long long head[2] = {exit_code, static_cast<long long>(message.size())};
  MPI_Bcast(head, 2, MPI_LONG_LONG, first, MPI_COMM_WORLD);
  message.resize(static_cast<std::size_t>(head[1]));
  MPI_Bcast(message.data(), static_cast<int>(head[1]), MPI_CHAR, first, MPI_COMM_WORLD);
  verdict.exit_code = static_cast<int>(head[0]);
  verdict.error = message;
  return true;
}

#endif

}  // namespace

// A collective's first step: throws RankFailure when another rank failed.
void check_in() {
#ifdef SIMKIT_HAVE_MPI
  if (!state.mpi) return;
  Verdict verdict;
  if (exchange_status(false, 0, {}, verdict)) throw RankFailure(verdict.exit_code, verdict.error);
#endif
}

void start(int& argc, char**& argv) {
  const int launched = launcher_size();
#ifdef SIMKIT_HAVE_MPI
  if (launched == 0) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  state.mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &state.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &state.size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, state.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &state.local_rank);
  MPI_Comm_size(local, &state.local_size);
  MPI_Comm_free(&local);
#else
  (void)argc;
  (void)argv;
  if (launched > 1)
    throw UsageError(fmt::format(
        "started as {} processes by an MPI launcher, but this simkit was built without MPI: each would do the whole "
        "job alone (rebuild with -DSIMKIT_MPI=ON, or run one process)",
        launched));
#endif
}

void stop() {
#ifdef SIMKIT_HAVE_MPI
  if (state.mpi) {
    MPI_Finalize();
    state.mpi = false;
  }
#endif
}

bool mpi_built() noexcept {
#ifdef SIMKIT_HAVE_MPI
  return true;
#else
  return false;
#endif
}

int rank() noexcept { return state.rank; }
int size() noexcept { return state.size; }
bool root() noexcept { return state.rank == 0; }
int local_rank() noexcept { return state.local_rank; }
int local_size() noexcept { return state.local_size; }

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

Verdict conclude(int exit_code, std::string_view error) {
  Verdict verdict{exit_code, std::string(error)};
#ifdef SIMKIT_HAVE_MPI
  if (!state.mpi) return verdict;
  const std::string mine = error.empty() ? std::string()
                                         : fmt::format("rank {} of {} on {}: {}", state.rank, state.size,
                                                       host_name(), error);
  Verdict agreed;
  if (exchange_status(!error.empty(), exit_code, mine, agreed)) return agreed;
  int code = exit_code, largest = 0;
  MPI_Allreduce(&code, &largest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  verdict.exit_code = largest;
#endif
  return verdict;
}

std::string broadcast(std::string bytes) {
  check_in();
#ifdef SIMKIT_HAVE_MPI
  if (!state.mpi) return bytes;
  long long length = static_cast<long long>(bytes.size());
  MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  bytes.resize(static_cast<std::size_t>(length));
  check_in();  // (a rank that could not hold them has failed: none waits on it below)
  // In pieces: MPI counts are ints.
  for (long long at = 0; at < length; at += INT_MAX / 2) {
    const int n = static_cast<int>(std::min<long long>(INT_MAX / 2, length - at));
    MPI_Bcast(bytes.data() + at, n, MPI_CHAR, 0, MPI_COMM_WORLD);
  }
#endif
  return bytes;
}

#ifdef SIMKIT_HAVE_MPI
namespace {

// Every rank's byte count, on root (elsewhere: empty).
std::vector<long long> gathered_lengths(std::size_t bytes) {
  long long length = static_cast<long long>(bytes);
  std::vector<long long> lengths(state.rank == 0 ? static_cast<std::size_t>(state.size) : 0);
  MPI_Gather(&length, 1, MPI_LONG_LONG, lengths.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  return lengths;
}

// Point to point, in pieces of at most INT_MAX / 2 bytes: any size, no int displacements.
void receive_from(int rank, char* at, long long length) {
  for (long long done = 0; done < length; done += INT_MAX / 2) {
    const int n = static_cast<int>(std::min<long long>(INT_MAX / 2, length - done));
    MPI_Recv(at + done, n, MPI_CHAR, rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

void send_to_root(const char* at, long long length) {
  for (long long done = 0; done < length; done += INT_MAX / 2) {
    const int n = static_cast<int>(std::min<long long>(INT_MAX / 2, length - done));
    MPI_Send(at + done, n, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
  }
}

}  // namespace
#endif

std::vector<std::string> gather(std::string_view bytes) {
  check_in();
  std::vector<std::string> out;
#ifdef SIMKIT_HAVE_MPI
  if (state.mpi) {
    const std::vector<long long> lengths = gathered_lengths(bytes.size());
    if (state.rank == 0) {
      out.resize(lengths.size());
      out[0] = std::string(bytes);
      for (std::size_t r = 1; r < lengths.size(); ++r) out[r].resize(static_cast<std::size_t>(lengths[r]));
    }
    check_in();  // (root held them all, or failed: no rank is left sending to it)
    if (state.rank == 0) {
      for (int r = 1; r < state.size; ++r) {
        std::string& part = out[static_cast<std::size_t>(r)];
        receive_from(r, part.data(), static_cast<long long>(part.size()));
      }
    } else {
      send_to_root(bytes.data(), static_cast<long long>(bytes.size()));
    }
    return out;
  }
#endif
  out.emplace_back(bytes);
  return out;
}

std::vector<std::size_t> gather_into(std::string_view bytes, const std::function<char*(std::size_t)>& place) {
  check_in();
  std::vector<long long> lengths{static_cast<long long>(bytes.size())};
#ifdef SIMKIT_HAVE_MPI
  if (state.mpi) lengths = gathered_lengths(bytes.size());
#endif
  if (lengths.empty()) {  // (not root: sent, once root holds the place for them)
#ifdef SIMKIT_HAVE_MPI
    check_in();
    send_to_root(bytes.data(), static_cast<long long>(bytes.size()));
#endif
    return {};
  }
  std::size_t total = 0;
  for (const long long length : lengths) total += static_cast<std::size_t>(length);
  // Where `place` throws (out of memory), root fails here and reports through conclude(),
  // which the other ranks' check-in meets: none is left sending to it.
  char* at = place(total);
  check_in();
  if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
  at += bytes.size();
#ifdef SIMKIT_HAVE_MPI
  for (int r = 1; r < static_cast<int>(lengths.size()); ++r) {
    receive_from(r, at, lengths[static_cast<std::size_t>(r)]);
    at += lengths[static_cast<std::size_t>(r)];
  }
#endif
  std::vector<std::size_t> out(lengths.size());
  for (std::size_t r = 0; r < lengths.size(); ++r) out[r] = static_cast<std::size_t>(lengths[r]);
  return out;
}

void sum(std::span<double> values) {
  check_in();
#ifdef SIMKIT_HAVE_MPI
  if (state.mpi && !values.empty())
    for (std::size_t at = 0; at < values.size(); at += INT_MAX / 2) {
      const int n = static_cast<int>(std::min<std::size_t>(INT_MAX / 2, values.size() - at));
      MPI_Allreduce(MPI_IN_PLACE, values.data() + at, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
#endif
}

void sum(std::span<std::uint64_t> values) {
  check_in();
#ifdef SIMKIT_HAVE_MPI
  if (state.mpi && !values.empty())
    for (std::size_t at = 0; at < values.size(); at += INT_MAX / 2) {
      const int n = static_cast<int>(std::min<std::size_t>(INT_MAX / 2, values.size() - at));
      MPI_Allreduce(MPI_IN_PLACE, values.data() + at, n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    }
#endif
}

std::uint64_t max(std::uint64_t value) {
  check_in();
#ifdef SIMKIT_HAVE_MPI
  if (state.mpi) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
#endif
  return value;
}

std::uint64_t min(std::uint64_t value) {
  check_in();
#ifdef SIMKIT_HAVE_MPI
  if (state.mpi) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
#endif
  return value;
}

void barrier() {
  check_in();
#ifdef SIMKIT_HAVE_MPI
  if (state.mpi) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

namespace {

std::string pack(const std::vector<std::string>& strings) {
  std::size_t bytes = 0;
  for (const std::string& s : strings) bytes += sizeof(std::uint64_t) + s.size();
  std::string out;
  out.reserve(bytes);
  for (const std::string& s : strings) {
    const std::uint64_t n = s.size();
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += s;
  }
  return out;
}

// The strings' places found in one pass, then the strings made on all cores (a million
// hashes' names and signatures: millions of small strings).
void unpack(std::string_view in, std::vector<std::string>& out) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < in.size();) {
    std::uint64_t n = 0;
    std::memcpy(&n, in.data() + i, sizeof n);
    at.push_back(i + sizeof n);
    i += sizeof n + n;
  }
  const std::size_t first = out.size();
  out.resize(first + at.size());
  tbb::parallel_for(std::size_t{0}, at.size(), [&](std::size_t k) {
    const std::size_t end = k + 1 < at.size() ? at[k + 1] - sizeof(std::uint64_t) : in.size();
    out[first + k].assign(in.substr(at[k], end - at[k]));
  });
}

}  // namespace

std::vector<std::string> broadcast_strings(std::vector<std::string> strings) {
  if (size() == 1) return strings;
  const std::string packed = broadcast(root() ? pack(strings) : std::string());
  if (root()) return strings;  // (its own, as they were)
  strings.clear();
  unpack(packed, strings);
  return strings;
}

std::vector<std::string> allgather_strings(const std::vector<std::string>& mine) {
  if (size() == 1) return mine;
  std::string all;
  for (const std::string& part : gather(pack(mine))) all += part;
  all = broadcast(std::move(all));
  std::vector<std::string> out;
  unpack(all, out);
  return out;
}

void check_same_file(const std::string& path) {
  if (size() == 1) return;
  // Size, first and last MiB: cheap next to reading the file, and what differs between
  // two copies of a model in practice (another version, a cut-off copy).
  std::uint64_t digest = 0;
  if (std::ifstream in(path, std::ios::binary); in) {
    in.seekg(0, std::ios::end);
    const auto length = static_cast<std::uint64_t>(in.tellg());
    constexpr std::uint64_t kPiece = std::uint64_t{1} << 20;
    std::string head(static_cast<std::size_t>(std::min(length, kPiece)), '\0'), tail = head;
    in.seekg(0);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    in.seekg(static_cast<std::streamoff>(length - tail.size()));
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    digest = XXH3_64bits_withSeed(head.data(), head.size(), length) ^ (XXH3_64bits(tail.data(), tail.size()) * 3);
    if (digest == 0) digest = 1;
  }
  const std::vector<std::uint64_t> mine = {digest};
  const std::vector<std::uint64_t> all = broadcast_values(gather_values<std::uint64_t>(mine));
  // 0: the rank cannot read it, and says so itself when it opens the file.
  std::vector<std::string> differ;
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[0] != 0 && all[r] != 0 && all[r] != all[0]) differ.push_back(std::to_string(r));
  const auto ranks = [](const std::vector<std::string>& list) {
    return fmt::format("rank{} {}", list.size() == 1 ? "" : "s", fmt::join(list, ", "));
  };
  if (!differ.empty())
    throw InputError(Location{.file = path}, fmt::format("differs between ranks: {} read{} another file than rank 0 "
                                                         "(every rank must read the same input)",
                                                         ranks(differ), differ.size() == 1 ? "s" : ""));
}

Parts parts(std::size_t local) {
  const std::vector<std::uint64_t> mine = {local};
  const std::vector<std::uint64_t> all = broadcast_values(gather_values<std::uint64_t>(mine));
  Parts out{0, local, 0};
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (static_cast<int>(r) < rank()) out.first += all[r];
    out.total += all[r];
  }
  return out;
}

}  // namespace simkit::cluster
