#include "semantic/shell.h"

#include <cctype>
#include <cmath>
#include <optional>

#include "semantic/arith.h"

namespace orrery::semantic {

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t b = 0;
  while (b <= text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    std::string_view line = text.substr(b, e - b);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (e == text.size() && line.empty() && b == text.size() && !lines.empty()) break;
    lines.push_back(line);
    b = e + 1;
  }
  return lines;
}

std::string StripUnresolved(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c != kUnresolvedMark) out.push_back(c);
  }
  return out;
}

namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsOpChar(char c) { return c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == '(' || c == ')'; }

// Length of the variable name at the start of s (0 if none).
size_t NameLength(std::string_view s) {
  if (s.empty() || !IsNameStart(s[0])) return 0;
  size_t n = 1;
  while (n < s.size() && IsNameChar(s[n])) ++n;
  return n;
}

// Position of the `NAME=` separator when `raw` is an assignment word, else npos.
size_t AssignmentSplit(std::string_view raw) {
  size_t n = NameLength(raw);
  if (n == 0) return std::string_view::npos;
  if (n < raw.size() && raw[n] == '=') return n;
  if (n + 1 < raw.size() && raw[n] == '+' && raw[n + 1] == '=') return n;  // NAME+=value
  return std::string_view::npos;
}

LocText Slice(const LocText& t, size_t b, size_t e) {
  LocText out;
  out.s = t.s.substr(b, e - b);
  out.at.assign(t.at.begin() + static_cast<long>(b), t.at.begin() + static_cast<long>(e));
  return out;
}

// ---------------------------------------------------------------------------------------
// Lexer: the script as tokens (words keep their quotes; the expander interprets them).

enum class TokKind { kWord, kSeparator, kRedirect, kArrayOpen, kArrayClose, kHereDoc };

struct Token {
  TokKind kind = TokKind::kWord;
  LocText raw;           // word text, array name, or here-document body
  std::string op;        // separator or redirection operator
  bool quoted = false;   // here-document with a quoted delimiter (no expansion)
};

class Lexer {
 public:
  Lexer(std::string_view text, std::string_view file, uint32_t base_line, ShellScan* out)
      : text_(text), file_(file), line_(base_line + 1), out_(out) {}

  std::vector<Token> Run() {
    while (pos_ < text_.size()) Step();
    if (array_depth_ > 0) Warn(here(), "unterminated array assignment: expected ')', found end of file");
    return std::move(tokens_);
  }

 private:
  struct PendingDoc {
    std::string delim;
    bool quoted = false;
    bool strip_tabs = false;
  };

  char peek(size_t k = 0) const { return pos_ + k < text_.size() ? text_[pos_ + k] : '\0'; }
  Loc here() const { return Loc{line_, col_}; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void Warn(Loc l, std::string msg) {
    out_->warnings.push_back(Warning{std::string(file_), l.line, l.col, std::move(msg)});
  }
  void Take(LocText* w) {
    w->push(text_[pos_], here());
    advance();
  }

  void Step() {
    char c = peek();
    if (c == '\\' && peek(1) == '\n') {  // line continuation between words
      advance();
      advance();
    } else if (c == '\\' && peek(1) == '\r' && peek(2) == '\n') {
      advance();
      advance();
      advance();
    } else if (IsBlank(c) || c == '\r') {
      advance();
    } else if (c == '\n') {
      Separator("\n");
      advance();
      ReadHereDocs();
      line_has_token_ = false;
    } else if (c == '#') {
      ReadComment();
    } else if (IsOpChar(c)) {
      ReadOperator();
    } else {
      ReadWord();
    }
  }

  void Separator(std::string op) {
    Token t;
    t.kind = TokKind::kSeparator;
    t.op = std::move(op);
    tokens_.push_back(std::move(t));
  }

  void ReadComment() {
    Comment cm;
    cm.loc = here();
    cm.full_line = !line_has_token_;
    advance();  // '#'
    while (pos_ < text_.size() && peek() != '\n') {
      cm.text.push_back(peek());
      advance();
    }
    if (!cm.text.empty() && cm.text.back() == '\r') cm.text.pop_back();
    out_->comments.push_back(std::move(cm));
  }

  void ReadOperator() {
    line_has_token_ = true;
    char c = peek();
    if (c == ')' && array_depth_ > 0) {
      --array_depth_;
      advance();
      Token t;
      t.kind = TokKind::kArrayClose;
      tokens_.push_back(std::move(t));
      return;
    }
    static const char* kOps[] = {"<<-", "&&", "||", ";;", "<<", ">>", ">&", "<&", "&>", ">|", "<>",
                                 ";",   "&",  "|",  "(",  ")",  "<",  ">"};
    std::string op;
    for (const char* o : kOps) {
      std::string_view ov(o);
      if (text_.substr(pos_, ov.size()) == ov) {
        op = std::string(ov);
        break;
      }
    }
    for (size_t i = 0; i < op.size(); ++i) advance();
    bool redirect = op[0] == '<' || op[0] == '>' || op == "&>";
    if (!redirect) {
      Separator(op);
      return;
    }
    Token t;
    t.kind = TokKind::kRedirect;
    t.op = op;
    tokens_.push_back(std::move(t));
    if (op == "<<" || op == "<<-") PendHereDoc(op == "<<-");
  }

  void PendHereDoc(bool strip_tabs) {
    while (IsBlank(peek())) advance();
    LocText w;
    ReadWordInto(&w);
    PendingDoc d;
    d.strip_tabs = strip_tabs;
    for (char ch : w.s) {
      if (ch == '\'' || ch == '"' || ch == '\\') {
        d.quoted = true;
      } else {
        d.delim.push_back(ch);
      }
    }
    if (d.delim.empty()) {
      Warn(here(), "here-document: expected a delimiter word after '<<', found none");
      return;
    }
    pending_.push_back(std::move(d));
  }

  void ReadHereDocs() {
    for (const PendingDoc& d : pending_) {
      Token t;
      t.kind = TokKind::kHereDoc;
      t.quoted = d.quoted;
      Loc start = here();
      bool closed = false;
      while (pos_ < text_.size()) {
        size_t e = text_.find('\n', pos_);
        if (e == std::string_view::npos) e = text_.size();
        std::string_view line = text_.substr(pos_, e - pos_);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        std::string_view cmp = line;
        if (d.strip_tabs) {
          while (!cmp.empty() && cmp.front() == '\t') cmp.remove_prefix(1);
        }
        bool end = cmp == d.delim;
        while (pos_ < e) {
          if (!end) Take(&t.raw);
          else advance();
        }
        if (pos_ < text_.size()) {
          if (!end) Take(&t.raw);
          else advance();
        }
        if (end) {
          closed = true;
          break;
        }
      }
      if (!closed) Warn(start, "here-document: expected the delimiter '" + d.delim + "', found end of file");
      tokens_.push_back(std::move(t));
    }
    pending_.clear();
  }

  void ReadWord() {
    line_has_token_ = true;
    Token t;
    ReadWordInto(&t.raw);
    // An all-digit word just before '<' or '>' is a file-descriptor number (2>&1).
    bool io_number = !t.raw.s.empty() && (peek() == '<' || peek() == '>');
    for (char ch : t.raw.s) io_number = io_number && std::isdigit(static_cast<unsigned char>(ch));
    if (io_number) return;
    size_t split = AssignmentSplit(t.raw.s);
    if (split != std::string_view::npos && split + 1 + (t.raw.s[split] == '+') == t.raw.s.size() && peek() == '(') {
      advance();
      ++array_depth_;
      t.kind = TokKind::kArrayOpen;
      t.raw = Slice(t.raw, 0, split);
    }
    tokens_.push_back(std::move(t));
  }

  // Reads one word, quotes and nested expansions included, up to an unquoted blank or operator.
  void ReadWordInto(LocText* w) {
    while (pos_ < text_.size()) {
      char c = peek();
      if (IsBlank(c) || c == '\n' || c == '\r' || IsOpChar(c)) return;
      ReadUnit(w);
    }
  }

  // One lexical unit of a word: a character, an escape, a quoted string or an expansion.
  void ReadUnit(LocText* w) {
    char c = peek();
    if (c == '\\') {
      ReadEscape(w);
    } else if (c == '\'') {
      ReadSingle(w);
    } else if (c == '"') {
      ReadDouble(w);
    } else if (c == '`') {
      ReadBackquote(w);
    } else if (c == '$' && (peek(1) == '(' || peek(1) == '{')) {
      ReadNested(w);
    } else {
      Take(w);
    }
  }

  void ReadSingle(LocText* w) {
    Loc start = here();
    Take(w);
    while (pos_ < text_.size() && peek() != '\'') Take(w);
    Close(w, start, "single quote: expected \"'\"");
  }

  void ReadDouble(LocText* w) {
    Loc start = here();
    Take(w);
    while (pos_ < text_.size() && peek() != '"') {
      char c = peek();
      if (c == '\\') {
        ReadEscape(w);
      } else if (c == '`') {
        ReadBackquote(w);
      } else if (c == '$' && (peek(1) == '(' || peek(1) == '{')) {
        ReadNested(w);
      } else {
        Take(w);
      }
    }
    Close(w, start, "double quote: expected '\"'");
  }

  void ReadBackquote(LocText* w) {
    Loc start = here();
    Take(w);
    while (pos_ < text_.size() && peek() != '`') {
      if (peek() == '\\') Take(w);
      if (pos_ < text_.size()) Take(w);
    }
    Close(w, start, "command substitution: expected '`'");
  }

  // A backslash outside single quotes: a line continuation disappears; otherwise the
  // backslash and the character it escapes are kept.
  void ReadEscape(LocText* w) {
    if (peek(1) == '\n') {
      advance();
      advance();
      return;
    }
    Take(w);
    if (pos_ < text_.size()) Take(w);
  }

  // The closing character of a construct opened at `start`, or a warning at the end of the file.
  void Close(LocText* w, Loc start, const char* what) {
    if (pos_ >= text_.size()) {
      Warn(start, std::string("unterminated ") + what + ", found end of file");
      return;
    }
    Take(w);
  }

  // $( ... ), $(( ... )) or ${ ... }, with quotes and further nesting inside.
  void ReadNested(LocText* w) {
    Loc start = here();
    Take(w);  // '$'
    char open = peek();
    char close = open == '(' ? ')' : '}';
    Take(w);
    int depth = 1;
    while (pos_ < text_.size()) {
      char c = peek();
      if (c == close && --depth == 0) {
        Take(w);
        return;
      }
      if (c == open) ++depth;
      if (c == '\'' && open == '(') {
        ReadSingle(w);
      } else if (c == '"') {
        ReadDouble(w);
      } else if (c == '\\') {
        Take(w);
        if (pos_ < text_.size()) Take(w);
      } else if (c == '$' && (peek(1) == '(' || peek(1) == '{')) {
        ReadNested(w);
      } else {
        Take(w);
      }
    }
    Warn(start, std::string("unterminated expansion: expected '") + close + "', found end of file");
  }

  std::string_view text_;
  std::string_view file_;
  size_t pos_ = 0;
  uint32_t line_;
  uint32_t col_ = 1;
  bool line_has_token_ = false;
  int array_depth_ = 0;
  std::vector<PendingDoc> pending_;
  std::vector<Token> tokens_;
  ShellScan* out_;
};

// ---------------------------------------------------------------------------------------
// Expander: words as the shell would see them after parameter and arithmetic expansion.

enum class Mode { kUnquoted, kDouble, kHereDoc };

// Bytes the expansions of one scan may produce beyond the size of the text they expand:
// `A=$A$A` doubles a variable per line, so 30 such lines would ask for gigabytes. Past the
// budget an expansion yields one unresolved mark (its value is then "not known before the
// run") instead of more text.
inline constexpr size_t kExpansionSlackBytes = 1 << 20;

class Expander {
 public:
  Expander(ShellScan* scope, size_t text_bytes, std::string_view file)
      : scope_(scope), budget_(text_bytes + kExpansionSlackBytes), limit_(budget_), file_(file) {}

  std::vector<ShellWord> Fields(const LocText& raw) { return Expand(raw, Mode::kUnquoted, true); }
  ShellWord Single(const LocText& raw) { return Join(Expand(raw, Mode::kUnquoted, false)); }
  ShellWord HereDocBody(const LocText& raw) { return Join(Expand(raw, Mode::kHereDoc, false)); }

 private:
  static constexpr int kMaxDepth = 32;  // nested ${...:-${...}} and recursive arithmetic

  // Words under construction. An expansion that cannot be known before the run leaves
  // kUnresolvedMark in the text, so every word it ends up in (after assignments, further
  // expansions and field splitting) knows it is unresolved.
  struct Builder {
    explicit Builder(size_t* scan_budget) : budget(scan_budget) {}
    bool split = true;
    size_t* budget;            // bytes the scan may still produce
    bool over = false;         // this expansion ran past the budget
    std::vector<ShellWord> fields;
    ShellWord cur;
    bool started = false;

    void Put(char c, Loc l) {
      if (*budget == 0) {
        if (!over) cur.text.push(kUnresolvedMark, l);
        over = true;
        return;
      }
      --*budget;
      cur.text.push(c, l);
    }
    void Lit(char c, Loc l) {
      Put(c, l);
      started = true;
    }
    void Unresolved(Loc l) { Lit(kUnresolvedMark, l); }
    void Value(const LocText& v, bool quoted) {
      started = started || quoted;
      for (size_t i = 0; i < v.s.size(); ++i) {
        char c = v.s[i];
        if (split && !quoted && (c == ' ' || c == '\t' || c == '\n')) {
          End();
        } else {
          Put(c, v.at[i]);
          started = true;
        }
      }
    }
    void End() {
      if (started) {
        cur.unresolved = cur.text.s.find(kUnresolvedMark) != std::string::npos;
        fields.push_back(std::move(cur));
      }
      cur = ShellWord{};
      started = false;
    }
  };

  static ShellWord Join(std::vector<ShellWord> fields) {
    ShellWord w;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0 && !fields[i].text.at.empty()) w.text.push(' ', fields[i].text.first());
      w.text.append(fields[i].text);
      w.unresolved = w.unresolved || fields[i].unresolved;
    }
    return w;
  }

  std::vector<ShellWord> Expand(const LocText& raw, Mode mode, bool split) {
    Builder b(&budget_);
    b.split = split;
    size_t i = 0;
    Walk(raw, i, raw.s.size(), mode, b);
    b.End();
    if (b.over && !over_warned_) {  // once per scan, at the first word that ran out
      over_warned_ = true;
      const Loc at = raw.first();
      scope_->warnings.push_back(Warning{std::string(file_), at.line, at.col,
                                         "expected shell expansions of at most " + std::to_string(limit_) +
                                             " bytes in all (the script's size + 1 MiB), got more: the rest is not "
                                             "known before the run"});
    }
    return std::move(b.fields);
  }

  void Walk(const LocText& raw, size_t& i, size_t end, Mode mode, Builder& b) {
    const std::string& s = raw.s;
    while (i < end) {
      char c = s[i];
      if (c == '\\') {
        Backslash(raw, i, end, mode, b);
      } else if (c == '\'' && mode == Mode::kUnquoted) {
        size_t close = s.find('\'', i + 1);
        if (close == std::string::npos || close > end) close = end;
        b.started = true;
        for (size_t k = i + 1; k < close; ++k) b.Lit(s[k], raw.at[k]);
        i = close + 1;
      } else if (c == '"' && mode == Mode::kUnquoted) {
        b.started = true;
        ++i;
        Walk(raw, i, end, Mode::kDouble, b);
      } else if (c == '"' && mode == Mode::kDouble) {
        ++i;
        return;
      } else if (c == '`') {
        size_t close = s.find('`', i + 1);
        b.Unresolved(raw.at[i]);
        i = (close == std::string::npos || close > end) ? end : close + 1;
      } else if (c == '$') {
        Dollar(raw, i, end, mode != Mode::kUnquoted, b);
      } else {
        b.Lit(c, raw.at[i]);
        ++i;
      }
    }
  }

  void Backslash(const LocText& raw, size_t& i, size_t end, Mode mode, Builder& b) {
    const std::string& s = raw.s;
    if (i + 1 >= end) {
      b.Lit('\\', raw.at[i]);
      ++i;
      return;
    }
    char n = s[i + 1];
    bool special = mode == Mode::kUnquoted || n == '$' || n == '`' || n == '\\' || (mode == Mode::kDouble && n == '"');
    if (!special) b.Lit('\\', raw.at[i]);
    b.Lit(n, raw.at[i + 1]);
    i += 2;
  }

  // Index just past the bracket matching s[open] ('(' or '{'), skipping quotes.
  static size_t Match(const std::string& s, size_t open, size_t end) {
    char o = s[open];
    char c = o == '(' ? ')' : '}';
    int depth = 0;
    for (size_t k = open; k < end; ++k) {
      char ch = s[k];
      if (ch == '\\') {
        ++k;
      } else if (ch == '\'' && o == '(') {
        size_t q = s.find('\'', k + 1);
        k = q == std::string::npos ? end : q;
      } else if (ch == o) {
        ++depth;
      } else if (ch == c && --depth == 0) {
        return k + 1;
      }
    }
    return end;
  }

  void Dollar(const LocText& raw, size_t& i, size_t end, bool quoted, Builder& b) {
    const std::string& s = raw.s;
    Loc at = raw.at[i];
    char n = i + 1 < end ? s[i + 1] : '\0';
    if (n == '(' && i + 2 < end && s[i + 2] == '(') {
      size_t close = Match(s, i + 1, end);
      size_t inner_end = close >= 2 ? close - 2 : close;
      Arithmetic(Slice(raw, std::min(i + 3, inner_end), inner_end), at, quoted, b);
      i = close;
    } else if (n == '(') {
      b.Unresolved(at);  // command substitution: never run
      i = Match(s, i + 1, end);
    } else if (n == '{') {
      size_t close = Match(s, i + 1, end);
      size_t inner_end = close > i + 2 && s[close - 1] == '}' ? close - 1 : close;
      Braced(Slice(raw, i + 2, inner_end), at, quoted, b);
      i = close;
    } else if (IsNameStart(n)) {
      size_t len = NameLength(std::string_view(s).substr(i + 1, end - i - 1));
      Var(s.substr(i + 1, len), quoted, b, false, at);
      i += 1 + len;
    } else if (std::isdigit(static_cast<unsigned char>(n)) || n == '@' || n == '*' || n == '#' || n == '?' ||
               n == '$' || n == '!' || n == '-') {
      b.Unresolved(at);  // positional and special parameters are not known before the run
      i += 2;
    } else {
      b.Lit('$', at);
      ++i;
    }
  }

  // Appends a variable's value ($NAME, ${NAME}, ${NAME[@]}).
  void Var(const std::string& name, bool quoted, Builder& b, bool all_items, Loc at) {
    const ShellVar* v = Lookup(name);
    if (v == nullptr) {
      b.Unresolved(at);
      return;
    }
    size_t n = all_items ? v->items.size() : std::min<size_t>(1, v->items.size());
    for (size_t k = 0; k < n; ++k) {
      if (k > 0) b.End();
      b.Value(v->items[k].text, quoted);
    }
    if (n == 0 && quoted) b.started = true;
  }

  const ShellVar* Lookup(const std::string& name) const {
    auto it = scope_->vars.find(name);
    return it == scope_->vars.end() ? nullptr : &it->second;
  }

  static bool IsSet(const ShellVar* v) { return v != nullptr; }
  static bool IsNull(const ShellVar* v) { return v == nullptr || v->items.empty() || v->items[0].text.s.empty(); }

  // ${...}: NAME, #NAME, NAME[idx], and NAME with :- - := = :+ + :? ?.
  void Braced(const LocText& inner, Loc at, bool quoted, Builder& b) {
    const std::string& s = inner.s;
    if (s.size() > 1 && s[0] == '#' && NameLength(std::string_view(s).substr(1)) == s.size() - 1) {
      const ShellVar* v = Lookup(s.substr(1));
      LocText len;
      len.append(std::to_string(v && !v->items.empty() ? v->items[0].text.s.size() : 0), at);
      b.Value(len, quoted);
      return;
    }
    size_t n = NameLength(s);
    if (n == 0) {
      b.Unresolved(at);  // ${1}, ${@}, ${!ref}: not known before the run
      return;
    }
    std::string name = s.substr(0, n);
    std::string_view rest = std::string_view(s).substr(n);
    bool all_items = false;
    if (!rest.empty() && rest[0] == '[') {
      size_t close = rest.find(']');
      std::string_view idx = rest.substr(1, close == std::string_view::npos ? 0 : close - 1);
      all_items = idx == "@" || idx == "*";
      if (!all_items && idx != "0") {
        Indexed(name, idx, quoted, b, at);
        return;
      }
      rest = close == std::string_view::npos ? std::string_view() : rest.substr(close + 1);
    }
    if (rest.empty()) {
      Var(name, quoted, b, all_items, at);
      return;
    }
    Operator(name, rest, Slice(inner, s.size() - rest.size(), s.size()), quoted, b, at);
  }

  void Indexed(const std::string& name, std::string_view idx, bool quoted, Builder& b, Loc at) {
    const ShellVar* v = Lookup(name);
    auto k = EvalArith(idx, [&](std::string_view nm) { return Number(std::string(nm)); }, true);
    if (v == nullptr || !k || *k < 0 || static_cast<size_t>(*k) >= v->items.size()) {
      b.Unresolved(at);
      return;
    }
    b.Value(v->items[static_cast<size_t>(*k)].text, quoted);
  }

  void Operator(const std::string& name, std::string_view rest, const LocText& rest_raw, bool quoted, Builder& b, Loc at) {
    bool colon = rest[0] == ':';
    size_t op_len = colon ? 2 : 1;
    char op = rest.size() >= op_len ? rest[op_len - 1] : '\0';
    if (op != '-' && op != '=' && op != '+' && op != '?') {
      b.Unresolved(at);  // pattern removal, substitution, substrings: not evaluated
      return;
    }
    const ShellVar* v = Lookup(name);
    bool missing = colon ? IsNull(v) : !IsSet(v);
    LocText word = Slice(rest_raw, op_len, rest_raw.s.size());
    if (op == '+') {
      if (!missing) ExpandWord(word, quoted, b, at);
      return;
    }
    if (!missing) {
      Var(name, quoted, b, false, at);
      return;
    }
    if (op == '?') {
      b.Unresolved(at);
      return;
    }
    if (op == '=') {
      if (++depth_ > kMaxDepth) return;
      ShellVar nv;
      nv.items.push_back(Single(word));
      nv.loc = word.first();
      --depth_;
      scope_->vars[name] = std::move(nv);
    }
    ExpandWord(word, quoted, b, at);
  }

  // The word of ${NAME:-word}: expanded with the enclosing quoting.
  void ExpandWord(const LocText& word, bool quoted, Builder& b, Loc at) {
    if (++depth_ > kMaxDepth) {
      b.Unresolved(at);
      --depth_;
      return;
    }
    Builder inner(&budget_);
    inner.split = false;
    size_t k = 0;
    Walk(word, k, word.s.size(), quoted ? Mode::kDouble : Mode::kUnquoted, inner);
    inner.End();
    for (ShellWord& f : inner.fields) b.Value(f.text, quoted);
    --depth_;
  }

  void Arithmetic(const LocText& expr, Loc at, bool quoted, Builder& b) {
    if (++depth_ > kMaxDepth) {
      b.Unresolved(at);
      --depth_;
      return;
    }
    ShellWord text = Join(Expand(expr, Mode::kHereDoc, false));
    auto v = EvalArith(text.text.s, [&](std::string_view nm) { return Number(std::string(nm)); }, true);
    --depth_;
    if (!v || text.unresolved) {
      b.Unresolved(at);
      return;
    }
    LocText out;
    out.append(std::to_string(static_cast<long long>(*v)), at);
    b.Value(out, quoted);
  }

  // A variable's value as an arithmetic operand (bash evaluates it recursively).
  std::optional<double> Number(const std::string& name) {
    const ShellVar* v = Lookup(name);
    if (v == nullptr || v->items.empty() || v->items[0].unresolved) return std::nullopt;
    if (++depth_ > kMaxDepth) {
      --depth_;
      return std::nullopt;
    }
    auto r = EvalArith(v->items[0].text.s, [&](std::string_view nm) { return Number(std::string(nm)); }, true);
    --depth_;
    return r;
  }

  ShellScan* scope_;
  size_t budget_;
  size_t limit_;
  std::string_view file_;
  bool over_warned_ = false;
  int depth_ = 0;
};

// ---------------------------------------------------------------------------------------
// Parser: simple commands, assignments, arrays and here-documents, in text order.

bool IsReserved(std::string_view w) {
  static const char* kWords[] = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until",
                                 "{",  "}",    "!",    "time", "esac", "in"};
  for (const char* k : kWords) {
    if (w == k) return true;
  }
  return false;
}

bool IsDeclaration(std::string_view w) {
  return w == "export" || w == "local" || w == "declare" || w == "typeset" || w == "readonly";
}

bool IsTest(std::string_view w) { return w == "[[" || w == "[" || w == "test" || w == "for" || w == "case" || w == "select"; }

class Parser {
 public:
  Parser(std::vector<Token> tokens, ShellScan* out, size_t text_bytes, std::string_view file)
      : tokens_(std::move(tokens)), out_(out), ex_(out, text_bytes, file) {}

  void Run() {
    std::vector<const Token*> cur;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const Token& t = tokens_[i];
      switch (t.kind) {
        case TokKind::kWord:
          cur.push_back(&t);
          break;
        case TokKind::kSeparator:
          Simple(cur);
          cur.clear();
          break;
        case TokKind::kRedirect:
          // The redirection target (or a here-document's delimiter) is not a command word.
          if (i + 1 < tokens_.size() && tokens_[i + 1].kind == TokKind::kWord) ++i;
          break;
        case TokKind::kArrayOpen:
          i = Array(i);
          break;
        case TokKind::kArrayClose:
          break;
        case TokKind::kHereDoc:
          HereDocToken(t);
          break;
      }
    }
    Simple(cur);
  }

 private:
  size_t Array(size_t open) {
    ShellVar v;
    v.is_array = true;
    v.loc = tokens_[open].raw.first();
    size_t i = open + 1;
    for (; i < tokens_.size() && tokens_[i].kind != TokKind::kArrayClose; ++i) {
      if (tokens_[i].kind != TokKind::kWord) continue;
      for (ShellWord& w : ex_.Fields(tokens_[i].raw)) v.items.push_back(std::move(w));
    }
    out_->vars[tokens_[open].raw.s] = std::move(v);
    return i;
  }

  void HereDocToken(const Token& t) {
    HereDoc d;
    d.loc = t.raw.first();
    if (t.quoted) {
      d.body = t.raw;
    } else {
      d.body = ex_.HereDocBody(t.raw).text;
    }
    out_->heredocs.push_back(std::move(d));
  }

  void Assign(const LocText& raw) {
    size_t split = AssignmentSplit(raw.s);
    bool append = raw.s[split] == '+';
    LocText value = Slice(raw, split + 1 + (append ? 1 : 0), raw.s.size());
    std::string name = raw.s.substr(0, split);
    ShellWord w = ex_.Single(value);
    ShellVar& v = out_->vars[name];
    if (append && !v.items.empty()) {
      v.items[0].text.append(w.text);
      v.items[0].unresolved = v.items[0].unresolved || w.unresolved;
    } else {
      v.items.assign(1, std::move(w));
      v.is_array = false;
    }
    v.loc = raw.first();
  }

  void Simple(const std::vector<const Token*>& words) {
    size_t i = 0;
    while (i < words.size() && IsReserved(words[i]->raw.s)) ++i;
    if (i < words.size() && IsTest(words[i]->raw.s)) return;
    while (i < words.size() && AssignmentSplit(words[i]->raw.s) != std::string_view::npos) Assign(words[i++]->raw);
    if (i < words.size() && IsDeclaration(words[i]->raw.s)) {
      for (++i; i < words.size(); ++i) {
        if (AssignmentSplit(words[i]->raw.s) != std::string_view::npos) Assign(words[i]->raw);
      }
      return;
    }
    ShellCommand cmd;
    for (; i < words.size(); ++i) {
      if (cmd.words.empty()) cmd.loc = words[i]->raw.first();
      for (ShellWord& w : ex_.Fields(words[i]->raw)) cmd.words.push_back(std::move(w));
    }
    if (!cmd.words.empty()) out_->commands.push_back(std::move(cmd));
  }

  std::vector<Token> tokens_;
  ShellScan* out_;
  Expander ex_;
};

}  // namespace

ShellScan ScanShell(std::string_view text, std::string_view file, uint32_t base_line) {
  ShellScan out;
  std::vector<Token> tokens = Lexer(text, file, base_line, &out).Run();
  Parser(std::move(tokens), &out, text.size(), file).Run();
  return out;
}

std::vector<ShellWord> ExpandLine(std::string_view line, Loc start, const ShellScan& scope) {
  ShellScan local;
  local.vars = scope.vars;
  std::vector<Token> tokens = Lexer(line, "", start.line - 1, &local).Run();
  std::vector<ShellWord> out;
  Expander ex(&local, line.size(), "");
  for (Token& t : tokens) {
    if (t.kind != TokKind::kWord) continue;
    for (Loc& l : t.raw.at) l.col += start.col - 1;
    for (ShellWord& w : ex.Fields(t.raw)) out.push_back(std::move(w));
  }
  return out;
}

}  // namespace orrery::semantic
