// The live job records (job_book.h): every state change goes through the tables of
// job_state.h; a change they lack is counted, journaled as an error event and made as asked.
#include "live/job_book.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "live/journal.h"
#include "live/journal_testing.h"

namespace orrery::live {
namespace {

using S = JobState;

constexpr S kAll[] = {S::kUnheld, S::kQueued,   S::kStarting,   S::kRunning,
                      S::kRejected, S::kUnplaced, S::kRecovering, S::kFailed};
constexpr Step kSteps[] = {Step::kPlanStart, Step::kPreempt,       Step::kNewGeneration,
                           Step::kOutside,   Step::kRefuse,        Step::kRetry,
                           Step::kTakePlacement, Step::kRecoverAgain, Step::kGiveUp};
constexpr Seen kSeen[] = {Seen::kEnded,   Seen::kRunningAsKnown, Seen::kRunningElsewhere, Seen::kHeld,
                          Seen::kReleased, Seen::kNodesGone,     Seen::kDelayed,          Seen::kFailed,
                          Seen::kHung,    Seen::kStopping};

// A book over a fresh journal, and jobs entered in a given state.
class Book {
 public:
  explicit Book(const std::string& name) {
    auto j = Journal::Open(FreshJournalPath("orrery_job_book_test", name), false);
    EXPECT_TRUE(j.ok());
    journal_ = std::move(*j);
    events_ = std::make_unique<EventLog>(journal_.get());
    book_ = std::make_unique<JobBook>(events_.get());
  }
  LiveJob& Job(uint32_t id, S state) {
    auto lj = std::make_unique<LiveJob>();
    lj->id = id;
    LiveJob& added = book_->Add(std::move(lj));
    book_->Enter(added, state, 100);
    return added;
  }
  JobBook& book() { return *book_; }
  const EventLog& events() const { return *events_; }

 private:
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<EventLog> events_;
  std::unique_ptr<JobBook> book_;
};

TEST(JobBook, EveryStepMovesByTheTableOrIsCountedAndMadeAsAsked) {
  Book b("steps.db");
  uint32_t id = 1;
  uint64_t illegal = 0;
  for (Step step : kSteps)
    for (S from : kAll) {
      LiveJob& lj = b.Job(id++, from);
      const std::optional<S> want = After(from, step);
      b.book().Move(lj, step, 200);
      illegal += !want;
      EXPECT_EQ(b.book().illegal_moves(), illegal) << JobStateName(from) << " + " << StepName(step);
      if (want) {
        EXPECT_EQ(lj.state(), *want) << JobStateName(from) << " + " << StepName(step);
      }
    }
  EXPECT_GT(illegal, 0u);
}

// A step the table lacks lands where the step always leads (the caller's fields assume it).
struct AsAskedRow {
  S from;
  Step step;
  S lands;
};
const AsAskedRow kAsAsked[] = {
    {S::kRunning, Step::kPlanStart, S::kStarting},     {S::kQueued, Step::kPreempt, S::kQueued},
    {S::kQueued, Step::kNewGeneration, S::kQueued},    {S::kQueued, Step::kOutside, S::kUnplaced},
    {S::kRunning, Step::kRefuse, S::kRejected},        {S::kQueued, Step::kRetry, S::kQueued},
    {S::kRunning, Step::kRecoverAgain, S::kRecovering}, {S::kRunning, Step::kGiveUp, S::kFailed},
};

TEST(JobBook, AnIllegalStepIsJournaledAsAnErrorEvent) {
  for (const AsAskedRow& r : kAsAsked) {
    Book b(std::string("as_asked_") + std::string(StepName(r.step)) + ".db");
    LiveJob& lj = b.Job(7, r.from);
    b.book().Move(lj, r.step, 300);
    EXPECT_EQ(lj.state(), r.lands) << StepName(r.step);
    EXPECT_EQ(b.book().illegal_moves(), 1u) << StepName(r.step);
    ASSERT_EQ(b.events().recent().size(), 1u);
    EXPECT_NE(b.events().recent().back().find("300 error: internal: job 7: step"), std::string::npos)
        << b.events().recent().back();
  }
}

TEST(JobBook, AReadingMovesToTheTablesNextState) {
  Book b("reading.db");
  uint32_t id = 1;
  for (S from : kAll)
    for (Seen seen : kSeen)
      for (bool open : {false, true}) {
        LiveJob& lj = b.Job(id++, from);
        const Reading r = JobBook::Read(lj, seen, open);
        EXPECT_EQ(r.tr, Next(from, seen, open));
        b.book().Move(lj, r, 10);
        EXPECT_EQ(lj.state(), r.tr.next) << JobStateName(from) << " + " << SeenName(seen);
        EXPECT_EQ(b.book().illegal_moves(), 0u) << JobStateName(from) << " + " << SeenName(seen);
      }
}

// A reading is made from the state it was read in: a job moved in between (a stale reading),
// or a transition the table does not give, is a defect.
struct StaleRow {
  const char* what;
  S read_in;
  Seen seen;
  std::optional<Step> between;     // a step made after the reading
  std::optional<Transition> forged;  // the reading's transition replaced
};
const StaleRow kStale[] = {
    {"moved in between", S::kQueued, Seen::kHeld, Step::kPlanStart, std::nullopt},
    {"a new generation in between", S::kRunning, Seen::kReleased, Step::kNewGeneration, std::nullopt},
    {"a transition the table lacks", S::kQueued, Seen::kHeld, std::nullopt, Transition{S::kFailed, Action::kNone}},
};

TEST(JobBook, AStaleOrForgedReadingIsCounted) {
  for (const StaleRow& r : kStale) {
    Book b("stale.db");
    LiveJob& lj = b.Job(5, r.read_in);
    Reading reading = JobBook::Read(lj, r.seen, false);
    if (r.between) b.book().Move(lj, *r.between, 20);
    if (r.forged) reading.tr = *r.forged;
    const uint64_t before = b.book().illegal_moves();
    b.book().Move(lj, reading, 30);
    EXPECT_EQ(b.book().illegal_moves(), before + 1) << r.what;
    EXPECT_EQ(lj.state(), reading.tr.next) << r.what;  // made as asked
  }
}

TEST(JobBook, EnteredOnceThenMovedOnly) {
  Book b("enter.db");
  LiveJob& lj = b.Job(9, S::kQueued);
  EXPECT_TRUE(lj.entered());
  EXPECT_EQ(b.book().illegal_moves(), 0u);
  b.book().Enter(lj, S::kRunning, 40);
  EXPECT_EQ(b.book().illegal_moves(), 1u);
  EXPECT_EQ(lj.state(), S::kRunning);
}

TEST(JobBook, RecordsAndSlots) {
  Book b("records.db");
  for (uint32_t id : {30u, 10u, 20u}) b.Job(id, S::kQueued);
  EXPECT_EQ(b.book().size(), 3u);
  EXPECT_EQ(b.book().SortedIds(), (std::vector<uint32_t>{10, 20, 30}));
  b.book().Bind(*b.book().Find(20), 4);
  EXPECT_EQ(b.book().Find(20)->slot, 4u);
  EXPECT_EQ(b.book().JobAt(4), 20u);
  EXPECT_EQ(b.book().JobAt(99), 0u);  // no such slot
  b.book().Erase(10);
  EXPECT_FALSE(b.book().Has(10));
  EXPECT_EQ(b.book().Find(10), nullptr);
  b.book().ClearSlots();
  EXPECT_EQ(b.book().JobAt(4), 0u);
  EXPECT_TRUE(b.events().recent().empty());
}

TEST(JobBook, BeliefsStayOutOfTheJobsDuration) {
  LiveJob lj;
  lj.declared = 3600;
  EXPECT_EQ(lj.job.duration, -1);  // the truth stays unknown in live mode
}

}  // namespace
}  // namespace orrery::live
