// The documented marker API (include/gpuleak.h): callable from C, C++ and Python's ctypes.
#include "recorder/recorder.h"

extern "C" __attribute__((visibility("default"))) void gpuleak_mark_iteration(const char* name) {
    gpuleak::recorder::marker(name ? name : "");
}
