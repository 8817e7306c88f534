#pragma once

#include <cstdint>
#include <string>

#include "model/site_table.h"

namespace gpuleak::analyzer {

std::string human_bytes(uint64_t bytes); // "1.5 GiB", "512 B"
std::string with_commas(uint64_t n);     // "1,234,567"
// A site's growth: "+1.50 MiB/iteration". Under a byte an iteration, over the power of ten of
// iterations that makes it 10 bytes or more: "+64 B per 1,000 iterations", as a buffer kept
// every thousandth step is no "+0 B/iteration".
std::string growth_rate(double bytes_per_iteration);
std::string frame_location(const Frame& f); // "file.cpp:42" (basename), or the module, or "??"
std::string frame_function(const Frame& f); // the function, or "??"
// The function as its source names it, or "??": without the suffix of a clone the compiler made
// of it ("forward(unsigned long) [clone .constprop.3]" is forward's), which is noise in a name
// and differs between builds of the same code. Frame lists keep the suffix: it is what ran.
std::string source_function(const Frame& f);
std::string source_function(const std::string& function, bool python); // "" stays ""
// The function as a site's or loop's name shows it: source_function() without a C++ parameter
// list or trailing qualifiers ("ns::S::operator()(int) const" is "ns::S::operator()"), as DWARF
// names an inlined function. The file and line beside it tell overloads apart.
std::string display_function(const Frame& f);
std::string without_parameters(const std::string& function);

} // namespace gpuleak::analyzer
