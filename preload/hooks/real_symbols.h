// Finding the functions our exports stand in front of, without ever calling the public dlsym
// (which is our own hook).
#pragma once

namespace gpuleak::hooks {

using DlsymFn = void* (*)(void*, const char*);

// glibc's dlsym, found with dlvsym (pitfall 4: __libc_dlsym and _dl_sym are gone).
DlsymFn real_dlsym();

// glibc's definition of `name` after libgpuleak, by dlvsym (not hooked) under each version that
// named glibc's dl functions: newer glibc first, then the x86-64 and aarch64 baselines. nullptr if
// none does.
void* next_glibc_symbol(const char* name);

// The definition of `name` that our export hides: the next one after libgpuleak in the global
// scope, else the first loaded object (in load order, not us) whose soname starts with
// `library_prefix` ("libcuda.so", "libcudart"). nullptr if none is loaded.
void* next_definition(const char* name, const char* library_prefix);

// Whether `address` lies in the real libcuda / in libgpuleak itself.
bool in_libcuda(const void* address);
bool in_self(const void* address);

} // namespace gpuleak::hooks
