// Importers against the real public traces in ../shared/traces (skipped when absent).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "base/parse.h"
#include "trace/canonical.h"
#include "trace/import.h"

namespace orrery {
namespace {

std::string Shared(const std::string& rel) { return std::string(ORRERY_SHARED_DIR) + "/" + rel; }
bool Exists(const std::string& p) { return std::ifstream(p).good(); }

#define REQUIRE_SHARED(path) \
  if (!Exists(path)) GTEST_SKIP() << "shared data not found at " << (path) << " (set ORRERY_SHARED_DIR)"

void ExpectRoundTrip(const Trace& t) {
  std::string a = CanonicalTraceToString(t);
  auto back = ImportTraceFromString(TraceFormat::kCanonical, a, "rt.csv", {}, nullptr);
  ASSERT_TRUE(back.ok()) << back.error().message;
  std::string diff;
  EXPECT_TRUE(TracesEqual(t, *back, &diff)) << diff;
  EXPECT_TRUE(a == CanonicalTraceToString(*back));
}

const std::string kPhilly = "traces/philly-pollux/philly.part-A.submit-before-2017-11-01.csv";

TEST(RealPhilly, CountsRowsAndReferenceOrder) {
  std::string path = Shared(kPhilly);
  REQUIRE_SHARED(path);
  ImportReport rep;
  auto t = ImportTrace(TraceFormat::kPhilly, {path}, {}, &rep);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->jobs.size(), 52849u);
  EXPECT_EQ(rep.rows_read, 52849u);
  EXPECT_EQ(rep.warnings.size(), 1u);  // unsorted input
  int64_t first;
  ASSERT_TRUE(ParseDateTime("2017-09-04 10:30:41", &first));
  EXPECT_EQ(t->epoch_unix, first);
  EXPECT_TRUE(t->source_ids.empty());
  EXPECT_EQ(t->vcs.size(), 12u);
  // The reference simulator's input: same jobs minus VC 23dbec, in the same order.
  std::string ref = Shared("reference-runs/helios-artifact-philly/jobs.csv");
  REQUIRE_SHARED(ref);
  std::ifstream in(ref);
  std::string line;
  std::getline(in, line);
  // Source rows by 0-based data index, to check orig_row.
  std::vector<std::string> src;
  {
    std::ifstream s(path);
    std::getline(s, line);
    while (std::getline(s, line)) src.push_back(line);
  }
  size_t k = 0, checked = 0;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string id, submit, dur, gpus, vc, orig;
    std::getline(ss, id, ',');
    std::getline(ss, submit, ',');
    std::getline(ss, dur, ',');
    std::getline(ss, gpus, ',');
    std::getline(ss, vc, ',');
    std::getline(ss, orig, ',');
    while (k < t->jobs.size() && t->vcs.Get(t->jobs[k].vc.value()) == "23dbec") ++k;
    ASSERT_LT(k, t->jobs.size());
    const Job& j = t->jobs[k];
    ASSERT_EQ(j.submit, std::stoll(submit)) << "reference job " << id;
    ASSERT_EQ(j.duration, std::stoll(dur)) << "reference job " << id;
    ASSERT_EQ(j.gpus, std::stoul(gpus)) << "reference job " << id;
    ASSERT_EQ(t->vcs.Get(j.vc.value()), vc) << "reference job " << id;
    const std::string& row = src.at(std::stoul(orig));
    ASSERT_EQ(row.substr(row.rfind(',') + 1), vc);
    ++k;
    ++checked;
  }
  EXPECT_EQ(checked, 52841u);
  // Known rows: the first data row of the file is "2017-10-09 07:01:55,66.0,1,66.0,11cb48".
  int64_t ts;
  ASSERT_TRUE(ParseDateTime("2017-10-09 07:01:55", &ts));
  bool found = false;
  for (const Job& j : t->jobs)
    if (j.submit == ts - first && j.duration == 66 && t->vcs.Get(j.vc.value()) == "11cb48") found = true;
  EXPECT_TRUE(found);
  const Job& j0 = t->jobs[0];  // earliest: 2017-09-04 10:30:41, 8 GPUs, 7f04ca
  EXPECT_EQ(j0.submit, 0);
  EXPECT_EQ(j0.duration, 2240194);
  EXPECT_EQ(j0.gpus, 8u);
  EXPECT_EQ(j0.state, JobState::kUnknown);
  EXPECT_FALSE(j0.user.valid());
  ExpectRoundTrip(*t);
}

TEST(RealPhilly, VcFileIsConfigNotJobs) {
  std::string path = Shared(kPhilly), vc = Shared("traces/philly-pollux/philly_vc.csv");
  REQUIRE_SHARED(vc);
  ImportReport rep;
  auto t = ImportTrace(TraceFormat::kPhilly, {path, vc}, {}, &rep);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->jobs.size(), 52849u);
  bool said = false;
  for (const auto& w : rep.warnings) said = said || w.find("cluster config") != std::string::npos;
  EXPECT_TRUE(said);
  auto only = ImportTrace(TraceFormat::kPhilly, {vc}, {}, nullptr);
  EXPECT_FALSE(only.ok());
}

TEST(RealOpenb, DefaultPodList) {
  std::string path = Shared("traces/alibaba-gpu-v2023/openb_pod_list_default.csv");
  REQUIRE_SHARED(path);
  auto t = LoadTrace(path);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 8152u);
  EXPECT_EQ(t->origin, "openb");
  std::map<JobState, int> phase;
  std::map<uint32_t, int> gpus;
  int fractional = 0;
  for (const Job& j : t->jobs) {
    ++phase[j.state];
    ++gpus[j.gpus];
    fractional += j.is_fractional();
  }
  EXPECT_EQ(phase[JobState::kRunning], 5193);
  EXPECT_EQ(phase[JobState::kFailed], 1870);
  EXPECT_EQ(phase[JobState::kPending], 897);
  EXPECT_EQ(phase[JobState::kCompleted], 192);
  EXPECT_EQ(gpus[1], 6989);
  EXPECT_EQ(gpus[0], 1088);
  EXPECT_EQ(gpus[2], 16);
  EXPECT_EQ(gpus[4], 15);
  EXPECT_EQ(gpus[8], 44);
  EXPECT_EQ(fractional, 3078);
  EXPECT_EQ(t->source_ids[0], "openb-pod-0000");
  EXPECT_EQ(t->jobs[1].gpu_milli, 460u);
  EXPECT_EQ(t->jobs[1].submit, 427061);
  EXPECT_EQ(t->jobs[0].duration, 12537496);
  EXPECT_EQ(t->jobs[0].cpu_milli, 12000u);
  EXPECT_EQ(t->jobs[0].mem_mib, 16384u);
  EXPECT_FALSE(t->epoch_known);
  ExpectRoundTrip(*t);
}

TEST(RealOpenb, GpuSpecAndMultigpuVariants) {
  std::string spec = Shared("traces/alibaba-gpu-v2023/openb_pod_list_gpuspec33.csv");
  REQUIRE_SHARED(spec);
  auto t = LoadTrace(spec);
  ASSERT_TRUE(t.ok()) << t.error().message;
  int constrained = 0;
  for (const Job& j : t->jobs) constrained += j.gpu_types != 0;
  EXPECT_EQ(constrained, 2388);
  ExpectRoundTrip(*t);
  auto multi = LoadTrace(Shared("traces/alibaba-gpu-v2023/openb_pod_list_multigpu20.csv"));
  ASSERT_FALSE(multi.ok());
  EXPECT_NE(multi.error().message.find("static packing"), std::string::npos);
  auto nodes = LoadTrace(Shared("traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv"));
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.error().message.find("node list"), std::string::npos);
}

TEST(RealSwf, Hpc2n) {
  std::string path = Shared("traces/pwa-hpc2n-excerpt/hpc2n.swf");
  REQUIRE_SHARED(path);
  EXPECT_EQ(*DetectTraceFormat(path), TraceFormat::kSwf);
  auto t = LoadTrace(path);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 3170u);
  EXPECT_EQ(t->epoch_unix, 1027839845);
  // "    1        0 308434  31405   30  31405    -1   30  37980    -1  1   1   1  -1 -1  1 -1 -1"
  const Job& a = t->jobs[0];
  EXPECT_EQ(t->source_ids[0], "1");
  EXPECT_EQ(a.submit, 0);
  EXPECT_EQ(a.start, 308434);
  EXPECT_EQ(a.duration, 31405);
  EXPECT_EQ(a.end, 308434 + 31405);
  EXPECT_EQ(a.cpu_milli, 30000u);
  EXPECT_EQ(a.walltime, 37980);
  EXPECT_EQ(a.state, JobState::kCompleted);
  EXPECT_EQ(t->users.Get(a.user.value()), "u1");
  // "    4   179350  99808 143967    2 142977    -1    2 144000    -1  1   3   1  -1 -1  1 -1 -1"
  const Job& d = t->jobs[3];
  EXPECT_EQ(t->source_ids[3], "4");
  EXPECT_EQ(d.submit, 179350);
  EXPECT_EQ(d.start, 179350 + 99808);
  EXPECT_EQ(d.cpu_milli, 2000u);
  EXPECT_EQ(d.walltime, 144000);
  EXPECT_EQ(t->users.Get(d.user.value()), "u3");
  int unknown_run = 0;
  for (const Job& j : t->jobs) unknown_run += j.duration < 0;
  EXPECT_EQ(unknown_run, 25);
  ExpectRoundTrip(*t);
}

TEST(RealSwf, LcgGzip) {
  std::string path = Shared("traces/pwa-lcg-2005/LCG.swf.gz");
  REQUIRE_SHARED(path);
  ImportReport rep;
  auto t = ImportTrace(TraceFormat::kAuto, {path}, {}, &rep);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 188041u);
  EXPECT_EQ(t->epoch_unix, 1132444805);
  EXPECT_EQ(t->jobs[0].duration, 83);
  EXPECT_EQ(t->jobs[0].walltime, 1200);
  EXPECT_EQ(t->jobs[0].start, kNoTime);  // wait is -1 for every job
  EXPECT_EQ(t->vcs.Get(t->jobs[0].vc.value()), "grid.ici.ro");
  EXPECT_EQ(t->jobs[1].duration, 3611);
  EXPECT_EQ(t->jobs[2].submit, 12);
  EXPECT_GT(rep.bytes_read, 20'000'000u);  // uncompressed bytes
  ExpectRoundTrip(*t);
}

}  // namespace
}  // namespace orrery
