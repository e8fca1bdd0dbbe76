// How a command refuses what does not apply (docs/cli.md): a flag given where it has no effect
// is an error that names the flag and why, a number outside its range is an error that names
// the range in words, and a misspelled subcommand names the nearest one. One home for these
// rules and their messages, shared by every command.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/result.h"

namespace orrery::cli {

// The first of `flags` (long names, "--days") given on `cmd`'s command line, or "" when none was.
std::string FirstGiven(const CLI::App& cmd, std::initializer_list<std::string_view> flags);

// Refuses the first of `flags` given on `cmd`'s command line: "--days does not apply: WHY" (exit 2).
Status RefuseGiven(const CLI::App& cmd, std::initializer_list<std::string_view> flags, std::string_view why);

// Refuses every option and positional of `cmd` given besides `only` (a flag that replaces the
// command's work, e.g. --list-policies): "--days does not apply: WHY" (exit 2).
Status RefuseAllBut(const CLI::App& cmd, std::string_view only, std::string_view why);

// A number in [lo, hi] (or (lo, hi] when lo_open): a CLI11 check whose message names the range
// and the unit in words ("expected a number of days greater than 0 and at most 3650, got \"-3\"")
// and shows at most 24 characters of what was given.
CLI::Validator InRange(double lo, double hi, bool lo_open, std::string unit);
// An integer count in [lo, hi], same messages ("expected a whole number of jobs from 1 to ...").
CLI::Validator CountInRange(unsigned long long lo, unsigned long long hi, std::string unit);

// `text` for an error message: at most `max` characters, with "..." and the length when cut,
// and every byte outside printable ASCII shown as \xHH (never raw bytes on a terminal).
std::string Quoted(std::string_view text, size_t max = 24);

// The name among `candidates` nearest to `word` (edit distance at most 2, or a prefix), or "".
std::string Nearest(std::string_view word, const std::vector<std::string>& candidates);

// For the command line `args` (without the program name): "'simulat' is not a command; did you
// mean 'simulate'?" when a word that stands where a subcommand of `app` (or of the subcommand
// named before it) must stand is none, and one is near it; else "".
std::string SubcommandHint(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace orrery::cli
