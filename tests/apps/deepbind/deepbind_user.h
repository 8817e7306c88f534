/* libdeepbind_user.so, loaded by path_deepbind with RTLD_DEEPBIND. */
#ifndef DEEPBIND_USER_H
#define DEEPBIND_USER_H

/* dlopen()s libcuda, dlsym()s its allocator and leaks one buffer (see path_deepbind.c). */
void deepbind_run(void);

#endif
