// simkit devices: what this build and this machine offer.
#include <cstdio>

#include "cli.hpp"
#include "simkit/device.hpp"

namespace simkit::cli {

Runner add_devices_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand("devices", "Lists the devices simkit can use.");
  return [command]() {
    (void)command;
    std::printf("cpu\t%zu threads\n", max_threads());
    if (!cuda_built()) {
      std::printf("cuda\tnot built (this simkit has no CUDA paths)\n");
      return kExitOk;
    }
    const int count = cuda_device_count();
    if (count == 0) std::printf("cuda\tno GPU or no driver\n");
    for (int i = 0; i < count; ++i) {
      const Device d = resolve_device(DeviceSpec{DeviceSpec::Kind::Cuda, i});
      const GpuMemory memory = gpu_memory(i);
      std::printf("cuda:%d\t%s\t%s free of %s\n", i, d.name.c_str(), format_byte_size(memory.free).c_str(),
                  format_byte_size(memory.total).c_str());
    }
    return kExitOk;
  };
}

}  // namespace simkit::cli
