// The NCCL communicator (core/cuda/nccl.hpp) in one process over every GPU of the
// machine (one GPU makes a communicator of one): in-place sums of floats, 32-bit and
// 8-bit words, several in one group, against sums on the host; slots with one contributor
// (how GLVQ exchanges its outcomes) come back bit for bit; a GPU named twice is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "core/cuda/memory.hpp"
#include "core/cuda/nccl.hpp"
#include "simkit/device.hpp"
#include "simkit/error.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

#define SIMKIT_REQUIRE_NCCL()                                                      \
  do {                                                                             \
    SIMKIT_REQUIRE_GPU();                                                          \
    if (!cuda::nccl_built()) GTEST_SKIP() << "this simkit was built without NCCL"; \
  } while (0)

TEST(GpuNccl, SumsOverEveryGpu) {
  SIMKIT_REQUIRE_NCCL();
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<int> devices(static_cast<std::size_t>(cuda_device_count()));
  std::iota(devices.begin(), devices.end(), 0);
  const std::size_t gpus = devices.size(), n = 100003;  // not a multiple of anything NCCL chunks by
  cuda::Communicator comm(devices);
  EXPECT_EQ(comm.parts().total, gpus);
  EXPECT_EQ(comm.parts().first, 0u);

  // Each GPU's values; the expected sums on the host.
  std::vector<std::vector<float>> floats(gpus), owned(gpus);
  std::vector<std::vector<std::uint32_t>> words(gpus);
  std::vector<std::vector<std::uint8_t>> bytes(gpus);
  std::vector<double> float_sum(n, 0);
  std::vector<std::uint32_t> word_sum(n, 0);
  std::vector<std::uint8_t> byte_sum(n, 0);
  std::vector<float> owned_sum(n, 0);
  for (std::size_t g = 0; g < gpus; ++g) {
    floats[g] = random.floats(n, -100, 100);
    owned[g].assign(n, 0.0f);
    for (std::size_t i = 0; i < n; ++i) {
      words[g].push_back(static_cast<std::uint32_t>(random.engine()()));
      bytes[g].push_back(static_cast<std::uint8_t>(random.engine()() % 50));
      float_sum[i] += floats[g][i];
      word_sum[i] += words[g][i];
      byte_sum[i] = static_cast<std::uint8_t>(byte_sum[i] + bytes[g][i]);
      if (i % gpus == g) {  // one contributor a slot: any float, tiny ones and -0 too
        const float values[] = {floats[g][i], 1e-40f, -0.0f, 3.4e38f};
        owned[g][i] = values[i % 4];
        owned_sum[i] = owned[g][i];
      }
    }
  }
  std::vector<cuda::DeviceBuffer<float>> d_floats, d_owned;
  std::vector<cuda::DeviceBuffer<std::uint32_t>> d_words;
  std::vector<cuda::DeviceBuffer<std::uint8_t>> d_bytes;
  std::vector<std::unique_ptr<cuda::Stream>> streams;
  for (std::size_t g = 0; g < gpus; ++g) {
    const cuda::DeviceGuard guard(devices[g]);
    d_floats.push_back(cuda::to_device(floats[g].data(), n));
    d_owned.push_back(cuda::to_device(owned[g].data(), n));
    d_words.push_back(cuda::to_device(words[g].data(), n));
    d_bytes.push_back(cuda::to_device(bytes[g].data(), n));
    streams.push_back(std::make_unique<cuda::Stream>());
  }
  comm.begin();
  for (std::size_t g = 0; g < gpus; ++g) {
    comm.sum(g, d_floats[g].get(), n, streams[g]->get());
    comm.sum(g, d_owned[g].get(), n, streams[g]->get());
    comm.sum(g, d_words[g].get(), n, streams[g]->get());
    comm.sum(g, d_bytes[g].get(), n, streams[g]->get());
  }
  comm.end();
  for (std::size_t g = 0; g < gpus; ++g) {
    streams[g]->sync();
    std::vector<float> f(n), o(n);
    std::vector<std::uint32_t> w(n);
    std::vector<std::uint8_t> b(n);
    ASSERT_EQ(cudaMemcpy(f.data(), d_floats[g].get(), n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(o.data(), d_owned[g].get(), n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(w.data(), d_words[g].get(), n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(b.data(), d_bytes[g].get(), n, cudaMemcpyDeviceToHost), cudaSuccess);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_NEAR(f[i], float_sum[i], 1e-4 * gpus) << "GPU " << g << " at " << i;  // float rounding of the order
      ASSERT_EQ(w[i], word_sum[i]) << "GPU " << g << " at " << i;
      ASSERT_EQ(b[i], byte_sum[i]) << "GPU " << g << " at " << i;
      // Bit for bit; -0 may come back as +0 (the same number) and a denormal as 0 where
      // the reduction flushes them.
      if (std::fabs(owned_sum[i]) < 1.2e-38f)
        ASSERT_TRUE(o[i] == owned_sum[i] || o[i] == 0) << "GPU " << g << " at " << i;
      else
        ASSERT_EQ(std::memcmp(&o[i], &owned_sum[i], 4), 0) << "GPU " << g << " at " << i;
    }
  }
}

TEST(GpuNccl, AGpuDrivenTwiceIsRefused) {
  SIMKIT_REQUIRE_NCCL();
  try {
    cuda::Communicator comm({0, 0});
    FAIL() << "accepted GPU 0 twice";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("driven twice"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace simkit
