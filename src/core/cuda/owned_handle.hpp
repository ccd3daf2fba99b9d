// A CUDA library's handle (cuBLAS, cuSOLVER) owned: destroyed with its owner, through the
// device it was made on (memory.hpp says why), never throwing.
#pragma once

#include <memory>
#include <type_traits>

#include "core/cuda/memory.hpp"

namespace simkit::cuda {

template <typename Handle, auto Destroy>
struct HandleDestroy {
  int device = 0;  // the handle's (asked once it is made): destroyed through it
  void operator()(Handle h) const noexcept {
    const QuietDeviceGuard guard(device);
    Destroy(h);
  }
};

template <typename Handle, auto Destroy>
using OwnedHandle = std::unique_ptr<std::remove_pointer_t<Handle>, HandleDestroy<Handle, Destroy>>;

// `h`, just made on the current device, owned.
template <typename Handle, auto Destroy>
OwnedHandle<Handle, Destroy> own_handle(Handle h) {
  return OwnedHandle<Handle, Destroy>(h, HandleDestroy<Handle, Destroy>{current_device()});
}

}  // namespace simkit::cuda
