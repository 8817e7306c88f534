/* liba and libb for path_rtld's RTLD_NEXT check. */
#ifndef RTLD_LIBS_H
#define RTLD_LIBS_H

typedef int (*WhichFn)(void);

int which(void);

/* dlsym(RTLD_NEXT, "which") called from inside liba. */
WhichFn which_next(void);

#endif
