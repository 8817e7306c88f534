// Names for the sites of a report. The headline alone (the innermost frame of the program's own
// code) is shared by every site that allocates through one helper, a tensor class's constructor or
// an allocator wrapper; those get the callers that differ, outwards, until each name is unique:
// "T.__init__ at tensor.py:68 ← forward_step:24 ← train_leaky:32".
#pragma once

#include "analysis/report.h"

namespace gpuleak::analyzer {

void name_sites(Report& report);

// "function at file.py:12": the headline of a site, without callers.
std::string headline_name(const Site& site);

} // namespace gpuleak::analyzer
