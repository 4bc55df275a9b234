#include "trnsim/report/writers/html_markup.hpp"

#include <cmath>

#include <fmt/core.h>

#include "trnsim/units.hpp"

namespace trnsim::report::html {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
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

namespace {

// Four significant digits for a value in [1, 1000).
std::string four_digits(double v, std::string_view unit) {
  const int decimals = v >= 100 ? 1 : v >= 10 ? 2 : 3;
  return fmt::format("{:.{}f} {}", v, decimals, unit);
}

}  // namespace

std::string human_seconds(double s) {
  if (!(s > 0)) return "0 s";
  if (s >= 1) return s >= 1000 ? fmt::format("{:.0f} s", s) : four_digits(s, "s");
  if (s >= 1e-3) return four_digits(s * 1e3, "ms");
  if (s >= 1e-6) return four_digits(s * 1e6, "us");
  return four_digits(s * 1e9, "ns");
}

std::string human_bytes(double b) {
  using units::kKiB, units::kMiB, units::kGiB, units::kTiB;
  if (b >= kTiB) return fmt::format("{:.2f} TiB", b / kTiB);
  if (b >= kGiB) return fmt::format("{:.2f} GiB", b / kGiB);
  if (b >= kMiB) return fmt::format("{:.2f} MiB", b / kMiB);
  if (b >= kKiB) return fmt::format("{:.2f} KiB", b / kKiB);
  return fmt::format("{:.0f} B", b);
}

std::string grouped(double value) {
  const std::string digits = fmt::format("{:.0f}", std::fabs(value));
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 && digits != "0" ? "-" + out : out;
}

std::string percent(double fraction) { return fmt::format("{:.1f} %", 100 * fraction); }

std::string svg_rect(double x, double y, double width, double height, std::string_view fill,
                     std::string_view title) {
  std::string out = fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}")", x, y,
                                width, height, fill);
  if (title.empty()) return out + "/>";
  return out + "><title>" + escape(title) + "</title></rect>";
}

std::string svg_text(double x, double y, std::string_view text, std::string_view anchor, std::string_view css_class) {
  std::string cls = css_class.empty() ? std::string() : fmt::format(R"( class="{}")", css_class);
  return fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="{}"{}>{}</text>)", x, y, anchor, cls, escape(text));
}

std::string svg_line(double x1, double y1, double x2, double y2, std::string_view css_class) {
  return fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" class="{}"/>)", x1, y1, x2, y2,
                     css_class);
}

std::string swatch(std::string_view colour, std::string_view label) {
  return fmt::format(R"(<span class="key"><span class="sw" style="background:{}"></span>{}</span>)", colour,
                     escape(label));
}

}  // namespace trnsim::report::html
