#pragma once

namespace gpuleak::recorder {

void write_process_record();
// Cheap check (one dl_iterate_phdr step) whether objects were loaded or unloaded since the last
// scan.
bool modules_changed();
void reset_modules_after_fork_child();

} // namespace gpuleak::recorder
