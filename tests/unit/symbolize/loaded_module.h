#pragma once

#include "symbolize/symbolizer.h"

#include <optional>
#include <string>

namespace gpuleak::analyzer::test {

// What the tracer records for a loaded object, taken the same way it does (dl_iterate_phdr: path,
// load bias, PT_LOAD segments, build-id note), so the tests feed the symbolizer realistic input.
std::optional<ModuleInfo> loaded_module(const std::string& path);

} // namespace gpuleak::analyzer::test
