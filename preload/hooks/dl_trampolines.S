/*
 * dlsym and dlopen must reach glibc with the application's return address intact: glibc resolves
 * RTLD_NEXT, RTLD_DEFAULT scopes and dlopen's RUNPATH search from the caller. A C wrapper would make
 * libgpuleak the caller (pitfall 6: RTLD_NEXT in liba then finds liba again), so these entry points
 * are jumps, and only the handle lookups (whose result does not depend on the caller) go through C.
 */
    .text

    .globl  dlsym
    .type   dlsym, @function
dlsym:
    .cfi_startproc
    cmpq    $-1, %rdi                   /* RTLD_NEXT: forward untouched */
    je      .Ldlsym_forward
    testq   %rdi, %rdi                  /* a real handle: look up, then maybe wrap (C) */
    jnz     gpuleak_dlsym_handle
    /* RTLD_DEFAULT: our exports are first in scope; answer NULL where the app would have got NULL. */
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    subq    $8, %rsp
    .cfi_adjust_cfa_offset 8
    movq    %rsi, %rdi
    call    gpuleak_dlsym_default_hidden
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    testl   %eax, %eax
    jnz     .Ldlsym_null
.Ldlsym_forward:
    movq    gpuleak_real_dlsym(%rip), %rax
    testq   %rax, %rax
    jz      .Ldlsym_resolve
    jmp     *%rax
.Ldlsym_resolve:
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    subq    $8, %rsp
    .cfi_adjust_cfa_offset 8
    call    gpuleak_resolve_real_dlsym
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    testq   %rax, %rax
    jz      .Ldlsym_null
    jmp     *%rax
.Ldlsym_null:
    xorl    %eax, %eax
    ret
    .cfi_endproc
    .size   dlsym, .-dlsym

    .globl  dlopen
    .type   dlopen, @function
dlopen:
    .cfi_startproc
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    movl    %esi, %edi
    call    gpuleak_dlopen_flags        /* may clear RTLD_DEEPBIND; resolves the real dlopen */
    movl    %eax, %esi
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    movq    gpuleak_real_dlopen(%rip), %rax
    testq   %rax, %rax
    jz      .Ldlopen_fail
    jmp     *%rax
.Ldlopen_fail:
    xorl    %eax, %eax
    ret
    .cfi_endproc
    .size   dlopen, .-dlopen

    .section .note.GNU-stack,"",@progbits
