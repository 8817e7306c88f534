/* libnvtx_second_instance.so: a library with NVTX calls of its own. The NVTX3 headers give every
 * shared library its own hidden NVTX instance, so this one is injected apart from the program's
 * (as PyTorch's or cuDNN's are in a real process). */
#ifndef NVTX_SECOND_INSTANCE_H
#define NVTX_SECOND_INSTANCE_H

int second_instance_push(const char* message);
int second_instance_pop(void);

#endif
