// Trace import throughput (MB/s of input). Real files come from ORRERY_SHARED_DIR and
// are skipped when absent. Run: build-trace/orrery_trace_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <unistd.h>

#include "base/io.h"
#include "trace/canonical.h"
#include "trace/import.h"

namespace orrery {
namespace {

std::string Shared(const std::string& rel) { return std::string(ORRERY_SHARED_DIR) + "/" + rel; }

void ImportFile(benchmark::State& state, TraceFormat f, const std::string& path) {
  if (!std::ifstream(path).good()) {
    state.SkipWithError(("shared data not found: " + path).c_str());
    return;
  }
  uint64_t bytes = 0;
  for (auto _ : state) {
    ImportReport rep;
    auto t = ImportTrace(f, {path}, {}, &rep);
    if (!t.ok()) {
      state.SkipWithError(t.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(t->jobs.data());
    bytes += rep.bytes_read;  // uncompressed bytes parsed
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void BM_ImportPhilly(benchmark::State& s) {
  ImportFile(s, TraceFormat::kPhilly, Shared("traces/philly-pollux/philly.part-A.submit-before-2017-11-01.csv"));
}
void BM_ImportOpenb(benchmark::State& s) {
  ImportFile(s, TraceFormat::kAlibabaOpenb, Shared("traces/alibaba-gpu-v2023/openb_pod_list_default.csv"));
}
void BM_ImportSwfHpc2n(benchmark::State& s) {
  ImportFile(s, TraceFormat::kSwf, Shared("traces/pwa-hpc2n-excerpt/hpc2n.swf"));
}
// gzip: MB/s of uncompressed SWF text (includes inflate).
void BM_ImportSwfLcgGz(benchmark::State& s) { ImportFile(s, TraceFormat::kSwf, Shared("traces/pwa-lcg-2005/LCG.swf.gz")); }

// A synthetic trace of n jobs with users, VCs, names, GPU types and all fields set.
Trace Synthetic(size_t n) {
  Trace t;
  t.origin = "synthetic";
  t.epoch_known = true;
  t.epoch_unix = 1700000000;
  for (int i = 0; i < 4; ++i) t.gpu_types.Intern("GPU" + std::to_string(i));
  for (size_t i = 0; i < n; ++i) {
    Job j;
    j.id = JobId(static_cast<uint32_t>(i));
    j.user = UserId(t.users.Intern("user" + std::to_string(i % 997)));
    j.vc = VcId(static_cast<uint16_t>(t.vcs.Intern("vc" + std::to_string(i % 31))));
    j.name = NameId(t.names.Intern("job" + std::to_string(i % 5003)));
    j.submit = static_cast<Time>(i * 7);
    j.start = j.submit + static_cast<Time>(i % 300);
    j.duration = 60 + static_cast<Duration>((i * 7919) % 86400);
    j.end = j.start + j.duration;
    j.walltime = 86400;
    j.gpus = 1u << (i % 4);
    j.gpu_milli = 1000;
    j.gpu_types = (i % 3 == 0) ? 0b101u : 0u;
    j.nodes = 1;
    j.cpu_milli = 8000;
    j.mem_mib = 65536;
    j.state = JobState::kCompleted;
    t.jobs.push_back(j);
    t.source_ids.push_back(std::to_string(1000000 + i));
  }
  return t;
}

std::string TmpPath(const char* name) { return "/tmp/orrery_bench_" + std::to_string(getpid()) + "_" + name; }

void BM_CanonicalWrite(benchmark::State& state) {
  Trace t = Synthetic(static_cast<size_t>(state.range(0)));
  std::string path = TmpPath("w.csv");
  uint64_t bytes = CanonicalTraceToString(t).size();
  for (auto _ : state) {
    Status s = WriteCanonicalTrace(t, path);
    if (!s.ok()) state.SkipWithError(s.error().message.c_str());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes * state.iterations()));
  std::remove(path.c_str());
}

void BM_CanonicalToString(benchmark::State& state) {
  Trace t = Synthetic(static_cast<size_t>(state.range(0)));
  uint64_t bytes = 0;
  for (auto _ : state) {
    std::string s = CanonicalTraceToString(t);
    bytes += s.size();
    benchmark::DoNotOptimize(s.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void BM_CanonicalRead(benchmark::State& state) {
  std::string path = TmpPath("r.csv");
  if (!WriteCanonicalTrace(Synthetic(static_cast<size_t>(state.range(0))), path).ok()) {
    state.SkipWithError("cannot write temp file");
    return;
  }
  uint64_t bytes = 0;
  for (auto _ : state) {
    ImportReport rep;
    auto t = ReadCanonicalTrace(path, {}, &rep);
    if (!t.ok()) {
      state.SkipWithError(t.error().message.c_str());
      break;
    }
    bytes += rep.bytes_read;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  std::remove(path.c_str());
}

void BM_CanonicalReadPhilly(benchmark::State& state) {
  std::string src = Shared("traces/philly-pollux/philly.part-A.submit-before-2017-11-01.csv");
  auto t = ImportTrace(TraceFormat::kPhilly, {src}, {}, nullptr);
  if (!t.ok()) {
    state.SkipWithError("shared data not found");
    return;
  }
  std::string path = TmpPath("p.csv");
  (void)WriteCanonicalTrace(*t, path);
  uint64_t bytes = 0;
  for (auto _ : state) {
    ImportReport rep;
    auto r = ReadCanonicalTrace(path, {}, &rep);
    bytes += rep.bytes_read;
    benchmark::DoNotOptimize(r.ok());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  std::remove(path.c_str());
}

BENCHMARK(BM_ImportPhilly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ImportOpenb)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ImportSwfHpc2n)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ImportSwfLcgGz)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CanonicalReadPhilly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CanonicalToString)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CanonicalWrite)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CanonicalRead)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery
