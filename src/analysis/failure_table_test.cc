// The console table of `orrery simulate` with failures on: failed and cancelled jobs and the
// capacity cordoned nodes took, and the warning above kRepairWarnShare
// (docs/design/failures.md, "Repair or reboot").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/metrics.h"
#include "analysis/sim_output.h"

namespace orrery {
namespace {

RunSummary Summary(const char* policy, bool failures, double share) {
  RunSummary s;
  s.policy = policy;
  s.jobs = 100, s.finished = 90, s.failed = 7, s.withdrawn = 1;
  s.has_failures = failures;
  if (failures) {
    s.cancelled = 3;  // 2 recorded CANCELLED + 1 withdrawn
    s.cordons = 12;
    // 4 nodes × 8 GPUs over 100 h = 3,200 GPU-hours of capacity; 42 node-hours × 8 GPUs = 336
    // GPU-hours cordoned = 10.5 % (over 10 %: warned); 30 node-hours = 7.5 % (not warned).
    s.cordoned_node_hours = share * 3200 / 8;
    s.cordoned_capacity_share = share;
  }
  return s;
}

TEST(FailureTable, ShowsFailedCancelledAndCordonedNodeHours) {
  const std::string t = FormatSummaryTable({Summary("fifo", true, 0.105), Summary("sjf", true, 0.075)});
  EXPECT_NE(t.find("jobs failed / cancelled"), std::string::npos) << t;
  EXPECT_NE(t.find("7 / 3"), std::string::npos) << t;
  EXPECT_NE(t.find("cordoned node-hours"), std::string::npos) << t;
  EXPECT_NE(t.find("42 (10.5 %)"), std::string::npos) << t;
  EXPECT_NE(t.find("30 (7.5 %)"), std::string::npos) << t;
}

TEST(FailureTable, NoFailureRowsWithoutFailures) {
  const std::string t = FormatSummaryTable({Summary("fifo", false, 0)});
  EXPECT_EQ(t.find("cordoned"), std::string::npos) << t;
  EXPECT_EQ(t.find("failed / cancelled"), std::string::npos) << t;
}

TEST(FailureTable, WarnsAboveTenPercentOfCapacity) {
  EXPECT_EQ(RepairCapacityWarning(Summary("fifo", true, 0.105)),
            "warning: fifo: cordoned nodes took 10.5 % of the GPU capacity (42 node-hours, 12 cordons; over 10 %): "
            "check the failure model's repair, repair_share and reboot");
  EXPECT_EQ(RepairCapacityWarning(Summary("fifo", true, 0.075)), "");
  EXPECT_EQ(RepairCapacityWarning(Summary("fifo", true, 0.10)), "");  // exactly 10 %: not over
  EXPECT_EQ(RepairCapacityWarning(Summary("fifo", false, 0)), "");
}

}  // namespace
}  // namespace orrery
