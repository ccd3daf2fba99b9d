// Probe: how long the host takes to make the GPU's tables of one batch of postings queries
// (postings/gpu_tables.hpp), no GPU needed. Median of 41 builds of the whole batch's tables
// from the index's resident list table; `serial` as a third argument limits TBB to one
// thread (the tables are made on one core since commit 67bf3ce; before it, on all cores).
//   g++ -std=c++20 -O2 -Iinclude -Isrc bench/probes/postings_tables.cpp -Lbuild/src -lsimkit -ltbb \
//       -Wl,-rpath,$PWD/build/src -o tables_probe
//   ./tables_probe brown.skp brown-queries.txt [serial]   (bench/results/postings.md)
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "postings/gpu_tables.hpp"
#include "simkit/postings.hpp"

using namespace simkit::postings;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s INDEX.skp QUERIES [serial]\n", argv[0]);
    return 2;
  }
  const tbb::global_control threads(tbb::global_control::max_allowed_parallelism, argc > 3 ? 1 : 1024);
  const Index index = read_index(argv[1]);
  const Queries queries = read_queries(argv[2], index, true);
  const std::vector<detail::GpuList> lists = detail::resident_lists(index);
  detail::GpuTables tables;
  std::vector<double> ms;
  for (int r = 0; r < 41; ++r) {
    const auto start = std::chrono::steady_clock::now();
    detail::build_gpu_tables(index, queries, 0, queries.size(), &lists, 256, tables);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("tables: median %.4f ms (min %.4f) for %zu queries, %zu entries, %zu slices\n", ms[ms.size() / 2], ms[0],
              queries.size(), tables.entries.size(), tables.slices.size());
}
