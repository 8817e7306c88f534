/* liba, loaded before libb: both define which(), and liba looks up the next definition the way an
 * interposer forwards to the library it wraps. */
#include "rtld_libs.h"

#include <dlfcn.h>

int which(void) {
    return 'a';
}

WhichFn which_next(void) {
    return (WhichFn)dlsym(RTLD_NEXT, "which");
}
