#pragma once
// Host arrays that every GPU of a job uploads, page-locked once a process by whichever
// GPU's work comes first (cuda::lock_once, core/cuda/memory.hpp), so that each upload runs
// at the link's rate. Declare it after the arrays it locks: they are unlocked when it goes.
#include <memory>
#include <mutex>

namespace simkit {

struct PageLockedOnce {
  mutable std::once_flag once;
  mutable std::shared_ptr<void> locks;  // the CUDA side's locks (opaque here: no CUDA)
};

}  // namespace simkit
