// Importer tests: hand-written fixtures (tests/fixtures/trace/), in-memory bad inputs,
// and round trips through the canonical format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <unistd.h>

#include "base/parse.h"
#include "trace/canonical.h"
#include "trace/import.h"
#include "trace/import_internal.h"

namespace orrery {
namespace {

std::string Fixture(const std::string& name) { return std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/trace/" + name; }

std::string TmpPath(const std::string& name) {
  return ::testing::TempDir() + "/orrery_trace_" + std::to_string(getpid()) + "_" + name;
}

// import -> canonical -> import is identity, and the canonical text is byte-identical.
void ExpectRoundTrip(const Trace& t) {
  std::string a = CanonicalTraceToString(t);
  std::string path = TmpPath("rt.csv");
  ASSERT_TRUE(WriteCanonicalTrace(t, path).ok());
  ImportReport rep;
  auto back = ReadCanonicalTrace(path, {}, &rep);
  ASSERT_TRUE(back.ok()) << back.error().message;
  std::string diff;
  EXPECT_TRUE(TracesEqual(t, *back, &diff)) << diff;
  EXPECT_EQ(a, CanonicalTraceToString(*back));
  EXPECT_TRUE(rep.warnings.empty()) << rep.warnings.front();
  // The file on disk equals the string serialisation.
  auto disk = ImportTraceFromString(TraceFormat::kCanonical, a, "mem.csv", {}, nullptr);
  ASSERT_TRUE(disk.ok()) << disk.error().message;
  EXPECT_TRUE(TracesEqual(t, *disk, &diff)) << diff;
  std::remove(path.c_str());
}

Result<Trace> Parse(TraceFormat f, std::string_view text, ImportReport* rep = nullptr, bool skip = false) {
  ImportOptions o;
  o.skip_bad_rows = skip;
  return ImportTraceFromString(f, text, "t.csv", o, rep);
}

std::string ErrorOf(TraceFormat f, std::string_view text) {
  auto r = Parse(f, text);
  return r.ok() ? std::string("<ok>") : r.error().message;
}

// ------------------------------------------------------------------ Helios

// SplitPlain takes exactly the rows SplitLine + ForEachRow would split into N plain fields
// (a trailing empty field tolerated) and the same fields; every other row it leaves alone.
// Lines of 4..40 bytes cross the 16-byte blocks and the overlapping tail block.
TEST(SplitPlain, AgreesWithSplitLineOnPlainRowsAndRefusesTheRest) {
  const std::string cases[] = {
      "a,b,c,d,e", "2017-10-09 07:01:55,66.0,1,66.0,11cb48", "2017-10-09 07:01:55,66.0,1,66.0,11cb48,", ",,,,",
      ",,,,,", ",,,,,,", "a,b,c,d", "a,b,c,d,e,f", "a,b,c,d,\"e\"", "2017-10-09 07:01:55,66.0,1,66.0,a\"b",
      "\"2017-10-09 07:01:55\",66.0,1,66.0,x", "2017-10-09 07:01:55,66.0,1,66.0,verylongclusternamethatexceeds16",
      "2017-10-09 07:01:55,66.0,1,66.0,x,,", "abcdefghijklmnop,q,r,s,t", "abcdefghijklmno,,,,", "x,y,z,w,abcdefghijklmnopqrstuvwxyz,"};
  for (const std::string& line : cases) {
    std::vector<Field> f;
    std::vector<std::string> scratch;
    uint32_t bad = 0;
    const bool split = SplitLine(line, ',', &f, &scratch, &bad);
    const bool quoted = line.find('"') != std::string::npos;
    if (f.size() == 6 && f.back().text.empty()) f.pop_back();
    const bool plain = split && !quoted && f.size() == 5;
    std::string_view got[5];
    ASSERT_EQ(trace_internal::SplitPlain(line, ',', got), plain) << line;
    if (!plain) continue;
    for (size_t k = 0; k < 5; ++k) EXPECT_EQ(got[k], f[k].text) << line << " field " << k;
  }
}

TEST(HeliosImport, FixtureValues) {
  ImportReport rep;
  auto t = ImportTrace(TraceFormat::kHelios, {Fixture("helios_cluster_log.csv")}, {}, &rep);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 5u);
  EXPECT_EQ(rep.rows_read, 5u);
  EXPECT_TRUE(t->epoch_known);
  int64_t e;
  ASSERT_TRUE(ParseDateTime("2020-09-01 00:00:10", &e));
  EXPECT_EQ(t->epoch_unix, e);  // epoch = first submit
  const Job& j0 = t->jobs[0];
  EXPECT_EQ(t->source_ids[0], "6123");
  EXPECT_EQ(t->users.Get(j0.user.value()), "uKzA3");
  EXPECT_EQ(t->vcs.Get(j0.vc.value()), "vc6YE");
  EXPECT_EQ(j0.submit, 0);
  EXPECT_EQ(j0.start, 2);
  EXPECT_EQ(j0.end, 3602);
  EXPECT_EQ(j0.duration, 3600);
  EXPECT_EQ(j0.gpus, 8u);
  EXPECT_EQ(j0.cpu_milli, 48000u);
  EXPECT_EQ(j0.nodes, 1u);
  EXPECT_EQ(j0.state, JobState::kCompleted);
  EXPECT_EQ(t->jobs[1].gpus, 0u);  // CPU jobs are kept
  EXPECT_EQ(t->jobs[1].state, JobState::kFailed);
  const Job& c = t->jobs[2];  // cancelled before start
  EXPECT_EQ(c.state, JobState::kCancelled);
  EXPECT_EQ(c.start, kNoTime);
  EXPECT_EQ(c.end, kNoTime);
  EXPECT_EQ(c.duration, -1);
  EXPECT_EQ(t->jobs[3].state, JobState::kTimeout);
  EXPECT_EQ(t->jobs[4].state, JobState::kNodeFail);
  ExpectRoundTrip(*t);
}

TEST(HeliosImport, GpuNumberFileIsValidatedAndIgnored) {
  ImportReport rep;
  auto t = ImportTrace(TraceFormat::kHelios,
                       {Fixture("helios_cluster_log.csv"), Fixture("helios_cluster_gpu_number.csv")}, {}, &rep);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->jobs.size(), 5u);
  EXPECT_EQ(rep.rows_read, 5u);
  ASSERT_EQ(rep.warnings.size(), 1u);
  EXPECT_NE(rep.warnings[0].find("cluster configuration"), std::string::npos);
  auto vcs = ReadHeliosVcGpus(Fixture("helios_cluster_gpu_number.csv"), "2020-09-01");
  ASSERT_TRUE(vcs.ok()) << vcs.error().message;
  EXPECT_EQ(vcs->size(), 3u);
  EXPECT_EQ(vcs->at("vc6YE"), 136);
  EXPECT_EQ(vcs->count("total"), 0u);
  EXPECT_FALSE(ReadHeliosVcGpus(Fixture("helios_cluster_gpu_number.csv"), "2021-01-01").ok());
  // A bad value in the GPU-number file fails the import.
  auto bad = Parse(TraceFormat::kHelios, "date,vcA,total\n2020-09-01,x,8\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "t.csv:2:12: field 'gpus': expected an integer in [0, 1000000], got \"x\"");
}

TEST(HeliosImport, SharedEpochForSwfFiles) {
  std::string real = std::string(ORRERY_SHARED_DIR) + "/traces/helios-aggregates/Earth_gpu_number.csv";
  if (!std::ifstream(real)) GTEST_SKIP() << "shared data not found at " << real;
  auto vcs = ReadHeliosVcGpus(real, "2020-04-01");
  ASSERT_TRUE(vcs.ok()) << vcs.error().message;
  EXPECT_EQ(vcs->at("vchbv"), 112);
  EXPECT_EQ(vcs->size(), 25u);
}

// ------------------------------------------------------------------ sacct

TEST(SacctImport, FixtureValues) {
  ImportReport rep;
  auto t = ImportTrace(TraceFormat::kSacct, {Fixture("sacct.txt")}, {}, &rep);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(rep.rows_read, 12u);
  EXPECT_EQ(t->jobs.size(), 10u);
  EXPECT_EQ(rep.skipped_by_reason["job step (JobID with '.')"], 2u);
  const Job& a = t->jobs[0];
  EXPECT_EQ(t->source_ids[0], "1001");
  EXPECT_EQ(t->names.Get(a.name.value()), "train_llm");
  EXPECT_EQ(t->users.Get(a.user.value()), "alice");
  EXPECT_EQ(t->vcs.Get(a.vc.value()), "gpu");
  EXPECT_EQ(a.submit, 0);
  EXPECT_EQ(a.start, 60);
  EXPECT_EQ(a.end, 7260);
  EXPECT_EQ(a.duration, 7200);
  EXPECT_EQ(a.walltime, 86400);
  EXPECT_EQ(a.gpus, 4u);
  EXPECT_EQ(a.cpu_milli, 32000u);
  EXPECT_EQ(a.mem_mib, 256u * 1024);
  EXPECT_EQ(a.nodes, 1u);
  ASSERT_NE(a.gpu_types, 0u);
  EXPECT_EQ(t->gpu_types.Get(0), "a100");
  EXPECT_EQ(a.state, JobState::kCompleted);
  const Job& arr = t->jobs[1];
  EXPECT_EQ(t->source_ids[1], "1002_4");
  EXPECT_EQ(arr.state, JobState::kCancelled);
  EXPECT_EQ(arr.walltime, 1800);
  EXPECT_EQ(arr.mem_mib, 32000u);
  const Job& het = t->jobs[2];
  EXPECT_EQ(t->source_ids[2], "1003+0");
  EXPECT_EQ(het.state, JobState::kFailed);  // OUT_OF_MEMORY
  EXPECT_EQ(het.walltime, -1);              // UNLIMITED
  EXPECT_EQ(het.gpus, 0u);
  const Job& pend = t->jobs[3];
  EXPECT_EQ(pend.state, JobState::kPending);
  EXPECT_EQ(pend.start, kNoTime);
  EXPECT_EQ(pend.duration, -1);
  EXPECT_EQ(pend.walltime, 2 * 86400 + 12 * 3600);
  EXPECT_EQ(pend.gpus, 8u);  // from ReqTRES (AllocTRES empty)
  EXPECT_EQ(pend.nodes, 2u);
  EXPECT_EQ(pend.mem_mib, 512u * 1024);
  const Job& run = t->jobs[4];
  EXPECT_EQ(run.state, JobState::kRunning);
  EXPECT_EQ(run.end, kNoTime);
  EXPECT_EQ(run.duration, 182);  // Elapsed MM:SS so far
  EXPECT_EQ(run.walltime, -1);   // Partition_Limit
  EXPECT_EQ(run.mem_mib, 1024u * 1024);
  EXPECT_EQ(t->gpu_types.Get(1), "h100");
  EXPECT_EQ(t->jobs[5].state, JobState::kTimeout);
  EXPECT_EQ(t->jobs[5].mem_mib, 4u);  // 4096K
  const Job& rq = t->jobs[6];
  EXPECT_EQ(rq.state, JobState::kPending);  // REQUEUED
  EXPECT_EQ(rq.mem_mib, 2048u);             // 2Gc x 1 CPU
  EXPECT_EQ(t->jobs[7].state, JobState::kPreempted);
  EXPECT_EQ(t->jobs[8].state, JobState::kNodeFail);
  EXPECT_EQ(t->jobs[9].state, JobState::kFailed);
  // Account (and QOS when the listing has it): the job's accounting, for the slurm policy.
  ASSERT_EQ(t->accounting.size(), 10u);
  EXPECT_EQ(t->accounting[0].account, "proj1");
  EXPECT_EQ(t->accounting[1].account, "proj2");
  EXPECT_EQ(t->accounting[0].qos, "");
  ExpectRoundTrip(*t);  // through the canonical format's v2
}

TEST(SacctImport, QosColumnFillsTheAccounting) {
  auto t = Parse(TraceFormat::kSacct, "JobID|Submit|Elapsed|Account|QOS\n7|2024-01-01T00:00:00|01:00|lab| high \n"
                                      "8|2024-01-01T00:00:01|01:00||\n");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->accounting.size(), 2u);
  EXPECT_EQ(t->accounting[0], (JobAccount{"lab", "high", 0}));
  EXPECT_TRUE(t->accounting[1].empty());
  auto none = Parse(TraceFormat::kSacct, "JobID|Submit|Elapsed|Account\n7|2024-01-01T00:00:00|01:00|\n");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->accounting.empty());  // no job has any: no accounting at all
}

// v2 carries account, qos and nice after v1's columns; v1 files are still read, and a trace
// without accounting is still written as v1.
TEST(CanonicalV2, AccountingRoundTripsAndV1IsStillRead) {
  const std::string v2 =
      "#orrery-trace v2\n#origin=test\n#epoch_unix=\n"
      "id,source_id,user,vc,name,submit,duration,walltime,start,end,gpus,gpu_milli,gpu_types,nodes,cpu_milli,mem_mib,"
      "state,account,qos,nice\n"
      "0,,ann,gpu,,0,60,,,,8,1000,,0,0,0,UNKNOWN,\"lab,a\",high,-5\n"
      "1,,bob,gpu,,5,60,,,,8,1000,,0,0,0,UNKNOWN,,,0\n";
  auto t = Parse(TraceFormat::kCanonical, v2);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->accounting.size(), 2u);
  EXPECT_EQ(t->accounting[0], (JobAccount{"lab,a", "high", -5}));
  EXPECT_TRUE(t->accounting[1].empty());
  EXPECT_EQ(CanonicalTraceToString(*t), v2);
  const std::string v1 = "#orrery-trace v1\n#origin=test\n#epoch_unix=\n"
                         "id,source_id,user,vc,name,submit,duration,walltime,start,end,gpus,gpu_milli,gpu_types,nodes,"
                         "cpu_milli,mem_mib,state\n0,,ann,gpu,,0,60,,,,8,1000,,0,0,0,UNKNOWN\n";
  auto old = Parse(TraceFormat::kCanonical, v1);
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_TRUE(old->accounting.empty());
  EXPECT_EQ(CanonicalTraceToString(*old), v1);
  EXPECT_EQ(ErrorOf(TraceFormat::kCanonical, v2.substr(0, v2.rfind("-5")) + "x\n"),
            "t.csv:5:56: field 'nice': expected an integer in [-1000000000, 1000000000], got \"x\"");
}

TEST(SacctImport, ColumnsInAnyOrderAndMinimumSet) {
  auto t = Parse(TraceFormat::kSacct, "Elapsed|Submit|JobID\n01:00|2024-01-01T00:00:00|7\n");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->jobs[0].duration, 60);
  EXPECT_EQ(ErrorOf(TraceFormat::kSacct, "JobID|Submit|State\n1|2024-01-01T00:00:00|COMPLETED\n"),
            "t.csv:1: sacct header needs Start and End, or Elapsed (expected e.g. "
            "'JobID|JobName|User|Account|Partition|Submit|Start|End|Elapsed|Timelimit|State|AllocTRES|ReqTRES|NNodes|"
            "NCPUS|ReqMem|QOS'), got \"JobID|Submit|State\"");
  EXPECT_NE(ErrorOf(TraceFormat::kSacct, "JobID,Submit,Elapsed\n1,2024-01-01T00:00:00,00:01\n")
                .find("the header is separated by ','"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(TraceFormat::kSacct, "JobID|Submit|Elapsed\n1|2024-01-01T00:00:00|1:xx\n"),
            "t.csv:2:23: field 'Elapsed': expected a duration \"[D-]HH:MM:SS\", got \"1:xx\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kSacct, "JobID|Submit|Elapsed|State\n1|2024-01-01T00:00:00|00:01|WEIRD\n"),
            "t.csv:2:29: field 'State': expected a Slurm job state (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...), "
            "got \"WEIRD\"");
}

// The header is split as its rows are: a quoted header field that holds the delimiter
// is one column, so JobID is column 1 of 4 (not 2 of 5, past the end of every row).
TEST(SacctImport, QuotedHeaderFieldIsOneColumnAsInItsRows) {
  auto t = Parse(TraceFormat::kSacct, "\"a|b\"|JobID|Submit|Elapsed\nx|7|2024-01-01T00:00:00|01:00\n");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->source_ids[0], "7");
  EXPECT_EQ(t->jobs[0].duration, 60);
  EXPECT_EQ(ErrorOf(TraceFormat::kSacct, "JobID|\"Submit|Elapsed\n1|2024-01-01T00:00:00|00:01\n"),
            "t.csv:1:7: unterminated quote in the sacct --parsable2 header (expected "
            "'JobID|JobName|User|Account|Partition|Submit|Start|End|Elapsed|Timelimit|State|AllocTRES|ReqTRES|NNodes|"
            "NCPUS|ReqMem|QOS')");
}

// ------------------------------------------------------------------ Acme

TEST(AcmeImport, SerenFixture) {
  auto t = ImportTrace(TraceFormat::kAcme, {Fixture("acme_seren.csv")}, {}, nullptr);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 6u);
  const Job& p = t->jobs[0];
  EXPECT_EQ(t->source_ids[0], "dlc1a2b3");
  EXPECT_EQ(t->names.Get(p.name.value()), "Pretrain");  // job type -> name
  EXPECT_FALSE(p.vc.valid());
  EXPECT_EQ(p.gpus, 8u);
  EXPECT_EQ(p.cpu_milli, 64000u);
  EXPECT_EQ(p.duration, 36000);
  EXPECT_EQ(p.start, 1);
  EXPECT_EQ(t->jobs[1].gpus, 0u);
  EXPECT_EQ(t->jobs[2].start, kNoTime);
  EXPECT_EQ(t->jobs[2].state, JobState::kCancelled);
  EXPECT_EQ(t->names.Get(t->jobs[3].name.value()), "SFT");
  EXPECT_EQ(t->jobs[3].nodes, 2u);
  EXPECT_EQ(t->jobs[4].state, JobState::kNodeFail);
  ExpectRoundTrip(*t);
}

TEST(AcmeImport, KalosExtraColumns) {
  auto t = ImportTrace(TraceFormat::kAcme, {Fixture("acme_kalos.csv")}, {}, nullptr);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[0].gpus, 1024u);
  EXPECT_EQ(t->jobs[0].nodes, 128u);
  EXPECT_EQ(t->jobs[0].mem_mib, 1600u * 1024 * 128);
  EXPECT_EQ(t->jobs[1].mem_mib, 123392u);  // 120.5 GB
  ExpectRoundTrip(*t);
}

TEST(FormatDetection, Fixtures) {
  EXPECT_EQ(*DetectTraceFormat(Fixture("helios_cluster_log.csv")), TraceFormat::kHelios);
  EXPECT_EQ(*DetectTraceFormat(Fixture("helios_cluster_gpu_number.csv")), TraceFormat::kHelios);
  EXPECT_EQ(*DetectTraceFormat(Fixture("sacct.txt")), TraceFormat::kSacct);
  EXPECT_EQ(*DetectTraceFormat(Fixture("acme_seren.csv")), TraceFormat::kAcme);
  EXPECT_EQ(*DetectTraceFormat(Fixture("acme_kalos.csv")), TraceFormat::kAcme);
  auto t = LoadTrace(Fixture("acme_kalos.csv"));
  ASSERT_TRUE(t.ok());
  std::string p = TmpPath("semi.csv");
  {
    std::ofstream(p) << "timestamp;duration;num_gpus;gpu_time;cluster\n2017-10-01 00:00:00;1.0;1;1.0;a\n";
  }
  auto d = DetectTraceFormat(p);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("looks like a philly file separated by ';'"), std::string::npos) << d.error().message;
  std::remove(p.c_str());
}

// ------------------------------------------------------------------ bad input (Philly syntax)

constexpr std::string_view kPhillyHeader = "timestamp,duration,num_gpus,gpu_time,cluster\n";

TEST(BadInput, EmptyAndHeaderOnly) {
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, ""), "t.csv: no jobs (empty input or header only)");
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, kPhillyHeader), "t.csv: no jobs (empty input or header only)");
  EXPECT_EQ(ErrorOf(TraceFormat::kSwf, "; UnixStartTime: 0\n"), "t.csv: no jobs (empty input or header only)");
  EXPECT_EQ(ErrorOf(TraceFormat::kCanonical, ""), "t.csv: no jobs (empty input or header only)");
}

TEST(BadInput, WrongHeaderNamesExpected) {
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, "time,duration,num_gpus,gpu_time,cluster\n"),
            "t.csv:1: not a philly header: expected 'timestamp,duration,num_gpus,gpu_time,cluster' (missing column "
            "'timestamp'), got \"time,duration,num_gpus,gpu_time,cluster\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, "2017-10-01 00:00:00,1.0,1,1.0,a\n"),
            "t.csv:1: not a philly header: expected 'timestamp,duration,num_gpus,gpu_time,cluster' (missing columns "
            "'timestamp', 'duration', 'num_gpus', 'gpu_time', 'cluster'), got \"2017-10-01 00:00:00,1.0,1,1.0,a\"");
  EXPECT_NE(ErrorOf(TraceFormat::kHelios, "job_id,user\n").find("expected 'job_id,user,vc,gpu_num"), std::string::npos);
  EXPECT_NE(ErrorOf(TraceFormat::kCanonical, "id,source_id\n").find("expected '#orrery-trace v1'"), std::string::npos);
}

TEST(BadInput, WrongDelimiterDetected) {
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, "timestamp;duration;num_gpus;gpu_time;cluster\n"),
            "t.csv:1: the header is separated by ';', but the philly format uses ',' (expected header "
            "'timestamp,duration,num_gpus,gpu_time,cluster', got \"timestamp;duration;num_gpus;gpu_time;cluster\")");
  EXPECT_NE(ErrorOf(TraceFormat::kAlibabaOpenb,
                    "name\tcpu_milli\tmemory_mib\tnum_gpu\tgpu_milli\tgpu_spec\tqos\tpod_phase\tcreation_time\t"
                    "deletion_time\tscheduled_time\n")
                .find("separated by tab"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(TraceFormat::kSwf, "1,0,5,10,1,-1,-1,1,100,-1,1,1,1,-1,-1,1,-1,-1\n"),
            "t.csv:1: expected 18 whitespace-separated SWF fields, got one field containing ',' (is this a CSV file?)");
}

TEST(BadInput, LocatedFieldErrors) {
  std::string h(kPhillyHeader);
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, h + "2017-10-01 00:00:00,abc,1,1.0,a\n"),
            "t.csv:2:21: field 'duration': expected an integer in [-1000000000000, 1000000000000], got \"abc\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, h + "2017-10-01 00:00:00,1.0,1,1.0,a\n2017-13-01 00:00:00,1.0,1,1.0,a\n"),
            "t.csv:3:1: field 'timestamp': expected a date-time \"YYYY-MM-DD HH:MM:SS\", got \"2017-13-01 00:00:00\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, h + "2017-10-01 00:00:00,-5.0,1,-5.0,a\n"),
            "t.csv:2:21: field 'duration': expected a non-negative duration, got \"-5.0\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, h + "2017-10-01 00:00:00,10.0,2,10.0,a\n"),
            "t.csv:2:28: field 'gpu_time': expected duration * num_gpus = 20, got \"10.0\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, h + "2017-10-01 00:00:00,10.0,1,10.0\n"),
            "t.csv:2: expected 5 fields (timestamp,duration,num_gpus,gpu_time,cluster), got 4");
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, h + "\"2017-10-01 00:00:00,10.0,1,10.0,a\n"), "t.csv:2:1: unterminated quote");
}

TEST(BadInput, HugeNumbers) {
  std::string h(kPhillyHeader);
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, h + "2017-10-01 00:00:00,1.0,99999999999999999999,1.0,a\n"),
            "t.csv:2:25: field 'num_gpus': expected an integer in [0, 1000000] (value out of range), got "
            "\"99999999999999999999\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kPhilly, h + "2017-10-01 00:00:00,1.0,1000001,1000001.0,a\n"),
            "t.csv:2:25: field 'num_gpus': expected an integer in [0, 1000000] (value out of range), got \"1000001\"");
  EXPECT_NE(ErrorOf(TraceFormat::kSwf, "1 0 5 99999999999999999999 1 -1 -1 1 100 -1 1 1 1 -1 -1 1 -1 -1\n")
                .find("field 'run_time': expected an integer in [-1, 1000000000000] (value out of range)"),
            std::string::npos);
}

TEST(BadInput, SkipBadRowsCountsPerReason) {
  std::string text = std::string(kPhillyHeader) +
                     "2017-10-01 00:00:00,10.0,1,10.0,a\n"
                     "2017-10-01 00:00:01,-1.0,1,-1.0,a\n"
                     "2017-10-01 00:00:02,10.0,2,10.0,a\n"
                     "2017-10-01 00:00:03,x,1,1.0,a\n"
                     "2017-10-01 00:00:04,10.0,1\n"
                     "2017-10-01 00:00:05,10.0,1,10.0,b\n";
  ImportReport rep;
  auto t = Parse(TraceFormat::kPhilly, text, &rep, true);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(rep.rows_read, 6u);
  EXPECT_EQ(rep.jobs_imported, 2u);
  EXPECT_EQ(rep.rows_skipped, 4u);
  EXPECT_EQ(rep.skipped_by_reason["negative duration"], 1u);
  EXPECT_EQ(rep.skipped_by_reason["gpu_time != duration * num_gpus"], 1u);
  EXPECT_EQ(rep.skipped_by_reason["bad value in field 'duration'"], 1u);
  EXPECT_EQ(rep.skipped_by_reason["wrong number of fields"], 1u);
  // All rows bad -> "no jobs".
  ImportReport rep2;
  auto none = Parse(TraceFormat::kPhilly, std::string(kPhillyHeader) + "x,1.0,1,1.0,a\n", &rep2, true);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "t.csv: no jobs (all 1 rows skipped)");
}

TEST(BadInput, UnsortedInputIsStableSortedWithWarning) {
  ImportReport rep;
  auto t = Parse(TraceFormat::kPhilly,
                 std::string(kPhillyHeader) + "2017-10-01 00:00:05,1.0,1,1.0,a\n2017-10-01 00:00:00,2.0,1,2.0,b\n"
                                              "2017-10-01 00:00:05,3.0,1,3.0,c\n2017-10-01 00:00:00,4.0,1,4.0,d\n",
                 &rep);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->jobs.size(), 4u);
  EXPECT_EQ(t->jobs[0].duration, 2);
  EXPECT_EQ(t->jobs[1].duration, 4);
  EXPECT_EQ(t->jobs[2].duration, 1);
  EXPECT_EQ(t->jobs[3].duration, 3);
  EXPECT_EQ(t->jobs[2].submit, 5);
  for (uint32_t k = 0; k < 4; ++k) EXPECT_EQ(t->jobs[k].id, JobId(k));  // numbered after sorting
  ASSERT_EQ(rep.warnings.size(), 1u);
  EXPECT_NE(rep.warnings[0].find("not sorted"), std::string::npos);
  EXPECT_EQ(t->vcs.Get(0), "b");  // tables in order of first use after sorting
  ExpectRoundTrip(*t);
}

TEST(BadInput, DuplicateIds) {
  std::string h = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n";
  std::string rows = "1,u,v,1,1,1,COMPLETED,2020-01-01 00:00:00,2020-01-01 00:00:00,2020-01-01 00:00:10,10,0\n"
                     "2,u,v,1,1,1,COMPLETED,2020-01-01 00:00:01,2020-01-01 00:00:01,2020-01-01 00:00:11,10,0\n"
                     "1,u,v,2,1,1,FAILED,2020-01-01 00:00:02,2020-01-01 00:00:02,2020-01-01 00:00:12,10,0\n";
  EXPECT_EQ(ErrorOf(TraceFormat::kHelios, h + rows), "t.csv:4: duplicate job id \"1\" (first seen at t.csv:2)");
  ImportReport rep;
  auto t = Parse(TraceFormat::kHelios, h + rows, &rep, true);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[0].gpus, 1u);  // the first occurrence is kept
  EXPECT_EQ(rep.skipped_by_reason["duplicate job id"], 1u);
  EXPECT_EQ(rep.jobs_imported, 2u);
  EXPECT_EQ(ErrorOf(TraceFormat::kSwf, "5 0 0 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 1 -1 -1\n5 1 0 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 1 -1 -1\n"),
            "t.csv:2: duplicate job id \"5\" (first seen at t.csv:1)");
}

TEST(BadInput, EndBeforeStartAndNegativeDuration) {
  std::string h = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n";
  EXPECT_EQ(
      ErrorOf(TraceFormat::kHelios,
              h + "1,u,v,1,1,1,COMPLETED,2020-01-01 00:00:00,2020-01-01 00:10:00,2020-01-01 00:00:10,10,0\n"),
      "t.csv:2:63: field 'end_time': expected a time not before start_time 2020-01-01 00:10:00, got "
      "\"2020-01-01 00:00:10\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kHelios,
                    h + "1,u,v,1,1,1,COMPLETED,2020-01-01 00:00:00,2020-01-01 00:00:00,2020-01-01 00:00:10,-10,0\n"),
            "t.csv:2:83: field 'duration': expected a non-negative duration, got \"-10\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kHelios,
                    h + "1,u,v,1,1,1,DONE,2020-01-01 00:00:00,2020-01-01 00:00:00,2020-01-01 00:00:10,10,0\n"),
            "t.csv:2:13: field 'state': expected one of COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL, got \"DONE\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kSacct,
                    "JobID|Submit|Start|End\n1|2024-01-01T00:00:00|2024-01-01T01:00:00|2024-01-01T00:30:00\n"),
            "t.csv:2:43: field 'End': expected a time not before Start 2024-01-01 01:00:00, got \"2024-01-01T00:30:00\"");
}

TEST(BadInput, OpenbRules) {
  std::string h =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
  auto t = Parse(TraceFormat::kAlibabaOpenb, h + "p0,1000,1024,1,470,A|B,LS,Running,0,100,10\n"
                                                 "p1,1000,1024,2,1000,B,BE,Pending,5,50,\n"
                                                 "p2,1000,1024,0,0,,BE,Succeeded,6,60,7\n");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->jobs[0].gpu_milli, 470u);
  EXPECT_EQ(t->jobs[0].gpu_types, 3u);
  EXPECT_EQ(t->jobs[0].duration, 90);
  EXPECT_EQ(t->jobs[0].state, JobState::kRunning);
  EXPECT_EQ(t->jobs[1].state, JobState::kPending);
  EXPECT_EQ(t->jobs[1].start, kNoTime);
  EXPECT_EQ(t->jobs[1].duration, -1);
  EXPECT_EQ(t->jobs[1].end, 50);
  EXPECT_EQ(t->jobs[1].gpu_types, 2u);
  EXPECT_EQ(t->jobs[2].gpu_milli, 1000u);
  EXPECT_FALSE(t->epoch_known);
  ExpectRoundTrip(*t);
  EXPECT_EQ(ErrorOf(TraceFormat::kAlibabaOpenb, h + "p0,1000,1024,1,470,,LS,Running,0,100,\n"),
            "t.csv:2:38: field 'scheduled_time': expected a time (pod_phase is Running), got \"\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kAlibabaOpenb, h + "p0,1000,1024,1,470,,LS,Running,10,100,5\n"),
            "t.csv:2:39: field 'scheduled_time': expected a time not before creation_time 10, got \"5\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kAlibabaOpenb, h + "p0,1000,1024,1,470,,LS,Done,10,100,5\n"),
            "t.csv:2:24: field 'pod_phase': expected one of Succeeded, Failed, Running, Pending, got \"Done\"");
  EXPECT_NE(ErrorOf(TraceFormat::kAlibabaOpenb, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,1000\n")
                .find("can only drive static packing"),
            std::string::npos);
  EXPECT_NE(ErrorOf(TraceFormat::kAlibabaOpenb, "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,1,T4\n").find("node list"),
            std::string::npos);
}

TEST(Swf, OptionsAndMapping) {
  std::string text =
      "; UnixStartTime: 1000\n; Partition: 2 siteB\n"
      "7 10 5 100 4 -1 -1 8 200 2048 5 3 1 9 2 1 -1 -1\n"
      "8 20 -1 -1 -1 -1 -1 2 -1 -1 -1 -1 -1 -1 -1 2 -1 -1\n";
  auto t = Parse(TraceFormat::kSwf, text);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->epoch_unix, 1000);
  const Job& a = t->jobs[0];
  EXPECT_EQ(a.submit, 10);
  EXPECT_EQ(a.start, 15);
  EXPECT_EQ(a.end, 115);
  EXPECT_EQ(a.walltime, 200);
  EXPECT_EQ(a.cpu_milli, 4000u);
  EXPECT_EQ(a.gpus, 0u);
  EXPECT_EQ(a.mem_mib, 8u);  // 2048 KB x 4 procs
  EXPECT_EQ(a.state, JobState::kCancelled);
  EXPECT_EQ(t->users.Get(a.user.value()), "u3");
  EXPECT_EQ(t->names.Get(a.name.value()), "x9");
  EXPECT_EQ(t->vcs.Get(a.vc.value()), "q2");
  const Job& b = t->jobs[1];
  EXPECT_EQ(b.start, kNoTime);
  EXPECT_EQ(b.duration, -1);
  EXPECT_EQ(b.cpu_milli, 2000u);  // requested procs when allocated is -1
  EXPECT_EQ(t->vcs.Get(b.vc.value()), "siteB");
  EXPECT_EQ(b.state, JobState::kUnknown);
  ImportOptions o;
  o.swf_procs_as_gpus = true;
  auto g = ImportTraceFromString(TraceFormat::kSwf, text, "t.swf", o, nullptr);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->jobs[0].gpus, 4u);
  EXPECT_EQ(g->jobs[0].cpu_milli, 0u);
  ExpectRoundTrip(*t);
  EXPECT_EQ(ErrorOf(TraceFormat::kSwf, "1 0 5 10 1 -1 -1 1 100 -1 9 1 1 -1 -1 1 -1 -1\n"),
            "t.csv:1:27: field 'status': expected one of -1, 0, 1, 2, 3, 4, 5, got \"9\"");
}

// ------------------------------------------------------------------ canonical

TEST(Canonical, QuotingAndUnknownsAreLossless) {
  Trace t;
  t.origin = "test";
  t.epoch_known = false;
  Job j;
  j.id = JobId(0);
  j.user = UserId(t.users.Intern("a,b"));
  j.name = NameId(t.names.Intern("say \"hi\""));
  j.vc = VcId(static_cast<uint16_t>(t.vcs.Intern(" sp ")));
  j.submit = -5;
  j.gpu_types = 0b11;
  t.gpu_types.Intern("A100");
  t.gpu_types.Intern("H100");
  j.state = JobState::kPreempted;
  t.jobs.push_back(j);
  Job k;
  k.id = JobId(1);
  k.submit = 7;
  k.start = 8;
  k.end = 9;
  k.duration = 1;
  k.walltime = 60;
  k.gpus = 1;
  k.gpu_milli = 250;
  k.nodes = 3;
  k.cpu_milli = 1500;
  k.mem_mib = 77;
  t.jobs.push_back(k);
  t.source_ids = {"x,1", ""};
  std::string s = CanonicalTraceToString(t);
  EXPECT_NE(s.find("0,\"x,1\",\"a,b\", sp ,\"say \"\"hi\"\"\",-5,,,,,0,1000,A100|H100,0,0,0,PREEMPTED\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("#epoch_unix=\n"), std::string::npos);
  ExpectRoundTrip(t);
}

// The reader's fast path parses integers digit by digit (eight at a time cost more
// instructions: most fields have 1..5 digits) and searches text fields sixteen bytes at a
// time: every width of every integer column (1..14 digits, negative times), text fields of
// 0..40 bytes (some quoted: the general path) and rows whose last fields lie within sixteen
// bytes of the row's end survive a round trip exactly.
TEST(Canonical, IntegersOfEveryWidthAndFieldsOfEveryLengthRoundTrip) {
  uint64_t x = 7;
  auto next = [&]() { return (x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  auto of_width = [&](int digits) {  // a random value of exactly `digits` digits
    int64_t v = 1 + static_cast<int64_t>(next() % 9);
    for (int d = 1; d < digits; ++d) v = v * 10 + static_cast<int64_t>(next() % 10);
    return v;
  };
  auto text = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + next() % 26));
    if (n > 2 && next() % 10 == 0) s[n / 2] = next() % 2 ? ',' : '"';  // quoted when written
    return s;
  };
  std::vector<int64_t> submits;
  for (int i = 0; i < 3000; ++i) submits.push_back((next() % 4 == 0 ? -1 : 1) * of_width(1 + i % 13));
  std::sort(submits.begin(), submits.end());  // the reader keeps submit order
  Trace t;
  t.origin = "widths";
  t.epoch_known = false;
  for (size_t i = 0; i < submits.size(); ++i) {
    Job j;
    j.id = JobId(static_cast<uint32_t>(i));
    j.submit = submits[i];
    const std::string user = text(i % 41), name = text(next() % 41);  // empty: no id, as the reader gives
    if (!user.empty()) j.user = UserId(t.users.Intern(user));
    if (!name.empty()) j.name = NameId(t.names.Intern(name));
    const int w = 1 + static_cast<int>(i % 13);
    if (i % 5) j.duration = of_width(w);
    if (i % 7) j.walltime = of_width(1 + (w + 3) % 13);
    if (i % 3) {
      j.start = (i % 2 ? -1 : 1) * of_width(w);
      j.end = j.start + of_width(1 + static_cast<int>(i % 9));
    }
    j.gpus = static_cast<uint32_t>(of_width(1 + static_cast<int>(i % 6)));
    j.gpu_milli = static_cast<uint16_t>(i % 4 == 0 ? 1000 : of_width(1 + static_cast<int>(i % 3)));
    j.nodes = static_cast<uint16_t>(of_width(1 + static_cast<int>(i % 4)));
    j.cpu_milli = static_cast<uint32_t>(of_width(1 + static_cast<int>(i % 9)));
    j.mem_mib = static_cast<uint32_t>(i % 11 == 0 ? 0 : of_width(1 + static_cast<int>(i % 9)));
    j.state = static_cast<JobState>(i % kNumJobStates);
    t.jobs.push_back(j);
  }
  ExpectRoundTrip(t);
}

// Values the fast path leaves to the general path, which reads them the same way as before:
// more than 18 digits (leading zeros), "-0", a field after the last column.
TEST(Canonical, IntegersTheFastPathLeavesToTheGeneralPath) {
  const std::string head = "#orrery-trace v1\n#origin=x\n#epoch_unix=\n"
                           "id,source_id,user,vc,name,submit,duration,walltime,start,end,gpus,gpu_milli,gpu_types,"
                           "nodes,cpu_milli,mem_mib,state\n";
  auto t = Parse(TraceFormat::kCanonical, head + "0,,,,,0000000000000000045,-0,,,,1,1000,,1,0,0,UNKNOWN,\n");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->jobs[0].submit, 45);   // 19 digits: the general path's ParseI64
  EXPECT_EQ(t->jobs[0].duration, 0);  // "-0"
  EXPECT_EQ(ErrorOf(TraceFormat::kCanonical, head + "0,,,,,5,,,,,1,1000,,1,0,0,UNKNOWN,x\n"),
            "t.csv:5: expected 17 fields (" + std::string("id,source_id,user,vc,name,submit,duration,walltime,start,"
                                                          "end,gpus,gpu_milli,gpu_types,nodes,cpu_milli,mem_mib,state") +
                "), got 18");
}

TEST(Canonical, BadRows) {
  std::string head = "#orrery-trace v1\n#origin=x\n#epoch_unix=\n"
                     "id,source_id,user,vc,name,submit,duration,walltime,start,end,gpus,gpu_milli,gpu_types,nodes,"
                     "cpu_milli,mem_mib,state\n";
  EXPECT_EQ(ErrorOf(TraceFormat::kCanonical, head + "0,,,,,0,,,,,1,1000,,0,0,0,DONE\n"),
            "t.csv:5:27: field 'state': expected one of UNKNOWN, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, "
            "RUNNING, PENDING, PREEMPTED, got \"DONE\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kCanonical, head + "0,,,,,0,-3,,,,1,1000,,0,0,0,UNKNOWN\n"),
            "t.csv:5:9: field 'duration': expected an integer in [0, 10000000000000] (value out of range), got \"-3\"");
  EXPECT_EQ(ErrorOf(TraceFormat::kCanonical, head + "0,a,,,,0,,,,,1,1000,,0,0,0,UNKNOWN\n1,a,,,,0,,,,,1,1000,,0,0,0,UNKNOWN\n"),
            "t.csv:6: duplicate job id \"a\" (first seen at t.csv:5)");
  EXPECT_EQ(ErrorOf(TraceFormat::kCanonical, "#orrery-trace v1\n#origin=x\nid\n"),
            "t.csv: missing metadata line '#epoch_unix=' before the header");
}

// Source ids and row locations are kept only from the first non-empty id on (TraceBuilder::
// AddJob): a duplicate after rows without ids is still reported at its own lines, and the
// ids of the kept rows line up with their jobs.
TEST(Canonical, DuplicateIdsAfterRowsWithoutIds) {
  const std::string head = "#orrery-trace v1\n#origin=x\n#epoch_unix=\n"
                           "id,source_id,user,vc,name,submit,duration,walltime,start,end,gpus,gpu_milli,gpu_types,"
                           "nodes,cpu_milli,mem_mib,state\n";
  auto row = [](int submit, const char* id) {
    return std::string("0,") + id + ",,,," + std::to_string(submit) + ",,,,,1,1000,,1,0,0,UNKNOWN\n";
  };
  // Rows 0..4 are lines 5..9; rows 2 and 4 share the id "a".
  const std::string text = head + row(0, "") + row(1, "") + row(2, "a") + row(3, "") + row(4, "a");
  EXPECT_EQ(ErrorOf(TraceFormat::kCanonical, text), "t.csv:9: duplicate job id \"a\" (first seen at t.csv:7)");
  ImportReport rep;
  auto t = Parse(TraceFormat::kCanonical, text, &rep, true);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 4u);
  EXPECT_EQ(t->source_ids, (std::vector<std::string>{"", "", "a", ""}));
  for (uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(t->jobs[k].id, JobId(k));
    EXPECT_EQ(t->jobs[k].submit, k);  // row 4 (submit 4) dropped: submits 0..3 remain
  }
  // No id at all: no source ids, jobs numbered in input order.
  auto none = Parse(TraceFormat::kCanonical, head + row(0, "") + row(7, "") + row(9, ""));
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->source_ids.empty());
  ASSERT_EQ(none->jobs.size(), 3u);
  EXPECT_EQ(none->jobs[2].id, JobId(2));
  EXPECT_EQ(none->jobs[2].submit, 9);
}

// The builder's submit sort (std::sort under 1,024 jobs, radix sort above, with 8- or
// 16-byte keys by the time range) gives std::stable_sort's order: by submit, ties in
// input order (the duration carries the input index here).
TEST(TraceBuilderOrder, EverySortPathIsAStableSortBySubmit) {
  struct Case {
    const char* what;
    size_t n;
    int64_t spread;  // submits drawn from [0, spread)
  };
  const Case cases[] = {{"small: std::sort", 500, 50},
                        {"radix, 8-byte keys", 5000, 3000},
                        {"radix, 16-byte keys (range > 2^32)", 5000, int64_t{1} << 40}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ImportOptions opt;
    ImportReport rep;
    trace_internal::TraceBuilder b(opt, &rep, "test");
    b.AddFile("t.csv");
    std::vector<Job> input;
    uint64_t x = 88172645463325252ULL;  // xorshift64: a fixed, reproducible shuffle
    for (size_t i = 0; i < c.n; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      Job j;
      j.submit = static_cast<int64_t>(x % static_cast<uint64_t>(c.spread));
      j.duration = static_cast<Duration>(i);
      j.gpus = 1;
      input.push_back(j);
      b.AddJob(j, "", trace_internal::RowLoc{0, i + 1});
    }
    auto t = b.Finish();
    ASSERT_TRUE(t.ok()) << t.error().message;
    std::stable_sort(input.begin(), input.end(), [](const Job& a, const Job& b) { return a.submit < b.submit; });
    ASSERT_EQ(t->jobs.size(), c.n);
    for (size_t k = 0; k < c.n; ++k) {
      ASSERT_EQ(t->jobs[k].duration, input[k].duration) << k;
      ASSERT_EQ(t->jobs[k].id, JobId(static_cast<uint32_t>(k)));
    }
    EXPECT_EQ(rep.warnings.size(), 1u);
  }
}

}  // namespace
}  // namespace orrery
