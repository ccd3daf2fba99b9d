// simkit devices: what this build and this machine offer; under mpirun, what each rank
// offers, printed by rank 0.
#include <cstdio>

#include <fmt/format.h>

#include "cli.hpp"
#include "simkit/cluster.hpp"
#include "simkit/device.hpp"
#include "simkit/threads.hpp"

namespace simkit::cli {

namespace {

// This process's devices, a line each.
std::string device_lines() {
  std::string out = fmt::format("cpu\t{} threads", max_threads());
  if (const std::size_t allowed = cores_allowed(), online = cores_online(); allowed < online)
    out += fmt::format(" (bound to {} of {} cores)", allowed, online);
  out += "\n";
  if (!cuda_built()) return out + "cuda\tnot built (this simkit has no CUDA paths)\n";
  const int count = cuda_device_count();
  if (count == 0) out += "cuda\tno GPU or no driver\n";
  for (int i = 0; i < count; ++i) {
    const Device d = resolve_device(DeviceSpec{DeviceSpec::Kind::Cuda, i, true});
    const GpuMemory memory = gpu_memory(i);
    out += fmt::format("cuda:{}\t{}\t{} free of {}\n", i, d.name, format_byte_size(memory.free),
                       format_byte_size(memory.total));
  }
  return out;
}

}  // namespace

Runner add_devices_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "devices", "Lists the devices simkit can use; under mpirun, those of every rank (printed by rank 0).");
  return [command]() {
    (void)command;
    std::string text = device_lines();
    if (cluster::size() > 1) {
      const Device chosen = resolve_device(DeviceSpec{});
      text = fmt::format("rank {} of {} on {}: {} by default (--device auto)\n", cluster::rank(), cluster::size(),
                         cluster::host_name(), chosen.cuda ? fmt::format("cuda:{}", chosen.index) : "cpu") +
             text;
    }
    const std::vector<std::string> all = cluster::gather(text);
    for (const std::string& part : all) std::fputs(part.c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace simkit::cli
