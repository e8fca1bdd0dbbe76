#include "cli/flag_rules.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace orrery::cli {

std::string FirstGiven(const CLI::App& cmd, std::initializer_list<std::string_view> flags) {
  for (std::string_view f : flags) {
    const CLI::Option* opt = cmd.get_option_no_throw(std::string(f));
    if (opt && opt->count() > 0) return std::string(f);
  }
  return {};
}

Status RefuseGiven(const CLI::App& cmd, std::initializer_list<std::string_view> flags, std::string_view why) {
  std::string f = FirstGiven(cmd, flags);
  if (f.empty()) return Status::Ok();
  return MakeError(f + " does not apply: " + std::string(why));
}

Status RefuseAllBut(const CLI::App& cmd, std::string_view only, std::string_view why) {
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->count() == 0 || opt->get_name() == only) continue;
    const std::string name = opt->get_name();
    return MakeError((opt->get_positional() ? "the " + name + " argument" : name) + " does not apply: " +
                     std::string(why));
  }
  return Status::Ok();
}

std::string Quoted(std::string_view text, size_t max) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') out += static_cast<char>(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  out += '"';
  if (text.size() > max) out += fmt::format("... ({} characters)", text.size());
  return out;
}

namespace {

// "-3" -> -3; false for anything but one whole finite number.
bool ParseNumber(const std::string& s, double* v) {
  if (s.empty() || s.size() > 64) return false;
  errno = 0;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return errno == 0 && end == s.c_str() + s.size() && std::isfinite(*v);
}

std::string Shortest(double v) { return fmt::format("{:g}", v); }

}  // namespace

CLI::Validator InRange(double lo, double hi, bool lo_open, std::string unit) {
  const std::string range = lo_open ? fmt::format("greater than {} and at most {}", Shortest(lo), Shortest(hi))
                                    : fmt::format("from {} to {}", Shortest(lo), Shortest(hi));
  const std::string expected = "expected a number of " + unit + " " + range;
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        double v = 0;
        const bool in = ParseNumber(s, &v) && (lo_open ? v > lo : v >= lo) && v <= hi;
        return in ? std::string() : expected + ", got " + Quoted(s);
      },
      lo_open ? fmt::format("in ({}, {}]", Shortest(lo), Shortest(hi)) : fmt::format("in [{}, {}]", Shortest(lo), Shortest(hi)));
}

CLI::Validator CountInRange(unsigned long long lo, unsigned long long hi, std::string unit) {
  const std::string expected = fmt::format("expected a whole number of {} from {} to {}", unit, lo, hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        const bool digits = !s.empty() && s.size() <= 20 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
        errno = 0;
        const unsigned long long v = digits ? std::strtoull(s.c_str(), nullptr, 10) : 0;
        const bool in = digits && errno == 0 && v >= lo && v <= hi;
        return in ? std::string() : expected + ", got " + Quoted(s);
      },
      fmt::format("in [{}, {}]", lo, hi));
}

namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string Nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = 3;  // farther than 2 edits is no suggestion
  for (const std::string& c : candidates) {
    size_t d = EditDistance(word, c);
    if (word.size() >= 3 && c.rfind(word, 0) == 0) d = std::min<size_t>(d, 1);  // "sim" -> "simulate"
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

std::string SubcommandHint(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* cur = &app;
  for (const std::string& a : args) {
    if (a.empty() || a[0] == '-') return {};
    auto subs = cur->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty()) return {};
    auto it = std::find_if(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->check_name(a); });
    if (it != subs.end()) {
      cur = *it;
      continue;
    }
    std::vector<std::string> names;
    for (const CLI::App* s : subs) names.push_back(s->get_name());
    std::string n = Nearest(a, names);
    return n.empty() ? std::string() : fmt::format("'{}' is not a command; did you mean '{}'?", a, n);
  }
  return {};
}

}  // namespace orrery::cli
