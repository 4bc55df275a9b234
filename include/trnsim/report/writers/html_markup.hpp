#pragma once
// Small pieces the HTML pages (the run report, the sweep's page) are assembled from: escaping,
// number formats with units, SVG shapes and the colours of the report's categories. Every number
// is printed with a fixed format so that the same inputs give byte-identical pages.
#include <string>
#include <string_view>

namespace trnsim::report::html {

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string escape(std::string_view text);

// "18.84 s", "12.35 ms", "431.2 us": four significant digits in the largest unit that keeps the
// value at or above 1.
std::string human_seconds(double seconds);
// Bytes with two decimals in the largest binary unit that keeps the value at or above 1 (TiB,
// GiB, MiB, KiB; whole bytes below 1 KiB): "10.40 GiB".
std::string human_bytes(double bytes);
// A count with thousands separators: "111,289".
std::string grouped(double value);
// A fraction as a percentage with one decimal: "60.4 %".
std::string percent(double fraction);

// SVG elements; coordinates in px with one decimal. `title` (escaped here) becomes a tooltip.
std::string svg_rect(double x, double y, double width, double height, std::string_view fill,
                     std::string_view title = {});
// `anchor`: "start", "middle" or "end". `text` is escaped here.
std::string svg_text(double x, double y, std::string_view text, std::string_view anchor = "start",
                     std::string_view css_class = {});
std::string svg_line(double x1, double y1, double x2, double y2, std::string_view css_class);

// A coloured square and its label, for HTML legends.
std::string swatch(std::string_view colour, std::string_view label);

// Colours of the breakdown parts (indexed by report::Part) and of the memory terms. The Gantt
// reuses the part colours so that one legend reads both charts.
inline constexpr std::string_view kPartColour[] = {
    "#4c78a8",  // forward
    "#f58518",  // backward
    "#b279a2",  // recompute
    "#54a24b",  // optimizer
    "#e45756",  // exposed TP communication
    "#72b7b2",  // pipeline send/recv
    "#c9a227",  // exposed DP communication
    "#d4cfcc",  // pipeline bubble
};
inline constexpr std::string_view kMemoryColour[] = {
    "#4c78a8",  // weights
    "#f58518",  // gradients
    "#54a24b",  // optimizer states
    "#b279a2",  // activations
    "#9d755d",  // embedding / logits buffers
    "#bab0ac",  // workspace
};

}  // namespace trnsim::report::html
