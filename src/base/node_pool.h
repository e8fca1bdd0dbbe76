// A memory resource for node containers (std::pmr::set/map) that insert and erase millions
// of equal-sized nodes: one free list per 16-byte size class, blocks carved from 64 KiB
// chunks, nothing returned to the system before the resource dies. Allocation and
// deallocation are a few instructions each (std::pmr::unsynchronized_pool_resource looks up
// the chunk owning a pointer on every deallocation: ~290 instructions per insert + erase,
// docs/benchmarks.md). Not thread-safe; requests above 256 bytes go to the upstream.
#pragma once

#include <array>
#include <cstddef>
#include <memory_resource>
#include <new>
#include <vector>

namespace orrery {

class NodePool final : public std::pmr::memory_resource {
 public:
  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;
  ~NodePool() override {
    for (void* c : chunks_) upstream_->deallocate(c, kChunk, kAlign);
  }

 private:
  static constexpr size_t kAlign = 16, kMaxSmall = 256, kChunk = 64 * 1024;
  struct FreeBlock {
    FreeBlock* next;
  };

  void* do_allocate(size_t bytes, size_t align) override {
    if (bytes > kMaxSmall || align > kAlign) return upstream_->allocate(bytes, align);
    const size_t c = Class(bytes);
    if (FreeBlock* b = free_[c]) {
      free_[c] = b->next;
      return b;
    }
    const size_t size = (c + 1) * kAlign;
    if (left_ < size) {
      chunks_.push_back(upstream_->allocate(kChunk, kAlign));
      next_ = static_cast<std::byte*>(chunks_.back());
      left_ = kChunk;
    }
    void* p = next_;
    next_ += size;
    left_ -= size;
    return p;
  }
  void do_deallocate(void* p, size_t bytes, size_t align) override {
    if (bytes > kMaxSmall || align > kAlign) return upstream_->deallocate(p, bytes, align);
    const size_t c = Class(bytes);
    free_[c] = new (p) FreeBlock{free_[c]};
  }
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }
  static size_t Class(size_t bytes) { return bytes == 0 ? 0 : (bytes - 1) / kAlign; }

  std::pmr::memory_resource* upstream_ = std::pmr::new_delete_resource();
  std::array<FreeBlock*, kMaxSmall / kAlign> free_{};
  std::vector<void*> chunks_;
  std::byte* next_ = nullptr;
  size_t left_ = 0;
};

}  // namespace orrery
