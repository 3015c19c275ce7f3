// The BEAM search's persistent cache (tinygrad keeps its results in an sqlite table keyed by the
// AST's hash, the beam width and the device: search.py, beam_search). One small text file per key
// under <dir>/beam/, named by the key's hash, holding the whole key, the opts found and a
// checksum. A file is written to a temporary name and renamed into place, so a reader never sees
// half of one; a file that does not read back exactly (truncated, edited, another key) is ignored
// with a warning and overwritten by the next search, never trusted.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <unistd.h>

#include "../codegen/opt/parse.hpp"
#include "../core/error.hpp"
#include "../core/graph.hpp"
#include "../core/print.hpp"

namespace uopcg::runtime {

namespace detail {

/// 64-bit FNV-1a, continued from `h`.
constexpr std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 14695981039346656037ull) {
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}
/// A 64-bit finalizer (splitmix64's): spreads FNV's low-entropy high bits.
constexpr std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline std::string hex(std::uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016" PRIx64, v);
  return b;
}
/// 128 bits (two differently seeded hashes) of `s`, as 32 hex digits.
inline std::string hash128(std::string_view s) {
  return hex(mix(fnv1a(s))) + hex(mix(fnv1a(s, 0x84222325cbf29ce4ull) ^ 0x9e3779b97f4a7c15ull));
}

}  // namespace detail

/// A hash of a graph's structure: every node's op, dtype, arg and tag and its sources' hashes, in
/// order; node ids and the arena do not enter it, so equal graphs hash equal in any arena or run.
inline std::string structural_hash(UOp root) {
  const std::vector<UOp> order = toposort(root);
  std::vector<std::string> h(root.arena().size());
  text line;
  for (UOp u : order) {
    line.clear();
    line.append(name(u.op())).append(' ').append(name(u.dtype())).append(' ');
    u.arg().print(line);
    if (u.has_tag()) {
      line.append(" tag=");
      u.tag().print(line);
    }
    for (UOp s : u.srcs()) line.append(' ').append(h[s.id()]);
    h[u.id()] = detail::hash128(line.view());
  }
  return h[root.id()];
}

/// What a search found: the kernel's whole applied-opts list and its time.
struct BeamCacheEntry {
  std::vector<Opt> opts;
  double best_us = 0;
};

class BeamCache {
 public:
  /// UOPCG_CACHE_DIR if set, else $XDG_CACHE_HOME/uopcg, else $HOME/.cache/uopcg.
  static std::filesystem::path default_dir() {
    if (const char* d = std::getenv("UOPCG_CACHE_DIR"); d && *d) return d;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "uopcg";
    if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "uopcg";
    return std::filesystem::temp_directory_path() / "uopcg-cache";
  }

  /// Warnings (a corrupt file, a failed write) go to `warnings` (nullptr: nowhere).
  explicit BeamCache(std::filesystem::path dir = default_dir(), std::FILE* warnings = stderr)
      : dir_(std::move(dir)), warnings_(warnings) {}

  const std::filesystem::path& dir() const { return dir_; }
  /// The file of `key` (its name is the key's hash).
  std::filesystem::path path_of(std::string_view key) const { return dir_ / "beam" / (detail::hash128(key) + ".txt"); }

  /// The entry of `key`: nullopt when there is none, or when its file is not exactly one this cache
  /// wrote for this key (then with a warning).
  std::optional<BeamCacheEntry> load(std::string_view key) const {
    const std::filesystem::path p = path_of(key);
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) return std::nullopt;
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) return corrupt(p, "it cannot be read");
    const std::string body = ss.str();
    // the last line is "check <hash of everything before it>"
    const std::size_t last = body.rfind("check ");
    if (last == std::string::npos || (last > 0 && body[last - 1] != '\n')) return corrupt(p, "no checksum line");
    if (body.substr(last) != "check " + detail::hash128(std::string_view(body).substr(0, last)) + "\n")
      return corrupt(p, "the checksum does not match");
    const std::string head = header(key);
    if (body.size() < head.size() || body.compare(0, head.size(), head) != 0 || head.size() > last)
      return corrupt(p, "it is another key's");
    std::string_view rest = std::string_view(body).substr(head.size(), last - head.size());
    BeamCacheEntry e;
    std::string_view opts_line = take_line(rest), time_line = take_line(rest);
    if (!rest.empty() || opts_line.rfind("opts ", 0) != 0 || time_line.rfind("best_us ", 0) != 0)
      return corrupt(p, "unexpected lines");
    try {
      e.opts = codegen::opt::parse_opts(opts_line.substr(5));
      const std::string t(time_line.substr(8));
      std::size_t used = 0;
      e.best_us = std::stod(t, &used);
      if (used != t.size()) return corrupt(p, "a bad time");
    } catch (const std::exception& ex) {
      return corrupt(p, ex.what());
    }
    return e;
  }

  /// Writes the entry of `key` atomically (temporary file, then rename); a failure is a warning.
  void store(std::string_view key, const BeamCacheEntry& e) const {
    const std::filesystem::path p = path_of(key);
    std::string body = header(key);
    body += "opts " + codegen::opt::opts_text(e.opts).str() + "\n";
    char t[64];
    std::snprintf(t, sizeof t, "%.17g", e.best_us);
    body += "best_us " + std::string(t) + "\n";
    body += "check " + detail::hash128(body) + "\n";
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) return warn("cannot create " + p.parent_path().string() + ": " + ec.message());
    // unique per process and thread: two writers never share a temporary file
    const std::size_t thread = std::hash<std::thread::id>{}(std::this_thread::get_id());
    const std::filesystem::path tmp = p.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(thread);
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << body;
      out.flush();
      if (!out) {
        std::filesystem::remove(tmp, ec);
        return warn("cannot write " + tmp.string());
      }
    }
    std::filesystem::rename(tmp, p, ec);
    if (ec) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      return warn("cannot rename " + tmp.string() + " to " + p.string() + ": " + ec.message());
    }
  }

 private:
  static std::string header(std::string_view key) {
    std::string h = "uopcg beam cache 1\n";
    std::string_view k = key;
    while (!k.empty()) h += "key " + std::string(take_line(k)) + "\n";
    return h;
  }
  static std::string_view take_line(std::string_view& s) {
    const std::size_t nl = s.find('\n');
    const std::string_view line = s.substr(0, nl);
    s.remove_prefix(nl == std::string_view::npos ? s.size() : nl + 1);
    return line;
  }
  std::nullopt_t corrupt(const std::filesystem::path& p, std::string_view why) const {
    warn("ignoring the corrupt cache file " + p.string() + " (" + std::string(why) + ")");
    return std::nullopt;
  }
  void warn(const std::string& m) const {
    if (warnings_) std::fprintf(warnings_, "uopcg: warning: beam cache: %s\n", m.c_str());
  }

  std::filesystem::path dir_;
  std::FILE* warnings_;
};

}  // namespace uopcg::runtime
