// The text of a source line, when the file is still readable where the trace says it was.
#pragma once

#include <string>

namespace gpuleak::analyzer {

// "" if the file is missing, larger than 8 MiB, or shorter than `line`. Trimmed. Cached per file.
const std::string& source_line(const std::string& file, int line);

} // namespace gpuleak::analyzer
