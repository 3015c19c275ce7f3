// The BEAM search's runtime parts that need no device: the thread pool (every index once, in
// parallel, the first error by index), the persistent cache (round trip, atomic writes, every kind of
// corrupt file ignored with a warning, its directory from the environment) and the kernel's
// structural hash.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <uopcg/core/builder.hpp>
#include <uopcg/runtime/beam_cache.hpp>
#include <uopcg/runtime/thread_pool.hpp>

using namespace uopcg;
namespace fs = std::filesystem;

namespace {

/// A fresh directory, removed with everything in it at the end of the scope.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "uopcg-beam-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// Everything written to a FILE*, for checking warnings.
struct Captured {
  std::FILE* f = std::tmpfile();
  ~Captured() { std::fclose(f); }
  std::string text() const {
    std::fflush(f);
    std::rewind(f);
    std::string s;
    for (int c; (c = std::fgetc(f)) != EOF;) s.push_back(static_cast<char>(c));
    return s;
  }
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary | std::ios::trunc) << s; }

Opt opt(OptOps op, std::int64_t axis, std::int64_t arg) { return Opt{op, axis, Arg::integer(arg)}; }

UOp rowsum(Arena& a, std::int64_t cols) {
  UOp out = param(a, 0, DType::float32, 64), in = param(a, 1, DType::float32, 64 * cols);
  UOp r1 = range(a, 64, 1, AxisType::WEAK), r0 = range(a, cols, 0, AxisType::REDUCE);
  return sink(end(store(index(out, r1), reduce(index(in, r1 * cols + r0), Ops::ADD, r0)), r1));
}

}  // namespace

TEST_CASE("ThreadPool: every index once, on several threads") {
  runtime::ThreadPool pool(3);
  CHECK(pool.size() == 3);
  for (std::size_t n : {0u, 1u, 7u, 1000u}) {
    std::vector<std::atomic<int>> hits(n);
    pool.run(n, [&](std::size_t i) { hits[i].fetch_add(1); });
    for (std::size_t i = 0; i < n; ++i) CHECK(hits[i].load() == 1);
  }
  // two calls that wait for each other finish only if they run at the same time
  std::atomic<int> arrived{0};
  std::atomic<bool> timed_out{false};
  std::set<std::thread::id> ids;
  std::mutex m;
  pool.run(2, [&](std::size_t) {
    {
      std::lock_guard<std::mutex> lock(m);
      ids.insert(std::this_thread::get_id());
    }
    arrived.fetch_add(1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived.load() < 2)
      if (std::chrono::steady_clock::now() > until) {
        timed_out = true;
        break;
      }
  });
  CHECK(!timed_out);
  CHECK(ids.size() == 2);
}

TEST_CASE("ThreadPool: one thread is the caller; the default size; errors") {
  runtime::ThreadPool one(1);
  CHECK(one.size() == 1);
  std::set<std::thread::id> ids;
  one.run(5, [&](std::size_t) { ids.insert(std::this_thread::get_id()); });
  CHECK(ids == std::set<std::thread::id>{std::this_thread::get_id()});
  CHECK(runtime::ThreadPool().size() == std::max(1u, std::thread::hardware_concurrency()));

  runtime::ThreadPool pool(2);
  std::atomic<int> ran{0};
  // every call runs; the error of the smallest index comes out
  CHECK_THROWS_WITH(pool.run(50,
                             [&](std::size_t i) {
                               ran.fetch_add(1);
                               if (i == 31 || i == 7) throw std::runtime_error("index " + std::to_string(i));
                             }),
                    "index 7");
  CHECK(ran.load() == 50);
  // and the pool goes on working
  std::atomic<std::size_t> sum{0};
  pool.run(100, [&](std::size_t i) { sum.fetch_add(i); });
  CHECK(sum.load() == 4950);
}

TEST_CASE("structural_hash: equal graphs in any arena, and only those") {
  Arena a, b;
  const std::string h = runtime::structural_hash(rowsum(a, 256));
  CHECK(h.size() == 32);
  rowsum(b, 16);  // other nodes first: other ids for the same graph
  CHECK(runtime::structural_hash(rowsum(b, 256)) == h);
  CHECK(runtime::structural_hash(rowsum(a, 128)) != h);
}

TEST_CASE("BeamCache: a round trip, written atomically") {
  TempDir dir;
  Captured warnings;
  runtime::BeamCache cache(dir.path, warnings.f);
  const std::string key = "ast 0123\nwidth 4\ndevice PoCL | cpu";
  CHECK(!cache.load(key));
  const runtime::BeamCacheEntry e{{opt(OptOps::LOCAL, 0, 4), opt(OptOps::UPCAST, 1, 0), Opt{OptOps::TC, 0, Arg::tuple_of(-1, 2, 1)}},
                                  12.625};
  cache.store(key, e);
  const auto back = cache.load(key);
  REQUIRE(back);
  CHECK(back->best_us == 12.625);
  REQUIRE(back->opts.size() == 3);
  CHECK(back->opts[2].arg == Arg::tuple_of(-1, 2, 1));
  CHECK(!cache.load(key + "x"));  // another key
  // one file, named by the key's hash, under beam/; no temporary file left behind
  std::vector<fs::path> files;
  for (const auto& f : fs::recursive_directory_iterator(dir.path))
    if (f.is_regular_file()) files.push_back(f.path());
  REQUIRE(files.size() == 1);
  CHECK(files[0] == cache.path_of(key));
  CHECK(files[0].parent_path().filename() == "beam");
  // an empty opt list and an infinite time (a search that timed nothing) read back
  cache.store(key, runtime::BeamCacheEntry{{}, std::numeric_limits<double>::infinity()});
  CHECK(cache.load(key)->opts.empty());
  CHECK(std::isinf(cache.load(key)->best_us));
  CHECK(warnings.text().empty());
}

TEST_CASE("BeamCache: a corrupt file is ignored with a warning, never trusted") {
  TempDir dir;
  const std::string key = "ast 0123\nwidth 4";
  const runtime::BeamCacheEntry e{{opt(OptOps::LOCAL, 0, 4)}, 3.5};
  struct Case {
    const char* what;
    std::string (*damage)(std::string);
    const char* reason;
  };
  const Case cases[] = {
      {"truncated", [](std::string s) { return s.substr(0, s.size() / 2); }, "no checksum line"},
      {"an edited opt", [](std::string s) { return s.replace(s.find("LOCAL:0:4"), 9, "LOCAL:0:8"); }, "checksum"},
      {"empty", [](std::string) { return std::string(); }, "no checksum line"},
      {"binary garbage", [](std::string) { return std::string("\x01\x02\xff\x00 check 0", 11); }, "checksum"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    Captured warnings;
    runtime::BeamCache cache(dir.path, warnings.f);
    cache.store(key, e);
    write(cache.path_of(key), c.damage(read(cache.path_of(key))));
    CHECK(!cache.load(key));
    const std::string w = warnings.text();
    CHECK(w.find("ignoring the corrupt cache file " + cache.path_of(key).string()) != std::string::npos);
    CHECK(w.find(c.reason) != std::string::npos);
    CHECK(std::count(w.begin(), w.end(), '\n') == 1);
    // the next search's result replaces it
    cache.store(key, e);
    CHECK(cache.load(key));
  }
  SUBCASE("a valid file of another key under this key's name") {
    Captured warnings;
    runtime::BeamCache cache(dir.path, warnings.f);
    cache.store("other key", e);
    fs::rename(cache.path_of("other key"), cache.path_of(key));
    CHECK(!cache.load(key));
    CHECK(warnings.text().find("another key's") != std::string::npos);
  }
  SUBCASE("a consistent file with a bad opt") {
    Captured warnings;
    runtime::BeamCache cache(dir.path, warnings.f);
    std::string body = "uopcg beam cache 1\nkey ast 0123\nkey width 4\nopts FOO:1\nbest_us 1\n";
    body += "check " + runtime::detail::hash128(body) + "\n";
    fs::create_directories(cache.path_of(key).parent_path());
    write(cache.path_of(key), body);
    CHECK(!cache.load(key));
    CHECK(warnings.text().find("FOO") != std::string::npos);
  }
}

TEST_CASE("BeamCache: a write that cannot happen is a warning") {
  TempDir dir;
  write(dir.path / "file", "x");  // a file where the directory should be
  Captured warnings;
  runtime::BeamCache cache(dir.path / "file", warnings.f);
  cache.store("k", runtime::BeamCacheEntry{{}, 1});
  CHECK(warnings.text().find("uopcg: warning: beam cache: cannot create") == 0);
  CHECK(!cache.load("k"));
}

TEST_CASE("BeamCache: the directory from UOPCG_CACHE_DIR, XDG_CACHE_HOME, HOME") {
  auto saved = [](const char* n) { const char* v = std::getenv(n); return v ? std::optional<std::string>(v) : std::nullopt; };
  const auto dir = saved("UOPCG_CACHE_DIR"), xdg = saved("XDG_CACHE_HOME"), home = saved("HOME");
  ::setenv("UOPCG_CACHE_DIR", "/tmp/a", 1);
  ::setenv("XDG_CACHE_HOME", "/tmp/b", 1);
  ::setenv("HOME", "/tmp/c", 1);
  CHECK(runtime::BeamCache::default_dir() == fs::path("/tmp/a"));
  ::unsetenv("UOPCG_CACHE_DIR");
  CHECK(runtime::BeamCache::default_dir() == fs::path("/tmp/b/uopcg"));
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(runtime::BeamCache::default_dir() == fs::path("/tmp/c/.cache/uopcg"));
  auto restore = [](const char* n, const std::optional<std::string>& v) {
    if (v) ::setenv(n, v->c_str(), 1);
    else ::unsetenv(n);
  };
  restore("UOPCG_CACHE_DIR", dir);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}
