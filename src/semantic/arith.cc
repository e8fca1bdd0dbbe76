#include "semantic/arith.h"

#include <cctype>
#include <cmath>
#include <string>

namespace orrery::semantic {
namespace {

// Recursive descent: sum := product (('+'|'-') product)*; product := power (('*'|'/'|'%') power)*;
// power := unary ('**' power)?; unary := '-' unary | '+' unary | atom; atom := number | name | '(' sum ')'.
class Parser {
 public:
  Parser(std::string_view s, const ArithLookup& lookup, bool integer) : s_(s), lookup_(lookup), integer_(integer) {}

  std::optional<double> Run() {
    auto v = Sum();
    Skip();
    if (!v || pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;  // bounds recursion on hostile input

  void Skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Eat(std::string_view op) {
    Skip();
    if (s_.substr(pos_, op.size()) != op) return false;
    pos_ += op.size();
    return true;
  }
  std::optional<double> Sum() {
    auto v = Product();
    while (v) {
      if (Eat("+")) {
        auto r = Product();
        if (!r) return std::nullopt;
        *v += *r;
      } else if (Eat("-")) {
        auto r = Product();
        if (!r) return std::nullopt;
        *v -= *r;
      } else {
        break;
      }
    }
    return v;
  }
  std::optional<double> Product() {
    auto v = Power();
    while (v) {
      Skip();
      if (s_.substr(pos_, 2) == "**") break;
      char op = pos_ < s_.size() ? s_[pos_] : '\0';
      if (op != '*' && op != '/' && op != '%') break;
      ++pos_;
      if (op == '/' && !integer_ && Eat("/")) op = 'f';  // Python floor division
      auto r = Power();
      if (!r) return std::nullopt;
      if ((op == '/' || op == '%' || op == 'f') && *r == 0) return std::nullopt;
      if (op == '*') *v *= *r;
      else if (op == '/') *v = integer_ ? std::trunc(*v / *r) : *v / *r;
      else if (op == 'f') *v = std::floor(*v / *r);
      else *v = std::fmod(*v, *r);
    }
    return v;
  }
  std::optional<double> Power() {
    auto v = Unary();
    if (v && Eat("**")) {
      auto r = Power();
      if (!r) return std::nullopt;
      return std::pow(*v, *r);
    }
    return v;
  }
  std::optional<double> Unary() {
    if (++depth_ > kMaxDepth) return std::nullopt;
    std::optional<double> v;
    if (Eat("-")) {
      v = Unary();
      if (v) *v = -*v;
    } else if (Eat("+")) {
      v = Unary();
    } else {
      v = Atom();
    }
    --depth_;
    return v;
  }
  std::optional<double> Atom() {
    Skip();
    if (Eat("(")) {
      auto v = Sum();
      if (!v || !Eat(")")) return std::nullopt;
      return v;
    }
    if (pos_ >= s_.size()) return std::nullopt;
    char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return Number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$') return Name();
    return std::nullopt;
  }
  std::optional<double> Number() {
    std::string digits;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      bool exp_sign = (c == '+' || c == '-') && !digits.empty() && (digits.back() == 'e' || digits.back() == 'E');
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || exp_sign) {
        digits.push_back(c);
      } else if (c != '_') {
        break;
      }
      ++pos_;
    }
    char* end = nullptr;
    double v = std::strtod(digits.c_str(), &end);
    if (end == nullptr || *end != '\0' || digits.empty()) return std::nullopt;
    return v;
  }
  std::optional<double> Name() {
    if (s_[pos_] == '$') ++pos_;
    size_t b = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (pos_ == b) return std::nullopt;
    return lookup_(s_.substr(b, pos_ - b));
  }

  std::string_view s_;
  const ArithLookup& lookup_;
  bool integer_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::optional<double> EvalArith(std::string_view expr, const ArithLookup& lookup, bool integer) {
  auto v = Parser(expr, lookup, integer).Run();
  if (v && !std::isfinite(*v)) return std::nullopt;
  return v;
}

}  // namespace orrery::semantic
