#include "llm/cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/io.h"

namespace orrery::llm {

namespace {

using json = nlohmann::json;

constexpr int kVersion = 1;

std::string Hex(uint64_t h) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

bool IsString(const json& o, const char* k) { return o.contains(k) && o[k].is_string(); }

}  // namespace

uint64_t LlmHash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

LlmCache::LlmCache(std::string path, std::string model) : path_(std::move(path)), model_(std::move(model)) {}

std::string LlmCache::Key(std::string_view kind, std::string_view system, std::string_view question) const {
  std::string k;
  k.reserve(kind.size() + model_.size() + question.size() + 24);
  k.append(kind).push_back('\x1f');
  k.append(Hex(LlmHash(system))).push_back('\x1f');
  k.append(model_).push_back('\x1f');
  k.append(question);
  return Hex(LlmHash(k));
}

Result<std::map<std::string, LlmCache::Entry>> LlmCache::ReadEntries() const {
  std::map<std::string, Entry> out;
  if (path_.empty() || access(path_.c_str(), F_OK) != 0) return out;
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path_));
  auto parsed = ParseJsonTextAs<json>(text);
  const json j = std::holds_alternative<json>(parsed) ? std::move(std::get<json>(parsed)) : json();
  if (!j.is_object() || !j.contains("version") || j["version"] != kVersion ||
      !j.contains("entries") || !j["entries"].is_object())
    return MakeError(path_ + ": not an LLM answer cache (expected {\"version\": 1, \"entries\": {...}}); it will be replaced",
                     kExitBadInput);
  for (const auto& [key, e] : j["entries"].items()) {
    if (!e.is_object() || !IsString(e, "kind") || !IsString(e, "prompt") || !IsString(e, "answer")) continue;
    Entry x{e["kind"], e["prompt"], IsString(e, "question") ? e["question"].get<std::string>() : "", e["answer"],
            e.contains("time") && e["time"].is_number_integer() ? e["time"].get<int64_t>() : 0};
    out.emplace(key, std::move(x));
  }
  return out;
}

Status LlmCache::Write(const std::map<std::string, Entry>& entries) const {
  json all = json::object();
  for (const auto& [key, e] : entries)
    all[key] = {{"kind", e.kind}, {"model", model_}, {"prompt", e.prompt}, {"question", e.question},
                {"answer", e.answer}, {"time", e.time}};
  json j = {{"version", kVersion}, {"entries", std::move(all)}};
  return WriteFileAtomic(path_, DumpJson(j, 1) + "\n");
}

Status LlmCache::Load() {
  auto read = ReadEntries();
  if (!read.ok()) return read.error();
  entries_ = std::move(*read);
  return Status::Ok();
}

std::optional<std::string> LlmCache::Get(std::string_view kind, std::string_view system, std::string_view question) const {
  auto it = entries_.find(Key(kind, system, question));
  if (it == entries_.end()) return std::nullopt;
  return it->second.answer;
}

Status LlmCache::Put(std::string_view kind, std::string_view system, std::string_view question, std::string answer,
                     int64_t now) {
  const std::string key = Key(kind, system, question);
  Entry e{std::string(kind), Hex(LlmHash(system)), std::string(question.substr(0, 4000)), std::move(answer), now};
  entries_[key] = e;
  if (path_.empty()) return Status::Ok();
  // Merge with what other processes wrote since Load (an unreadable file is replaced).
  auto disk = ReadEntries();
  std::map<std::string, Entry> merged = disk.ok() ? std::move(*disk) : std::map<std::string, Entry>{};
  for (const auto& [k, v] : entries_) merged.insert_or_assign(k, v);
  if (merged.size() > kMaxEntries) {  // the oldest go first
    std::vector<std::pair<int64_t, std::string>> by_age;
    for (const auto& [k, v] : merged) by_age.emplace_back(v.time, k);
    std::sort(by_age.begin(), by_age.end());
    const size_t drop = merged.size() - kMaxEntries;
    for (size_t i = 0; i < drop; ++i) merged.erase(by_age[i].second);
  }
  entries_ = merged;
  return Write(merged);
}

void KeepAnswer(LlmCache* cache, std::string_view kind, std::string_view system, std::string_view question,
                const std::string& answer) {
  static bool reported = false;
  Status st = cache->Put(kind, system, question, answer, static_cast<int64_t>(std::time(nullptr)));
  if (!st.ok() && !reported) {
    reported = true;
    std::fprintf(stderr, "orrery: llm cache: %s (answers kept for this process only)\n", st.error().message.c_str());
  }
}

}  // namespace orrery::llm
