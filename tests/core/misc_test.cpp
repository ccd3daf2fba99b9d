// Errors, device and size parsing, the allocator of answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/prefault.hpp"
#include "simkit/cluster.hpp"
#include "simkit/device.hpp"
#include "simkit/error.hpp"
#include "simkit/uninitialized_allocator.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

// A source that counts what it hands out and takes back.
int g_live_blocks = 0;
void* counted_allocate(std::size_t bytes) {
  ++g_live_blocks;
  return ::operator new(bytes);
}
void counted_release(void* p) noexcept {
  --g_live_blocks;
  ::operator delete(p);
}
constexpr HostMemory kCounted{counted_allocate, counted_release};

TEST(UninitializedAllocator, MemoryFromItsSourceMovesWithTheVectorCopiesGoToTheHeap) {
  using Vector = std::vector<int, UninitializedAllocator<int>>;
  {
    Vector sourced{UninitializedAllocator<int>(&kCounted)};
    sourced.resize(1000);
    for (int i = 0; i < 1000; ++i) sourced[static_cast<std::size_t>(i)] = i;
    EXPECT_EQ(g_live_blocks, 1);
    const Vector copy = sourced;  // on the heap
    EXPECT_EQ(copy.get_allocator().memory, nullptr);
    EXPECT_EQ(copy, sourced);
    EXPECT_EQ(g_live_blocks, 1);
    Vector moved;
    moved = std::move(sourced);  // the source goes along
    EXPECT_EQ(moved.get_allocator().memory, &kCounted);
    EXPECT_EQ(moved, copy);
    moved.resize(100'000);  // grown from the same source
    EXPECT_EQ(g_live_blocks, 1);
    EXPECT_EQ(moved[999], 999);
    Vector heap;
    std::swap(heap, moved);
    EXPECT_EQ(heap.get_allocator().memory, &kCounted);
    EXPECT_EQ(moved.get_allocator().memory, nullptr);
  }
  EXPECT_EQ(g_live_blocks, 0);
}

// Buffers faulted in (and given huge pages where the kernel grants them) hold what is
// written to them, at any alignment, and zeroed vectors are zero.
TEST(Prefault, ZeroedVectorsAndAdvisedBuffersHoldTheirValues) {
  for (const std::size_t n : {std::size_t{0}, std::size_t{7}, (std::size_t{9} << 20) + 3}) {
    const std::vector<std::uint32_t> zeros = zeroed_vector<std::uint32_t>(n);
    ASSERT_EQ(zeros.size(), n);
    EXPECT_TRUE(std::all_of(zeros.begin(), zeros.end(), [](std::uint32_t v) { return v == 0; }));
  }
  // Fresh, never written memory (as the answers' are), at several alignments.
  const std::size_t size_all = (std::size_t{12} << 20) + 5;
  for (const std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{4095}}) {
    const std::unique_ptr<unsigned char[]> fresh(new unsigned char[size_all]);
    unsigned char* at = fresh.get() + offset;
    const std::size_t size = size_all - offset;
    advise_huge_pages(at, size);
    prefault(at, size);
    for (std::size_t i = 0; i < size; i += 4093) at[i] = static_cast<unsigned char>(i * 31 + offset);
    for (std::size_t i = 0; i < size; i += 4093) ASSERT_EQ(at[i], static_cast<unsigned char>(i * 31 + offset));
  }
  advise_huge_pages(nullptr, 1 << 30);  // nothing to advise, nothing done
  prefault(nullptr, 1 << 30);
}

// Alone, a process gathers its own bytes into the memory it places them in (under mpirun,
// dedup's pairs come together this way: tests/cluster).
TEST(Cluster, GatherIntoTheCallersMemoryAlone) {
  for (const std::string& bytes : {std::string("pairs\0of bytes", 14), std::string()}) {
    std::vector<char> out;
    std::size_t asked = 1234;
    const std::vector<std::size_t> sizes = cluster::gather_into(bytes, [&](std::size_t total) {
      asked = total;
      out.resize(total + 1);  // (never a null pointer, even for nothing)
      return out.data();
    });
    EXPECT_EQ(asked, bytes.size());
    ASSERT_EQ(sizes, std::vector<std::size_t>{bytes.size()});
    EXPECT_EQ(std::string(out.data(), bytes.size()), bytes);
  }
}

TEST(Location, Formats) {
  EXPECT_EQ(to_string(Location::at_line("a.txt", 12)), "a.txt:12");
  EXPECT_EQ(to_string(Location::at_line("a.txt", 12, 5)), "a.txt:12:5");
  EXPECT_EQ(to_string(Location::at_offset("m.bin", 4096)), "m.bin: byte 4096");
  EXPECT_EQ(to_string(Location{.file = "x"}), "x");
  const InputError e(Location::at_line("v.txt", 3), "expected a number,\nfound 'x'");
  EXPECT_STREQ(e.what(), "v.txt:3: expected a number, found 'x'");
}

TEST(Quote, EscapesWhatCannotBePrinted) {
  EXPECT_EQ(quote("king"), "'king'");
  EXPECT_EQ(quote("a\tb\x01"), "'a\\x09b\\x01'");
  EXPECT_EQ(quote("caf\xc3\xa9"), "'caf\xc3\xa9'");
  EXPECT_EQ(quote("\xff\xfe"), "'\\xff\\xfe'");
  EXPECT_EQ(quote("it's"), "'it\\'s'");
  EXPECT_EQ(quote(std::string(100, 'a'), 4), "'aaaa'...");
}

TEST(Device, Parse) {
  EXPECT_EQ(parse_device("auto").kind, DeviceSpec::Kind::Auto);
  EXPECT_EQ(parse_device("cpu").kind, DeviceSpec::Kind::Cpu);
  EXPECT_EQ(parse_device("cuda").kind, DeviceSpec::Kind::Cuda);
  EXPECT_EQ(parse_device("cuda:3").index, 3);
  EXPECT_EQ(parse_device("gpu:1").index, 1);
  for (const char* bad : {"", "cuda:", "cuda:-1", "cuda:x", "tpu", "cpu:0"})
    EXPECT_THROW(parse_device(bad), UsageError) << bad;
}

TEST(Device, AutoFallsBackToCpuWithoutGpu) {
  const Device d = resolve_device(parse_device("auto"));
  EXPECT_EQ(d.cuda, test::gpu_available());
  if (!test::gpu_available()) {
    EXPECT_THROW(resolve_device(parse_device("cuda")), UsageError);
  }
  EXPECT_THROW(resolve_device(parse_device("cuda:99")), UsageError);
}

// What a command may hide from the driver: the GPUs its --device names, renumbered from 0
// among those left; nothing where the ordinals are not known or every GPU is used.
TEST(Device, VisibleGpusForNamedOnes) {
  const auto for_text = [](std::string_view text, const char* visible, std::size_t driver, bool alone) {
    return visible_gpus_for(parse_device(text), text, visible, driver, alone);
  };
  const auto expect = [](const std::optional<VisibleGpus>& got, const char* variable, const char* device) {
    ASSERT_TRUE(got.has_value()) << variable;
    EXPECT_EQ(got->variable, variable);
    EXPECT_EQ(got->device, device);
  };
  expect(for_text("cuda:2", nullptr, 4, true), "2", "cuda:0");
  expect(for_text("gpu:0", nullptr, 1, true), "0", "cuda:0");
  expect(for_text("cuda:1,3", nullptr, 4, true), "1,3", "cuda:0,1");
  expect(for_text("cuda:3,1", nullptr, 4, false), "3,1", "cuda:0,1");  // a rank naming its GPUs outright
  expect(for_text("cuda:2", "4,5,6", 8, true), "6", "cuda:0");        // among those already visible
  expect(for_text("cuda:1", "GPU-aa,GPU-bb", 0, true), "GPU-bb", "cuda:0");
  expect(for_text("auto", nullptr, 2, true), "0", "auto");  // auto and cuda take the first GPU
  expect(for_text("cuda", "3,1", 4, true), "3", "cuda");
  EXPECT_FALSE(for_text("auto", nullptr, 2, false));  // a rank of several takes its own GPU by the count
  EXPECT_FALSE(for_text("cuda", nullptr, 2, false));
  EXPECT_FALSE(for_text("auto", nullptr, 0, true));  // no GPU known
  EXPECT_FALSE(for_text("cpu", nullptr, 2, true));
  EXPECT_FALSE(for_text("cuda:all", nullptr, 4, true));
  EXPECT_FALSE(for_text("cuda:4", nullptr, 4, true));  // past the GPUs: resolve_device says so
  EXPECT_FALSE(for_text("cuda:1", "5", 8, true));
  EXPECT_FALSE(for_text("cuda:0", "", 8, true));  // the variable hides every GPU
  // Read as CUDA reads it: up to the first entry that is not a GPU the driver has.
  expect(for_text("cuda:0", "0,7,1", 2, true), "0", "cuda:0");
  EXPECT_FALSE(for_text("cuda:1", "0,7,1", 2, true));
  EXPECT_FALSE(for_text("cuda:1", "5,1", 2, true));
  EXPECT_FALSE(for_text("cuda:1", "0,x,1", 0, true));
  expect(for_text("cuda:1", "3,1", 0, true), "1", "cuda:0");  // the driver's count unknown: any ordinal
  EXPECT_FALSE(for_text("cuda:0", "MIG-aa,MIG-bb", 0, true));  // MIG instances left as they are
}

TEST(ByteSize, Parse) {
  EXPECT_EQ(parse_byte_size("512"), 512u);
  EXPECT_EQ(parse_byte_size("4K"), 4096u);
  EXPECT_EQ(parse_byte_size("2G"), std::size_t{2} << 30);
  EXPECT_EQ(parse_byte_size("1.5GiB"), std::size_t{3} << 29);
  EXPECT_EQ(parse_byte_size("64mb"), std::size_t{64} << 20);
  for (const char* bad : {"", "0", "-1", "1X", "G", "nan", "1e40"}) EXPECT_THROW(parse_byte_size(bad), UsageError) << bad;
}

}  // namespace
}  // namespace simkit
