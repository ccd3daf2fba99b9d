// An allocator whose resize leaves new elements of a trivial type uninitialised: large
// buffers that are written in parallel right after (answers, codes) would otherwise be
// zeroed first by one thread, for nothing. Its memory comes from the heap, or from a
// HostMemory it is given (page-locked memory that a GPU copies answers into directly).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace simkit {

// Where host memory comes from when not the heap.
struct HostMemory {
  void* (*allocate)(std::size_t bytes);  // throws when it cannot
  void (*release)(void* ptr) noexcept;
};

template <typename T>
struct UninitializedAllocator {
  using value_type = T;
  // A container moved or swapped takes its memory's source along; a copy is on the heap.
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  const HostMemory* memory = nullptr;  // null: the heap

  UninitializedAllocator() = default;
  explicit UninitializedAllocator(const HostMemory* source) noexcept : memory(source) {}
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>& other) noexcept : memory(other.memory) {}
  UninitializedAllocator select_on_container_copy_construction() const noexcept { return {}; }

  T* allocate(std::size_t n) {
    if (memory == nullptr) return std::allocator<T>().allocate(n);
    return static_cast<T*>(memory->allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (memory == nullptr) std::allocator<T>().deallocate(p, n);
    else memory->release(p);
  }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const UninitializedAllocator<U>& other) const noexcept {
    return memory == other.memory;
  }
};

}  // namespace simkit
