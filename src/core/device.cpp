#include "simkit/device.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <dlfcn.h>

#include <fmt/format.h>

#include "core/gpu_info.hpp"
#include "simkit/cluster.hpp"
#include "simkit/error.hpp"

namespace simkit {

DeviceSpec parse_device(std::string_view text) {
  DeviceSpec spec;
  if (text == "auto") return spec;
  if (text == "cpu") {
    spec.kind = DeviceSpec::Kind::Cpu;
    return spec;
  }
  for (std::string_view prefix : {"cuda", "gpu"}) {
    if (!text.starts_with(prefix)) continue;
    std::string_view rest = text.substr(prefix.size());
    spec.kind = DeviceSpec::Kind::Cuda;
    if (rest.empty()) return spec;
    if (rest == ":all") {
      spec.all = true;
      return spec;
    }
    if (rest.front() != ':') break;
    rest.remove_prefix(1);
    spec.named = true;
    // One ordinal, or several separated by commas, each once.
    for (bool more = true; more;) {
      const std::size_t comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      int index = -1;
      auto [end, err] = std::from_chars(item.data(), item.data() + item.size(), index);
      if (err != std::errc() || end != item.data() + item.size() || item.empty() || index < 0 ||
          std::find(spec.indices.begin(), spec.indices.end(), index) != spec.indices.end())
        throw UsageError(fmt::format("--device {}: expected auto, cpu, cuda, cuda:N, cuda:all or cuda:N,M,... "
                                     "(each GPU once)",
                                     quote(text)));
      spec.indices.push_back(index);
      more = comma != std::string_view::npos;
      if (more) rest.remove_prefix(comma + 1);
    }
    spec.index = spec.indices.front();
    return spec;
  }
  throw UsageError(fmt::format("--device {}: expected auto, cpu, cuda, cuda:N, cuda:all or cuda:N,M,...", quote(text)));
}

bool cuda_built() noexcept { return detail::cuda_compiled(); }

namespace {
std::atomic<bool> cuda_was_started{false};

// What hide_unused_gpus changed (set once, before any thread uses CUDA), so that an error
// names the user's --device and CUDA_VISIBLE_DEVICES rather than simkit's.
struct Hidden {
  bool active = false;
  std::string device;                 // the --device text as given
  std::optional<std::string> variable;  // CUDA_VISIBLE_DEVICES as the user set it
} hidden;

std::string visible_clause(const std::optional<std::string>& variable) {
  return variable ? fmt::format(", or none among CUDA_VISIBLE_DEVICES={}", *variable) : std::string();
}
}  // namespace

int cuda_device_count() noexcept {
  const int count = detail::cuda_count();
  if (count > 0) cuda_was_started = true;
  return count;
}

bool cuda_started() noexcept { return cuda_was_started; }

Device resolve_device(const DeviceSpec& spec) {
  Device device;
  device.name = "cpu";
  if (spec.kind == DeviceSpec::Kind::Cpu) return device;
  const int count = cuda_device_count();
  if (spec.kind == DeviceSpec::Kind::Auto && count == 0) return device;
  if (spec.kind == DeviceSpec::Kind::Cuda) {
    if (!cuda_built())
      throw UsageError("--device cuda: this simkit was built without CUDA (use --device cpu)");
    if (count == 0) {
      const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
      throw UsageError(fmt::format(
          "--device {}: no usable CUDA device (no GPU or no driver{}); use --device cpu",
          hidden.active ? hidden.device : "cuda",
          visible_clause(hidden.active ? hidden.variable : visible ? std::optional<std::string>(visible) : std::nullopt)));
    }
  }
  if (spec.all) {
    for (int i = 0; i < count; ++i) device.indices.push_back(i);
  } else if (spec.named) {
    device.indices = spec.indices.empty() ? std::vector<int>{spec.index} : spec.indices;
    for (const int i : device.indices)
      if (i >= count)
        throw UsageError(hidden.active ? fmt::format("--device {}: only {} of the GPUs named {} a usable CUDA device{}",
                                                     hidden.device, count, count == 1 ? "is" : "are",
                                                     visible_clause(hidden.variable))
                                       : fmt::format("--device cuda:{}: only {} CUDA device{} present", i, count,
                                                     count == 1 ? " is" : "s are"));
  } else {
    device.indices = {cluster::local_rank() % count};
  }
  device.cuda = true;
  device.index = device.indices.front();
  device.name = detail::cuda_name(device.index);
  if (device.indices.size() > 1) device.name += fmt::format(" (and {} more)", device.indices.size() - 1);
  return device;
}

std::optional<VisibleGpus> visible_gpus_for(const DeviceSpec& spec, std::string_view device_text, const char* visible,
                                            std::size_t driver_gpus, bool alone) {
  if (spec.kind == DeviceSpec::Kind::Cpu || spec.all || (!spec.named && !alone)) return std::nullopt;
  std::vector<std::string> known;  // what CUDA_VISIBLE_DEVICES would name each GPU seen now
  if (visible != nullptr) {
    // As CUDA reads it: up to the first entry that is neither an ordinal the driver has
    // nor a GPU's UUID. MIG instances: left as they are (a process may see fewer).
    for (std::string_view rest = visible; !rest.empty();) {
      const std::size_t comma = rest.find(',');
      const std::string_view entry = rest.substr(0, comma);
      if (entry.starts_with("MIG-")) return std::nullopt;
      std::size_t ordinal = 0;
      const auto [end, error] = std::from_chars(entry.data(), entry.data() + entry.size(), ordinal);
      const bool is_ordinal = error == std::errc() && end == entry.data() + entry.size() && !entry.empty();
      if (!(is_ordinal && (driver_gpus == 0 || ordinal < driver_gpus)) && !entry.starts_with("GPU-")) break;
      known.emplace_back(entry);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  } else {
    for (std::size_t i = 0; i < driver_gpus; ++i) known.push_back(std::to_string(i));
  }
  const std::vector<int> wanted = spec.named ? spec.indices : std::vector<int>{0};
  VisibleGpus out;
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const auto at = static_cast<std::size_t>(wanted[i]);
    if (wanted[i] < 0 || at >= known.size() || known[at].empty()) return std::nullopt;  // resolve_device says what is wrong
    out.variable += (i > 0 ? "," : "") + known[at];
    out.device += (i > 0 ? "," : "cuda:") + std::to_string(i);
  }
  if (!spec.named) out.device = std::string(device_text);  // auto and cuda take the first GPU left
  return out;
}

bool hide_unused_gpus(std::string& device_text) {
  if (!cuda_built()) return false;
  DeviceSpec spec;
  try {
    spec = parse_device(device_text);
  } catch (const UsageError&) {
    return false;  // the command reports it
  }
  // Once the driver has started it has read the variable: the ordinals would then no
  // longer match. (Its library may be loaded already, not started: cuBLAS loads it.)
  if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    int (*count)(int*) = nullptr;  // cuDeviceGetCount: CUDA_ERROR_NOT_INITIALIZED (3) before cuInit
    if (void* symbol = dlsym(driver, "cuDeviceGetCount")) std::memcpy(&count, &symbol, sizeof count);
    int devices = 0;
    const bool started = count == nullptr || count(&devices) != 3;
    dlclose(driver);
    if (started) return false;
  }
  std::size_t driver_gpus = 0;  // a folder a GPU
  std::error_code error;
  for (std::filesystem::directory_iterator it("/proc/driver/nvidia/gpus", error), end; !error && it != end;
       it.increment(error))
    ++driver_gpus;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::optional<VisibleGpus> narrowed = visible_gpus_for(spec, device_text, visible, driver_gpus, cluster::size() == 1);
  if (!narrowed) return false;
  hidden.device = device_text;
  if (visible != nullptr) hidden.variable = visible;
  // (Under mpirun, MPI's own threads may be running: only GPUs named outright get here.)
  if (setenv("CUDA_VISIBLE_DEVICES", narrowed->variable.c_str(), 1) != 0) return false;
  hidden.active = true;
  device_text = narrowed->device;
  return true;
}

GpuMemory gpu_memory(int index) { return detail::cuda_memory(index); }

std::size_t parse_byte_size(std::string_view text) {
  const std::string original(text);
  double value = 0;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (err != std::errc() || !std::isfinite(value) || value <= 0)
    throw UsageError(fmt::format("size {}: expected a positive number with an optional unit "
                                 "(K, M, G, T), e.g. 512M",
                                 quote(original)));
  std::string unit(end, text.data() + text.size());
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") scale = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB") scale = 1024.0 * 1024 * 1024 * 1024;
  else
    throw UsageError(fmt::format("size {}: unknown unit {} (use K, M, G or T)", quote(original),
                                 quote(unit)));
  const double bytes = value * scale;
  if (bytes < 1 || bytes > 1.0e18)
    throw UsageError(fmt::format("size {}: out of range", quote(original)));
  return static_cast<std::size_t>(bytes);
}

std::string format_byte_size(std::size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

}  // namespace simkit
