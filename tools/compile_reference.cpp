// A fixed translation unit of ordinary standard-library C++ (no uopcg header), compiled in every
// run of tools/compile_budget.py beside the budgeted files: its CPU time is the machine's yardstick,
// so that each row's ratio to it can be compared across machines and loads, where the seconds cannot.
// Keep it unchanged: a change makes every earlier ratio incomparable.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace {

using value = std::variant<long, double, std::string>;

std::string show(const value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>) return x;
        else return std::to_string(x);
      },
      v);
}

std::optional<value> parse(const std::string& s) {
  static const std::regex integer(R"(^-?[0-9]+$)"), real(R"(^-?[0-9]*\.[0-9]+$)");
  if (std::regex_match(s, integer)) return value{std::stol(s)};
  if (std::regex_match(s, real)) return value{std::stod(s)};
  if (!s.empty()) return value{s};
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::vector<value>> by_kind;
  std::unordered_map<std::string, int> counts;
  std::vector<std::function<bool(const value&)>> filters = {
      [](const value& v) { return v.index() == 0; }, [](const value& v) { return v.index() == 1; }};
  for (int i = 1; i < argc; ++i) {
    std::optional<value> v = parse(argv[i]);
    if (!v) continue;
    const std::string kind = filters[0](*v) ? "int" : filters[1](*v) ? "real" : "text";
    by_kind[kind].push_back(*v);
    ++counts[show(*v)];
  }
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return static_cast<int>(sorted.size() + by_kind.size()) % 2;
}
