// The LLM backend's answers kept across processes (docs/formats/llm-cache.md), so each
// question (an unknown log line format, a compressed failure log, a launch config the
// advisor cannot read) is asked once per model and prompt, not once per process.
//
// A JSON file, {"version": 1, "entries": {KEY: {"kind", "model", "prompt", "question",
// "answer", "time"}}}; KEY is the hex FNV-1a 64 of kind, the system prompt's own hash, the
// model and the question (the template, the compressed log, or the normalised config), so a new prompt or another
// model asks again. Answers are stored as the model gave them and validated again when they
// are used (ParseLlmPlan / ParseLlmDiagnosis / ParseLlmSchema): a changed validator applies to old answers.
// Transport failures (timeouts, HTTP errors) are never stored.
//
// Each Put merges the new entry into the file as it is on disk now and writes it atomically
// (base/io.h: temporary file + rename): a reader never sees half a file, and two processes
// sharing it lose nothing but a race on the same key. At most kMaxEntries entries (the oldest
// go first). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace orrery::llm {

class LlmCache {
 public:
  static constexpr size_t kMaxEntries = 10000;

  // `path` "" = in memory only. `model` is part of every key.
  LlmCache(std::string path, std::string model);
  // Reads the file; a missing file is an empty cache. A file that is not a cache (bad JSON,
  // another version) is an error naming it; the cache then starts empty and Put will replace
  // the file.
  Status Load();
  std::optional<std::string> Get(std::string_view kind, std::string_view system, std::string_view question) const;
  // Records an answer (in memory, and in the file when there is one).
  Status Put(std::string_view kind, std::string_view system, std::string_view question, std::string answer, int64_t now);
  size_t size() const { return entries_.size(); }
  const std::string& path() const { return path_; }

  // The key of a question (hex FNV-1a 64).
  std::string Key(std::string_view kind, std::string_view system, std::string_view question) const;

 private:
  struct Entry {
    std::string kind, prompt, question, answer;
    int64_t time = 0;
  };
  Result<std::map<std::string, Entry>> ReadEntries() const;
  Status Write(const std::map<std::string, Entry>& entries) const;

  std::string path_, model_;
  std::map<std::string, Entry> entries_;
};

// FNV-1a 64 of `s` (the one hash of the LLM backend's keys).
uint64_t LlmHash(std::string_view s);

// Put with the time now; a cache file that cannot be written costs only the later processes
// a question (reported once per process on stderr, the answer kept in memory).
void KeepAnswer(LlmCache* cache, std::string_view kind, std::string_view system, std::string_view question,
                const std::string& answer);

}  // namespace orrery::llm
