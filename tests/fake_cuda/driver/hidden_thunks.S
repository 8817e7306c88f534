/*
 * FAKECUDA_HIDDEN_POINTERS=1: cuGetProcAddress answers with these instead of the exported
 * functions, as the real driver answers with internal ones that dladdr() cannot name. Thunk i
 * jumps through fakecuda_hidden_targets[i] (resolver.cpp fills it), so arguments, the return
 * address and the result pass through untouched. Both symbols are hidden: nothing here is exported.
 */
#if defined(__x86_64__)
    .text
    .balign 16
    .globl  fakecuda_hidden_thunks
    .hidden fakecuda_hidden_thunks
fakecuda_hidden_thunks:
    .set    index, 0
    .rept   512
    jmp     *fakecuda_hidden_targets+8*index(%rip)
    .balign 16
    .set    index, index+1
    .endr
#endif
    .section .note.GNU-stack,"",@progbits
