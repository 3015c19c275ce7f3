// uopcg single header io/viz.hpp: the HTML page of a compilation (uopcg compile --viz); runs Graphviz dot (POSIX).
// Generated from include/ by tools/amalgamate.py — do not edit; regenerate with
// `python3 tools/amalgamate.py`. Do not mix with include/'s headers in one translation unit;
// the single headers combine with each other (shared include guards).
// Includes single_include/uopcg/uopcg.hpp.
// Includes single_include/uopcg/io/dot.hpp.
// Inlined, in order: 1 headers from include/
//   uopcg/io/viz.hpp
#pragma once
#ifndef UOPCG_SINGLE_HEADER
#define UOPCG_SINGLE_HEADER 1
#endif

// ---- begin uopcg/io/viz.hpp ----
#ifndef UOPCG_SINGLE_IO_VIZ_HPP
#define UOPCG_SINGLE_IO_VIZ_HPP
// `uopcg compile --viz`: one self-contained HTML page of a kernel's compilation (what tinygrad's VIZ
// shows, as a file: tinygrad/viz/serve.py). A VizRecorder rides along a pipeline run (its stage
// hook and a rewrite observer for the rules that fire inside the stages); viz_html turns what it
// saw into the page: the stages with their times and node counts, each changed stage's graph as
// an SVG laid out by Graphviz `dot` (run when the page is written; without it, writing fails with
// an error saying so), the rules per stage and per node, the program beside its OpenCL C, and the
// barrier verifier's account of every barrier. No script or style is fetched: all is inlined.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <unistd.h>

#include "../uopcg.hpp"  // single_include/uopcg/uopcg.hpp
#include "dot.hpp"  // single_include/uopcg/io/dot.hpp

namespace uopcg::io {

/// One stage as the recorder saw it: its output graph and the rules that fired while it ran.
struct VizStage {
  std::string name;
  double us = 0;
  UOp graph;
  std::vector<std::pair<std::string, std::size_t>> rules;  // label, times fired; in first-fired order
};

/// Where a node came from: the first stage whose output has it, and the rule whose result it is.
struct VizOrigin {
  std::size_t stage = 0;
  std::string rule;  // empty: rebuilt because a source changed (or part of the input)
};

/// What a pipeline run leaves for viz_html. Use: set_input, then run the pipeline with
/// `stage_hook()` as its trace while an `observe()` scope is alive; on an error, set_failure; at
/// the end, set_program / set_source.
class VizRecorder {
 public:
  VizRecorder() = default;
  VizRecorder(const VizRecorder&) = delete;  // the hooks hold `this`
  VizRecorder& operator=(const VizRecorder&) = delete;

  /// The graph the first stage reads (so that its additions can be told).
  void set_input(UOp g) { input_ = g; }
  /// PipelineOptions::trace / AstOptions::trace.
  std::function<void(std::string_view, UOp, double)> stage_hook() {
    return [this](std::string_view stage, UOp g, double us) { on_stage(stage, g, us); };
  }
  /// Routes every rule that fires on this thread to the stage that is running, while alive.
  [[nodiscard]] pat::observe_rewrites observe() { return pat::observe_rewrites({&VizRecorder::on_rule_thunk, this}); }
  /// The run stopped with `message`; `stage_order` (every stage name in order) names the stage
  /// after the last one recorded as the failing one.
  void set_failure(std::string message, std::span<const std::string_view> stage_order = {}) {
    error_ = std::move(message);
    failed_stage_ = "after " + (stages_.empty() ? std::string("the input") : stages_.back().name);
    std::size_t next = 0;
    if (!stages_.empty())
      for (std::size_t i = 0; i < stage_order.size(); ++i)
        if (stage_order[i] == stages_.back().name) next = i + 1;
    if (next < stage_order.size()) failed_stage_ = std::string(stage_order[next]);
    failed_rules_ = std::move(pending_rules_);
    pending_rules_.clear();
  }
  void set_program(std::vector<UOp> program) { program_ = std::move(program); }
  void set_source(std::string opencl) { source_ = std::move(opencl); }

  const std::vector<VizStage>& stages() const { return stages_; }
  UOp input() const { return input_; }
  const std::string& error() const { return error_; }
  const std::string& failed_stage() const { return failed_stage_; }
  const std::vector<std::pair<std::string, std::size_t>>& failed_rules() const { return failed_rules_; }
  const std::vector<UOp>& program() const { return program_; }
  const std::string& source() const { return source_; }
  /// Where node `id` came from; nullptr for a node of the input.
  const VizOrigin* origin(node_id id) const {
    auto it = origins_.find(id);
    return it == origins_.end() ? nullptr : &it->second;
  }

 private:
  static void on_rule_thunk(void* self, std::string_view, UOp, UOp after, const pat::rule_info& rule) {
    static_cast<VizRecorder*>(self)->on_rule(after, rule);
  }
  void on_rule(UOp after, const pat::rule_info& rule) {
    std::string label = rule.label().str();
    auto it = std::find_if(pending_rules_.begin(), pending_rules_.end(), [&](const auto& p) { return p.first == label; });
    if (it == pending_rules_.end()) pending_rules_.emplace_back(label, 1);
    else ++it->second;
    fired_.emplace(after.id(), std::move(label));  // the first rule that produced the node made it
  }
  void on_stage(std::string_view stage, UOp g, double us) {
    const std::size_t k = stages_.size();
    const UOp prev = k == 0 ? input_ : stages_.back().graph;
    stages_.push_back({std::string(stage), us, g, std::move(pending_rules_)});
    pending_rules_.clear();
    // the nodes this stage added: a rule's result, a node inside one (it takes that rule), or a
    // node rebuilt on changed sources (no rule)
    std::vector<bool> before(g.arena().size(), false);
    if (prev.valid())
      for (UOp u : toposort(prev)) before[u.id()] = true;
    const std::vector<UOp> nodes = toposort(g);
    std::unordered_map<node_id, std::string> inherited;
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {  // users before their sources
      const UOp u = *it;
      if (before[u.id()] || origins_.count(u.id())) continue;
      std::string rule;
      if (auto f = fired_.find(u.id()); f != fired_.end()) rule = f->second;
      else if (auto h = inherited.find(u.id()); h != inherited.end()) rule = h->second;
      if (!rule.empty())
        for (std::size_t i = 0; i < u.nsrc(); ++i)
          if (!before[u.src(i).id()]) inherited.emplace(u.src(i).id(), rule);
      origins_.emplace(u.id(), VizOrigin{k, std::move(rule)});
    }
    fired_.clear();
  }

  UOp input_;
  std::vector<VizStage> stages_;
  std::vector<std::pair<std::string, std::size_t>> pending_rules_;
  std::unordered_map<node_id, std::string> fired_;  // this stage's rule results
  std::unordered_map<node_id, VizOrigin> origins_;
  std::string error_, failed_stage_;
  std::vector<std::pair<std::string, std::size_t>> failed_rules_;
  std::vector<UOp> program_;
  std::string source_;
};

struct VizOptions {
  std::string title = "uopcg";
  /// A graph with more nodes is not drawn (dot's time grows fast with size); the page offers its
  /// text form instead.
  std::size_t max_drawn_nodes = 1200;
  /// The Graphviz layout command, given the DOT file's path; its standard output is the SVG.
  std::string dot = "dot";
};

namespace detail::viz {

inline std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

inline std::string arg_text(UOp u) {
  if (u.arg().is_none()) return {};
  text t;
  u.arg().print(t);
  return t.str();
}

/// "OP dtype arg", with the value bounds of an int or bool node.
inline std::string tooltip(UOp u, const VizOrigin* origin, const std::vector<VizStage>& stages) {
  std::string s = std::string(name(u.op())) + " " + std::string(name(u.dtype()));
  if (std::string a = arg_text(u); !a.empty()) s += "\narg: " + a;
  if (is_int(u.dtype()) || is_bool(u.dtype())) {
    auto bound = [](std::int64_t v) {
      return v == INT64_MIN ? std::string("-inf") : v == INT64_MAX ? std::string("inf") : std::to_string(v);
    };
    s += "\nbounds: [" + bound(u.vmin()) + ", " + bound(u.vmax()) + "]";
  }
  if (!origin) s += "\nfrom the input";
  else if (origin->rule.empty()) s += "\nrebuilt in " + stages[origin->stage].name + " (a source changed)";
  else s += "\ncreated by " + origin->rule + " in " + stages[origin->stage].name;
  return s;
}

inline std::string short_label(UOp u) {
  std::string l = std::string(name(u.op())) + " " + std::string(name(u.dtype()));
  std::string a = arg_text(u);
  if (a.size() > 40) a = a.substr(0, 37) + "...";
  if (!a.empty()) l += "\n" + a;
  return l;
}

/// The DOT of stage k's graph: nodes named n<id>, with ids unique in the page (s<k>n<id>);
/// the nodes added by the stage drawn in red.
inline std::string stage_dot(std::size_t k, const std::vector<UOp>& nodes, const std::vector<bool>& added) {
  std::string out = "digraph s" + std::to_string(k) +
                    " {\n  id=\"s" + std::to_string(k) + "g\";\n  rankdir=TB;\n"
                    "  node [shape=box, style=filled, fontname=\"monospace\", fontsize=10];\n"
                    "  edge [arrowsize=0.6];\n";
  for (UOp u : nodes) {
    const std::string id = std::to_string(u.id());
    out += "  n" + id + " [id=\"s" + std::to_string(k) + "n" + id + "\", label=\"";
    detail::dot_escape(out, short_label(u));
    out += "\", fillcolor=\"";
    out += detail::dot_colour(u.op());
    out += added[u.id()] ? "\", color=\"#d50000\", penwidth=2.5];\n" : "\"];\n";
  }
  std::size_t e = 0;
  for (UOp u : nodes)
    for (std::size_t i = 0; i < u.nsrc(); ++i)
      out += "  n" + std::to_string(u.src(i).id()) + " -> n" + std::to_string(u.id()) + " [id=\"s" + std::to_string(k) +
             "e" + std::to_string(e++) + "\"];\n";
  out += "}\n";
  return out;
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs `dot_cmd -Tsvg` on `dot_text`; the SVG element (the XML prologue dropped).
inline std::string run_dot(const std::string& dot_cmd, const std::string& dot_text) {
  static std::atomic<int> counter{0};
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("uopcg-viz-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".dot");
  {
    std::ofstream f(path, std::ios::binary);
    f << dot_text;
    if (!f) fail_runtime("viz: cannot write " + path.string());
  }
  const std::string cmd = dot_cmd + " -Tsvg " + shell_quote(path.string()) + " 2>&1";
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int status = ::pclose(p);
    std::error_code ec;
    std::filesystem::remove(path, ec);
    if (status != 0)
      fail_runtime("viz: Graphviz '" + dot_cmd + "' failed (" + out.substr(0, 300) +
                   "); the page lays its graphs out with dot: install Graphviz (Debian package graphviz)");
  } else {
    fail_runtime("viz: cannot run '" + cmd + "'");
  }
  const std::size_t at = out.find("<svg");
  if (at == std::string::npos) fail_runtime("viz: '" + dot_cmd + "' wrote no SVG");
  return out.substr(at);
}

/// Adds each node's attributes to dot's SVG (data-node, data-op, data-rule; class added) and
/// replaces dot's <title> (the node's DOT name) with the tooltip.
inline std::string annotate_svg(const std::string& svg, std::size_t k, const std::unordered_map<node_id, UOp>& by_id,
                                const std::vector<bool>& added, const VizRecorder& rec) {
  std::string out;
  out.reserve(svg.size() * 2);
  const std::string key = "<g id=\"s" + std::to_string(k) + "n";
  std::size_t pos = 0;
  while (true) {
    const std::size_t at = svg.find(key, pos);
    if (at == std::string::npos) break;
    std::size_t num_end = at + key.size();
    node_id id = 0;
    while (num_end < svg.size() && svg[num_end] >= '0' && svg[num_end] <= '9') id = id * 10 + static_cast<node_id>(svg[num_end++] - '0');
    const std::size_t tag_end = svg.find('>', num_end);
    const std::size_t title_open = svg.find("<title>", tag_end);
    const std::size_t title_close = svg.find("</title>", title_open);
    auto it = by_id.find(id);
    if (tag_end == std::string::npos || title_close == std::string::npos || it == by_id.end()) break;
    const VizOrigin* o = rec.origin(id);
    const std::string tip = tooltip(it->second, o, rec.stages());
    out.append(svg, pos, num_end - pos);
    out += "\" class=\"node";
    if (added[id]) out += " added";
    out += "\" data-node=\"" + std::to_string(id) + "\" data-op=\"" + std::string(name(it->second.op())) + "\" data-rule=\"" +
           escape(o ? (o->rule.empty() ? std::string("(rebuilt)") : o->rule) : std::string("(input)")) + "\"";
    // drop dot's own `" class="node"` up to the tag's end
    out += ">";
    out.append(svg, tag_end + 1, title_open - tag_end - 1);
    out += "<title>" + escape(tip) + "</title>";
    pos = title_close + 8;
  }
  out.append(svg, pos, std::string::npos);
  return out;
}

inline void rules_table(std::string& h, const std::vector<std::pair<std::string, std::size_t>>& rules) {
  if (rules.empty()) {
    h += "<p class=\"norules\">No rule fired.</p>\n";
    return;
  }
  std::vector<std::pair<std::string, std::size_t>> sorted = rules;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  h += "<table class=\"rules\"><tr><th>rule</th><th>fired</th></tr>\n";
  for (const auto& [rule, n] : sorted) h += "<tr><td>" + escape(rule) + "</td><td>" + std::to_string(n) + "</td></tr>\n";
  h += "</table>\n";
}

inline constexpr std::string_view style = R"(
body{font:13px system-ui,sans-serif;margin:0;display:grid;grid-template-columns:22em 1fr;height:100vh}
#side{overflow:auto;border-right:1px solid #ccc;padding:.5em}
#side h1{font-size:1.2em;overflow-wrap:anywhere}
#main{overflow:auto;padding:.5em 1em}
#stages{list-style:none;padding:0;margin:0}
#stages li{padding:2px 4px;cursor:pointer;border-radius:3px;display:grid;grid-template-columns:1fr auto auto;gap:.6em}
#stages li.same{color:#888}
#stages li.current{background:#1565c0;color:#fff}
#stages li.failed{color:#b71c1c;font-weight:bold}
#stages li.current.failed{background:#b71c1c;color:#fff}
.num{font-variant-numeric:tabular-nums;text-align:right}
pre{font:12px monospace;background:#f7f7f7;padding:.5em;overflow:auto;max-height:40em}
.graph svg{max-width:100%;height:auto}
.graph g.node.added polygon{stroke:#d50000}
.graph g.node:hover polygon{fill:#fff59d}
.code{display:grid;grid-template-columns:1fr 1fr;gap:1em}
.error{color:#b71c1c;white-space:pre-wrap}
table.rules td,table.rules th{padding:1px 8px;text-align:left}
#tip{position:fixed;right:1em;bottom:1em;background:#263238;color:#fff;padding:.5em;font:12px monospace;white-space:pre;display:none;max-width:50em}
.help{color:#666}
)";

inline constexpr std::string_view script = R"(
(function(){
const views=[...document.querySelectorAll('section.stage-view')];
const items=[...document.querySelectorAll('#stages li')];
const graphs=[...document.querySelectorAll('#graphs > div')];
function show(i){
  i=Math.max(0,Math.min(views.length-1,i));
  views.forEach((v,k)=>{v.hidden=k!==i;});
  items.forEach((v,k)=>v.classList.toggle('current',k===i));
  const g=views[i].dataset.graph;
  graphs.forEach(d=>{d.hidden=d.dataset.stage!==g;});
  document.body.dataset.stage=i;
  items[i].scrollIntoView({block:'nearest'});
  try{history.replaceState(null,'','#stage-'+i);}catch(e){}
}
items.forEach((li,k)=>li.addEventListener('click',()=>show(k)));
document.addEventListener('keydown',e=>{
  const i=+document.body.dataset.stage;
  if(e.key==='ArrowDown'||e.key==='ArrowRight'||e.key==='j'){show(i+1);e.preventDefault();}
  else if(e.key==='ArrowUp'||e.key==='ArrowLeft'||e.key==='k'){show(i-1);e.preventDefault();}
  else if(e.key==='Home'){show(0);e.preventDefault();}
  else if(e.key==='End'){show(views.length-1);e.preventDefault();}
});
const tip=document.getElementById('tip');
document.addEventListener('mouseover',e=>{
  const n=e.target.closest&&e.target.closest('g.node');
  const t=n&&n.querySelector('title');
  if(t){tip.textContent=t.textContent;tip.style.display='block';}else tip.style.display='none';
});
const m=/^#stage-(\d+)$/.exec(location.hash);
show(m?+m[1]:0);
})();
)";

}  // namespace detail::viz

/// The page of what `rec` recorded. Fails (uopcg::error) when Graphviz cannot be run and some
/// graph is to be drawn.
inline std::string viz_html(const VizRecorder& rec, const VizOptions& options = {}) {
  using namespace detail::viz;
  const std::vector<VizStage>& stages = rec.stages();
  std::string side, views, graphs;
  std::size_t drawn = 0;
  std::vector<UOp> prev_nodes = rec.input().valid() ? toposort(rec.input()) : std::vector<UOp>{};
  UOp prev = rec.input();
  std::size_t last_graph = 0;  // the stage whose graph an unchanged stage shows
  bool have_graph = false;
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const VizStage& s = stages[k];
    const std::vector<UOp> nodes = toposort(s.graph);
    const bool changed = !(prev.valid() && prev == s.graph);
    std::vector<bool> added(s.graph.arena().size(), false), now(s.graph.arena().size(), false);
    std::vector<bool> was(s.graph.arena().size(), false);
    for (UOp u : prev_nodes) was[u.id()] = true;
    std::size_t n_added = 0;
    for (UOp u : nodes) {
      now[u.id()] = true;
      if (!was[u.id()]) added[u.id()] = true, ++n_added;
    }
    std::vector<UOp> removed;
    for (UOp u : prev_nodes)
      if (!now[u.id()]) removed.push_back(u);
    const std::string ks = std::to_string(k);
    char us[32];
    std::snprintf(us, sizeof us, "%.1f", s.us);
    side += "<li class=\"" + std::string(changed ? "changed" : "same") + "\" data-index=\"" + ks + "\" title=\"" +
            (changed ? "changed the graph" : "left the graph unchanged") + "\"><span>" +
            escape(s.name) + "</span><span class=\"num\">" + us + " us</span><span class=\"num\">" +
            std::to_string(nodes.size()) + "</span></li>\n";

    views += "<section class=\"stage-view\" id=\"stage-" + ks + "\" data-name=\"" + escape(s.name) + "\" data-nodes=\"" +
             std::to_string(nodes.size()) + "\" data-changed=\"" + (changed ? "1" : "0") + "\" data-graph=\"";
    std::string body;
    if (changed || !have_graph) {
      last_graph = k;
      have_graph = true;
      if (nodes.size() <= options.max_drawn_nodes) {
        std::unordered_map<node_id, UOp> by_id;
        for (UOp u : nodes) by_id.emplace(u.id(), u);
        graphs += "<div class=\"graph\" data-stage=\"" + ks + "\" hidden>" +
                  annotate_svg(run_dot(options.dot, stage_dot(k, nodes, added)), k, by_id, added, rec) + "</div>\n";
        ++drawn;
      } else {
        graphs += "<div class=\"too-large\" data-stage=\"" + ks + "\" hidden><p>This graph has " + std::to_string(nodes.size()) +
                  " nodes, more than the " + std::to_string(options.max_drawn_nodes) +
                  " drawn; its text form:</p><pre>" + escape(graph_to_string(s.graph)) + "</pre></div>\n";
      }
    } else {
      body += "<p>Unchanged: the graph of " + escape(stages[last_graph].name) + " (below).</p>\n";
    }
    views += std::to_string(last_graph) + "\" hidden>\n<h2>" + ks + ". " + escape(s.name) + "</h2>\n<p>" + us + " us, " +
             std::to_string(nodes.size()) + " nodes, " + std::to_string(n_added) + " added (red), " +
             std::to_string(removed.size()) + " removed.</p>\n" + body;
    rules_table(views, s.rules);
    if (!removed.empty()) {
      views += "<details><summary>" + std::to_string(removed.size()) + " removed nodes</summary><pre>";
      for (std::size_t i = 0; i < removed.size() && i < 500; ++i) views += escape(to_string(removed[i])) + "\n";
      if (removed.size() > 500) views += "... and " + std::to_string(removed.size() - 500) + " more\n";
      views += "</pre></details>\n";
    }
    views += "</section>\n";
    prev = s.graph;
    prev_nodes = nodes;
  }
  if (!rec.error().empty()) {
    const std::string ks = std::to_string(stages.size());
    side += "<li class=\"failed\" data-index=\"" + ks + "\"><span>" + escape(rec.failed_stage()) +
            "</span><span class=\"num\">failed</span><span></span></li>\n";
    views += "<section class=\"stage-view failed\" id=\"stage-" + ks + "\" data-name=\"" + escape(rec.failed_stage()) +
             "\" data-graph=\"" + (have_graph ? std::to_string(last_graph) : std::string("none")) + "\" hidden>\n<h2>" + ks +
             ". " + escape(rec.failed_stage()) + ": failed</h2>\n<p class=\"error\" id=\"error\">" + escape(rec.error()) +
             "</p>\n<p>The graph below is the last stage's output, the failing stage's input.</p>\n";
    rules_table(views, rec.failed_rules());
    views += "</section>\n";
  }

  std::string code;
  if (!rec.program().empty()) {
    const std::span<const UOp> program(rec.program());
    code += "<h2>Program and OpenCL C</h2>\n<div class=\"code\"><div><h3>linearized</h3><pre id=\"program\">" +
            escape(print_program(program).str()) + "</pre></div><div><h3>OpenCL C</h3><pre id=\"opencl\">" +
            escape(rec.source()) + "</pre></div></div>\n<h2>Barriers</h2>\n";
    const std::string violations = codegen::verify_barriers(program).message();
    const std::string roles = codegen::explain_barriers_text(program);
    if (!violations.empty())
      code += "<p class=\"error\" id=\"barrier-violations\">The barrier verifier rejects the program:\n" + escape(violations) + "</p>\n";
    else code += "<p>The barrier verifier accepts the program.</p>\n";
    code += roles.empty() ? std::string("<p id=\"barriers\">The program has no BARRIER.</p>\n")
                          : "<pre id=\"barriers\">" + escape(roles) + "</pre>\n";
  }

  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escape(options.title) +
                  "</title>\n<style>" + std::string(style) + "</style></head>\n<body data-stage=\"0\" data-svgs=\"" +
                  std::to_string(drawn) + "\">\n<nav id=\"side\"><h1>" + escape(options.title) + "</h1>\n";
  h += "<p class=\"help\">" + std::to_string(stages.size()) + " stages" + (rec.error().empty() ? "" : ", then a failure") +
       ". Keys: &darr;/&rarr;/j next, &uarr;/&larr;/k previous, Home, End. Columns: stage, time, nodes.</p>\n";
  h += "<ol id=\"stages\">\n" + side + "</ol></nav>\n<main id=\"main\">\n" + views + "<div id=\"graphs\">\n" + graphs +
       "</div>\n" + code + "</main>\n<div id=\"tip\"></div>\n<script>" + std::string(script) + "</script>\n</body></html>\n";
  return h;
}

/// viz_html written to `path`.
inline void write_viz(const std::filesystem::path& path, const VizRecorder& rec, const VizOptions& options = {}) {
  const std::string page = viz_html(rec, options);
  std::ofstream f(path, std::ios::binary);
  f << page;
  if (!f) fail_runtime("viz: cannot write " + path.string());
}

}  // namespace uopcg::io
#endif  // UOPCG_SINGLE_IO_VIZ_HPP
// ---- end uopcg/io/viz.hpp ----
