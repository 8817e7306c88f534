#pragma once

namespace gpuleak::hooks {

// Whether `symbol` is one of our runtime exports and no libcudart definition of it is loaded.
bool runtime_export_without_definition(const char* symbol);

} // namespace gpuleak::hooks
