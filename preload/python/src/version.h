// PY_VERSION_HEX from the version text 3.9/3.10 offer (they lack the Py_Version constant).
#pragma once

#include <cstdint>

namespace gpuleak::python {

// "3.10.13 (main, ...)" -> 0x030a0df0, "3.10.0rc1 ..." -> 0x030a00c1; 0 if unparsable.
// A trailing '+' (a build from a release branch) counts as final.
uint32_t parse_version(const char* text);

} // namespace gpuleak::python
