// Status/Result propagation: ORR_RETURN_IF_ERROR with and without the caller's context, and
// ORR_ASSIGN_OR_RETURN.
#include <gtest/gtest.h>

#include "base/result.h"

namespace orrery {
namespace {

Status Fails() { return MakeError("disk full", kExitBadInput, ErrorCode::kUnavailable); }
Status Succeeds() { return Status::Ok(); }
Result<int> Three() { return 3; }

int context_evaluations = 0;
std::string Context() {
  ++context_evaluations;
  return "writing jobs.csv";
}

Status Plain() {
  ORR_RETURN_IF_ERROR(Fails());
  return Status::Ok();
}
Status WithContext() {
  ORR_RETURN_IF_ERROR(Succeeds(), Context());
  ORR_RETURN_IF_ERROR(Fails(), Context());
  return Status::Ok();
}
Result<int> Assign() {
  ORR_ASSIGN_OR_RETURN(int x, Three());
  ORR_RETURN_IF_ERROR(Succeeds(), "never");
  return x + 1;
}

TEST(ResultMacros, ContextIsPrependedOnErrorOnlyAndKeepsTheCode) {
  EXPECT_EQ(Plain().error().message, "disk full");
  context_evaluations = 0;
  const Status s = WithContext();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "writing jobs.csv: disk full");
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(s.error().exit_code, kExitBadInput);
  EXPECT_EQ(context_evaluations, 1);  // not evaluated for the call that succeeded
  EXPECT_EQ(Assign().value(), 4);
}

}  // namespace
}  // namespace orrery
