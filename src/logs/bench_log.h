// A synthetic training log for the log-reader benchmarks: Megatron iteration lines, a tqdm
// bar, per-rank NCCL INFO lines, Python logging lines with varying numbers and paths, and
// (for diagnosis) an error tail. Deterministic (fixed LCG).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace orrery::logs {

inline std::string SyntheticTrainingLog(size_t bytes, bool with_failure) {
  std::string s;
  s.reserve(bytes + 4096);
  uint64_t x = 88172645463325252ull;
  auto next = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull; };
  char b[512];
  for (int64_t it = 1; s.size() < bytes; ++it) {
    std::snprintf(b, sizeof b,
                  " iteration %8lld/  500000 | consumed samples: %12lld | elapsed time per iteration (ms): %.1f | "
                  "learning rate: %.3E | global batch size:  1024 | lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f |\n",
                  static_cast<long long>(it), static_cast<long long>(it * 1024), 850.0 + static_cast<double>(next() % 1000) / 10,
                  1e-4 * static_cast<double>(next() % 100) / 100, 2.0 + static_cast<double>(next() % 1000) / 1000,
                  static_cast<double>(next() % 1000) / 1000);
    s += b;
    if (it % 4 == 0) {
      std::snprintf(b, sizeof b, "node-%03d:%d:%d [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via P2P/IPC/read\n",
                    static_cast<int>(next() % 64), static_cast<int>(next() % 90000), static_cast<int>(next() % 90000),
                    static_cast<int>(next() % 8), static_cast<int>(next() % 32), static_cast<int>(next() % 8),
                    static_cast<int>(next() % 8), static_cast<int>(next() % 8), static_cast<int>(next() % 8));
      s += b;
    }
    if (it % 7 == 0) {
      std::snprintf(b, sizeof b, "[2024-05-01 10:%02d:%02d,%03d] [INFO] [checkpointing.py:%d] saved /scratch/run%llu/ckpt/iter_%07lld in %.2f s\n",
                    static_cast<int>(next() % 60), static_cast<int>(next() % 60), static_cast<int>(next() % 1000),
                    static_cast<int>(next() % 400), static_cast<unsigned long long>(next() % 1000), static_cast<long long>(it),
                    static_cast<double>(next() % 10000) / 100);
      s += b;
    }
    if (it % 5 == 0) {
      std::snprintf(b, sizeof b, "Epoch 0:  %2d%%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x8d      | %lld/500000 [1:02:03<9:59:59,  %.2fs/it, loss=%.3f, v_num=1]\n",
                    static_cast<int>(it % 100), static_cast<long long>(it), 0.85 + static_cast<double>(next() % 100) / 1000,
                    2.0 + static_cast<double>(next() % 1000) / 1000);
      s += b;
    }
  }
  if (with_failure) {
    s += "[rank3]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
    for (int r = 0; r < 8; ++r) {
      std::snprintf(b, sizeof b, "[rank%d]:[E ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective operation timeout: "
                    "WorkNCCL(SeqNum=80, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600123 milliseconds before timing out.\n", r, r);
      s += b;
    }
  }
  return s;
}

}  // namespace orrery::logs
