// Errors as values. A Result<T> holds either a T or an Error whose message
// already carries its context ("file:line:col: field 'x': expected ..., got ...").
// Functions that can fail on input return Result; invariants use ORR_CHECK.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace orrery {

// Process exit codes used by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;    // internal failure, violated invariant
inline constexpr int kExitBadInput = 2;   // malformed input, bad flags, bad config

// What kind of failure an Error is, for callers that act on it (retry, treat as done,
// report as bad setup): they test the code, never the message text.
enum class ErrorCode : uint8_t {
  kGeneric,      // no finer classification
  kNotFound,     // the named object does not exist (job id, node name, journal key)
  kWrongState,   // the object exists but the operation does not apply in its state
  kAlreadyDone,  // the requested change is already in effect
  kUnavailable,  // a service could not be reached or did not answer in time (retryable)
  kNoTool,       // a program could not be executed at all (setup error, not retryable)
  kDuplicate,    // a record with this key already exists
};

struct Error {
  std::string message;
  int exit_code = kExitBadInput;
  ErrorCode code = ErrorCode::kGeneric;

  // Prepends context: Error{"x"}.With("while importing a.csv") -> "while importing a.csv: x".
  Error With(const std::string& context) const& {
    return Error{context + ": " + message, exit_code, code};
  }
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error err) : v_(std::move(err)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void> equivalent.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error err) : err_(std::move(err)), ok_(false) {}  // NOLINT(google-explicit-constructor)
  static Status Ok() { return Status(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }

 private:
  Error err_;
  bool ok_ = true;
};

inline Error MakeError(std::string msg, int exit_code = kExitBadInput, ErrorCode code = ErrorCode::kGeneric) {
  return Error{std::move(msg), exit_code, code};
}

}  // namespace orrery

#define ORR_CONCAT_INNER(a, b) a##b
#define ORR_CONCAT(a, b) ORR_CONCAT_INNER(a, b)

namespace orrery::result_internal {
inline Error WithContext(const Error& e) { return e; }
inline Error WithContext(const Error& e, const std::string& context) { return e.With(context); }
}  // namespace orrery::result_internal

// Returns the error of a Status/Result expression from the enclosing function:
// ORR_RETURN_IF_ERROR(expr), or ORR_RETURN_IF_ERROR(expr, context) to prepend what this layer
// was doing ("reading the journal: <the lower layer's error>"); `context` is a string
// expression, evaluated only on error.
#define ORR_RETURN_IF_ERROR(expr, ...)                                                          \
  do {                                                                                          \
    auto&& orr_status_ = (expr);                                                                \
    if (!orr_status_.ok())                                                                      \
      return ::orrery::result_internal::WithContext(orr_status_.error() __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

// ORR_ASSIGN_OR_RETURN(auto x, Compute()); declares x or returns the error.
#define ORR_ASSIGN_OR_RETURN(lhs, expr)                                         \
  auto ORR_CONCAT(orr_res_, __LINE__) = (expr);                                 \
  if (!ORR_CONCAT(orr_res_, __LINE__).ok()) return ORR_CONCAT(orr_res_, __LINE__).error(); \
  lhs = std::move(ORR_CONCAT(orr_res_, __LINE__)).value()

// Invariant check: always on, aborts with location. Never used for input validation.
#define ORR_CHECK(cond)                                                                  \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)
