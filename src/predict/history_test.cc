// Helios history estimator on a hand-made trace. Expected values were worked out by hand
// and checked against a pure-Python transcription of HeliosArtifact's NaiveEstimator
// (difflib.get_close_matches(n, names, n=2, cutoff=0.6) + the branches of inference()).
#include "predict/history.h"

#include <gtest/gtest.h>

#include "predict/test_trace.h"

namespace orrery {
namespace {

using predict_test::MakeJob;
using B = HeliosHistoryEstimator::Branch;

class HistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // History (user, name, GPUs, duration):
    const struct {
      const char* u;
      const char* n;
      uint32_t g;
      Duration d;
    } hist[] = {
        {"alice", "train_resnet50", 1, 100}, {"alice", "train_resnet50", 1, 201}, {"alice", "train_resnet50", 8, 1000},
        {"bob", "train_resnet50", 2, 500},   {"bob", "bert_base", 1, 300},        {"alice", "eval", 1, 50},
        {"bob", "train_resnet18", 1, 700},   {"alice", "train_resnet18", 2, 90},
    };
    for (const auto& h : hist) history_.push_back(MakeJob(trace_, h.u, h.n, h.g, h.d));
    est_ = std::make_unique<HeliosHistoryEstimator>(&trace_);
    for (const Job& j : history_) est_->Observe(j, j.duration);
  }
  Job Query(const std::string& u, const std::string& n, uint32_t g) { return MakeJob(trace_, u, n, g, 1); }

  Trace trace_;
  std::vector<Job> history_;
  std::unique_ptr<HeliosHistoryEstimator> est_;
};

TEST_F(HistoryTest, ExactNameUserHistorySameGpus) {
  // alice's train_resnet50 with 1 GPU: (100 + 201) / 2 = 150.5 -> int 150.
  Job q = Query("alice", "train_resnet50", 1);
  EXPECT_EQ(est_->Estimate(q, 0), 150);
  EXPECT_EQ(est_->last_branch(), B::kExactUser);
  EXPECT_DOUBLE_EQ(est_->HeliosPriority(q), 150);
}

TEST_F(HistoryTest, ExactNameUserHistoryOtherGpus) {
  // No 4-GPU run: all of alice's train_resnet50: 1301 / 3 = 433.67 -> 433;
  // Helios priority int(433.67 * 4) = 1734.
  Job q = Query("alice", "train_resnet50", 4);
  EXPECT_EQ(est_->Estimate(q, 0), 433);
  EXPECT_DOUBLE_EQ(est_->HeliosPriority(q), 1734);
}

TEST_F(HistoryTest, ExactNameOtherUsers) {
  // carol never ran it: mean of all train_resnet50 = 1801 / 4 = 450.25.
  Job q = Query("carol", "train_resnet50", 1);
  EXPECT_EQ(est_->Estimate(q, 0), 450);
  EXPECT_EQ(est_->last_branch(), B::kExactAll);
  EXPECT_DOUBLE_EQ(est_->HeliosPriority(q), 450.25);
}

TEST_F(HistoryTest, SimilarNames) {
  // train_resnet101 -> matches [train_resnet50 (0.897), train_resnet18].
  Job q1 = Query("alice", "train_resnet101", 1);  // alice's 1-GPU runs of those: 100, 201 -> 150
  EXPECT_EQ(est_->Estimate(q1, 0), 150);
  EXPECT_EQ(est_->last_branch(), B::kSimilarUser);
  Job q2 = Query("alice", "train_resnet101", 2);  // alice's 2-GPU run: train_resnet18 90; priority 180
  EXPECT_EQ(est_->Estimate(q2, 0), 90);
  EXPECT_DOUBLE_EQ(est_->HeliosPriority(q2), 180);
  Job q3 = Query("carol", "train_resnet101", 3);  // all jobs with those names: 2591 / 6 = 431.83; priority 1295.5
  EXPECT_EQ(est_->Estimate(q3, 0), 432);
  EXPECT_EQ(est_->last_branch(), B::kSimilarAll);
  EXPECT_DOUBLE_EQ(est_->HeliosPriority(q3), 1295.5);
  Job q4 = Query("bob", "bert_large", 2);  // bert_base (0.737): bob's only run is 1 GPU -> 300; priority 600
  EXPECT_EQ(est_->Estimate(q4, 0), 300);
  EXPECT_EQ(est_->last_branch(), B::kSimilarUser);
  EXPECT_DOUBLE_EQ(est_->HeliosPriority(q4), 600);
}

TEST_F(HistoryTest, NoSimilarName) {
  Job q1 = Query("alice", "zzzz", 1);  // alice's mean: 1441 / 5 = 288.2
  EXPECT_EQ(est_->Estimate(q1, 0), 288);
  EXPECT_EQ(est_->last_branch(), B::kUserMean);
  Job q2 = Query("dave", "zzzz", 2);  // new user: global mean 2941 / 8 = 367.625; priority 735.25
  EXPECT_EQ(est_->Estimate(q2, 0), 368);
  EXPECT_EQ(est_->last_branch(), B::kGlobalMean);
  EXPECT_DOUBLE_EQ(est_->HeliosPriority(q2), 735.25);
  Job q3 = Query("alice", "", 1);  // no name: never matches
  EXPECT_EQ(est_->Estimate(q3, 0), 288);
  Job q4 = Query("", "train_resnet50", 1);  // no user: other users' jobs with the name
  EXPECT_EQ(est_->Estimate(q4, 0), 450);
  EXPECT_EQ(est_->last_branch(), B::kExactAll);
}

TEST_F(HistoryTest, OnlineUpdatesAndCacheRefresh) {
  Job q = Query("carol", "train_resnet101", 1);
  EXPECT_EQ(est_->Estimate(q, 0), 432);  // similar-all (cached matches)
  // carol runs train_resnet101 (1 GPU, 1000 s): now an exact name for her.
  Job done = MakeJob(trace_, "carol", "train_resnet101", 1, 1000);
  est_->Observe(done, 1000);
  EXPECT_EQ(est_->Estimate(q, 0), 1000);
  EXPECT_EQ(est_->last_branch(), B::kExactUser);
}

TEST(History, EmptyHistoryFallsBack) {
  Trace t;
  Job q = predict_test::MakeJob(t, "u", "n", 1, 5);
  HeliosHistoryEstimator est(&t, 777);
  EXPECT_EQ(est.Estimate(q, 0), 777);
  EXPECT_EQ(est.last_branch(), B::kEmpty);
}

}  // namespace
}  // namespace orrery
