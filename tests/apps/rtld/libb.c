/* libb: the definition of which() that RTLD_NEXT from liba must find. */
#include "rtld_libs.h"

int which(void) {
    return 'b';
}
