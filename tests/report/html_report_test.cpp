// The HTML report: what a reader and a test look for (the step time, one Gantt row and one
// memory bar per pipeline stage), that the page is self-contained and well nested, that the same
// run renders byte-identically, and the Gantt's pixel geometry on hand-made timelines.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "trnsim/config/experiment.hpp"
#include "trnsim/config/step_input.hpp"
#include "trnsim/report/writers/html_report.hpp"

using namespace trnsim;

namespace {

struct Rendered {
  replay::StepRun run;
  std::string html;
};

// tiny-trn1 (2 NeuronCores, 2 layers) re-planned as TP 1 x PP 2: two pipeline stages.
Rendered render_tiny(std::vector<std::string> overrides = {}) {
  overrides.insert(overrides.begin(), {"parallelism.tp=1", "parallelism.pp=2"});
  const auto ex = config::load_experiment(std::string(TRNSIM_TEST_SOURCE_DIR) + "/configs/examples/tiny-trn1.json",
                                          overrides);
  const replay::StepInput in = config::step_input(ex);
  Rendered r{replay::simulate_step(in), {}};
  r.html = report::format_html(in, r.run, report::analyze(in, r.run));
  return r;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

// The text between `open` and the next `close` after it.
std::string between(const std::string& text, const std::string& open, const std::string& close) {
  const auto a = text.find(open);
  if (a == std::string::npos) return {};
  const auto b = text.find(close, a + open.size());
  return text.substr(a + open.size(), b - a - open.size());
}

// Nesting check: every element opened is closed, in order, except void and self-closed ones.
// Returns "" when balanced, else what went wrong.
std::string nesting_error(const std::string& html) {
  std::vector<std::string> open;
  for (std::size_t p = html.find('<'); p != std::string::npos; p = html.find('<', p + 1)) {
    if (html.compare(p, 2, "<!") == 0) continue;  // doctype
    const bool closing = html[p + 1] == '/';
    const auto name_begin = p + (closing ? 2 : 1);
    const auto name_end = html.find_first_of(" >/", name_begin);
    const std::string name = html.substr(name_begin, name_end - name_begin);
    const auto end = html.find('>', p);
    if (end == std::string::npos) return "unterminated tag " + name;
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> closes " + (open.empty() ? "nothing" : open.back());
      open.pop_back();
    } else if (html[end - 1] != '/' && name != "meta") {
      open.push_back(name);
    }
  }
  return open.empty() ? std::string() : "unclosed " + open.back();
}

// A hand-made run: rank 0 is the only stage; `tasks` are (category, start s, end s) on its
// compute stream. The step lasts until the latest end.
struct HandTask {
  workload::Category category;
  double start, end;
};
std::string render_hand(const std::vector<HandTask>& tasks, std::vector<report::Finding> findings = {}) {
  replay::StepRun run;
  run.graph.simulated_ranks = {0};
  double step = 0;
  for (const auto& t : tasks) {
    run.graph.tasks.push_back({.kind = workload::TaskKind::Compute, .stream = workload::Stream::Compute,
                               .category = t.category});
    run.timeline.spans.push_back({sim::Time::seconds(t.start), sim::Time::seconds(t.start), sim::Time::seconds(t.end)});
    step = std::max(step, t.end);
  }
  run.timeline.step_time = sim::Time::seconds(step);
  report::StepReport rep;
  rep.step_time_s = step;
  rep.findings = std::move(findings);
  return report::format_html(replay::StepInput{}, run, rep);
}

}  // namespace

TEST_CASE("html report: step time, one Gantt row and one memory bar per stage") {
  const Rendered r = render_tiny();
  const double step_s = r.run.timeline.step_time.to_seconds();
  REQUIRE(step_s > 0);

  // The exact value, and the visible one to its four significant digits.
  const std::string element = between(r.html, "id=\"step-time\"", "</span>");
  const std::string exact = between(element, "data-seconds=\"", "\"");
  CHECK(std::strtod(exact.c_str(), nullptr) == step_s);
  const std::string shown = element.substr(element.find('>') + 1);
  char* unit = nullptr;
  const double value = std::strtod(shown.c_str(), &unit);
  const std::string u(unit);
  const double scale = u == " s" ? 1 : u == " ms" ? 1e-3 : u == " us" ? 1e-6 : 0;
  REQUIRE(scale > 0);
  CHECK(value * scale == Approx(step_s).epsilon(5e-4));

  // PP 2 from the overrides: stages 0 and 1, each with a Gantt row and a memory bar.
  CHECK(count(r.html, "class=\"gantt-row\"") == 2);
  CHECK(count(r.html, "class=\"memory-bar\"") == 2);
  for (const std::string stage : {"0", "1"}) {
    CHECK(count(r.html, "class=\"gantt-row\" data-stage=\"" + stage + "\"") == 1);
    CHECK(count(r.html, "class=\"memory-bar\" data-stage=\"" + stage + "\"") == 1);
  }
}

TEST_CASE("html report: self-contained, escaped and well nested") {
  const Rendered r = render_tiny({"model.name=<script>alert('x')</script> & co"});
  for (const std::string external : {"http://", "https://", "<script", "<link", "url(", "@import", " src="}) {
    INFO(external);
    CHECK(r.html.find(external) == std::string::npos);
  }
  CHECK(r.html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co") != std::string::npos);
  CHECK(nesting_error(r.html).empty());
  CHECK(nesting_error("<div><span></div></span>") == "</div> closes span");  // the checker itself
}

TEST_CASE("html report: the same run renders byte-identically") {
  CHECK(render_tiny().html == render_tiny().html);
}

TEST_CASE("html report: Gantt spans become pixel rectangles, sub-pixel ones merged with their busy share") {
  // Plot: 1000 px for the step, starting at x = 130. Step 1 s, so 1 px = 1 ms.
  SECTION("spans wider than a pixel keep their extent") {
    // forward [0, 0.25 s) -> x 130, 250 px; backward [0.25, 1 s) -> x 380, 750 px.
    const std::string html = render_hand({{workload::Category::Forward, 0, 0.25}, {workload::Category::Backward, 0.25, 1}});
    CHECK(count(html, R"(<rect x="130" y="8" width="250" height="16" fill="#4c78a8">)") == 1);
    CHECK(count(html, R"(<rect x="380" y="8" width="750" height="16" fill="#f58518">)") == 1);
  }
  SECTION("500 half-pixel spans become one half-opaque rectangle") {
    // forward for 0.5 ms of every 1 ms over [0, 0.5 s): each of the first 500 px is half busy;
    // then backward [0.5, 1 s).
    std::vector<HandTask> tasks;
    for (int i = 0; i < 500; ++i) tasks.push_back({workload::Category::Forward, i * 1e-3, i * 1e-3 + 0.5e-3});
    tasks.push_back({workload::Category::Backward, 0.5, 1});
    const std::string html = render_hand(tasks);
    CHECK(count(html, R"(<rect x="130" y="8" width="500" height="16" fill="#4c78a8" fill-opacity="0.5">)") == 1);
    CHECK(count(html, R"(fill="#4c78a8")") == 1);
    CHECK(count(html, R"(<rect x="630" y="8" width="500" height="16" fill="#f58518">)") == 1);
  }
}

TEST_CASE("html report: findings are listed with their rule, escaped") {
  const std::string html = render_hand({{workload::Category::Forward, 0, 1}},
                                       {{"out_of_memory", "stage 0 needs 2 GiB > 1 GiB", 0, ""}, {"layout", "a <b> & c", 0, ""}});
  CHECK(count(html, "<li><code>out_of_memory</code> stage 0 needs 2 GiB &gt; 1 GiB</li>") == 1);
  CHECK(count(html, "<li><code>layout</code> a &lt;b&gt; &amp; c</li>") == 1);
  CHECK(count(html, "<ol class=\"findings\">") == 1);
}
