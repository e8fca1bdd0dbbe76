// Small text rules shared by the readers, the extractor, the model table and the scorer
// (one home each).
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace orrery::semantic {

inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline std::string_view TrimView(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// A name compared without case, spaces or punctuation ("Llama-3.1 8B" -> "llama318b").
inline std::string NormalizeName(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

// A path that names a config file (what a script may reference for merging).
inline bool IsConfigPath(std::string_view w) {
  return EndsWith(w, ".json") || EndsWith(w, ".yaml") || EndsWith(w, ".yml") || EndsWith(w, ".toml");
}

}  // namespace orrery::semantic
