/*
 * gpuleak_backtrace(frames, max, context): hands gpuleak_walk_frames the caller's registers as they
 * will be once this call returns (ip = the return address, sp just above it, rbp untouched), and
 * where the walk gives up, jumps to the fallback with the stack as it was at entry: libunwind's
 * unw_backtrace then starts from the same frame as if the caller had called it.
 */
    .text
    .globl  gpuleak_backtrace
    .hidden gpuleak_backtrace
    .type   gpuleak_backtrace, @function
gpuleak_backtrace:
    .cfi_startproc
    endbr64
    pushq   %rdi                        /* frames and max, for the fallback */
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    movq    16(%rsp), %rcx              /* ip: the return address */
    leaq    24(%rsp), %r8               /* sp: the caller's, after the return */
    movq    %rbp, %r9                   /* bp */
    subq    $8, %rsp                    /* the call's 16-byte alignment */
    .cfi_adjust_cfa_offset 8
    call    gpuleak_walk_frames
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    testl   %eax, %eax
    js      .Lfallback
    ret
.Lfallback:
    jmp     *gpuleak_unwind_fallback(%rip)
    .cfi_endproc
    .size   gpuleak_backtrace, .-gpuleak_backtrace

    .section .note.GNU-stack,"",@progbits
