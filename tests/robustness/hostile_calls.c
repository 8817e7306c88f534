/* hostile_calls: every call a program can get wrong, one line each: "<call> <return code> <out
 * parameter untouched?>". Run with and without the preload, the output must be byte-identical: a
 * tracer never changes a return code or an output parameter. Nothing here succeeds except where
 * noted; the valid allocations exist only to be misused. */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#define SENTINEL ((CUdeviceptr)0x5a5a5a5a)

static void show(const char* call, CUresult rc) {
    printf("%-44s %d\n", call, (int)rc);
}
static void show_out(const char* call, CUresult rc, int untouched) {
    printf("%-44s %d %s\n", call, (int)rc, untouched ? "untouched" : "written");
}

int main(void) {
    CUdeviceptr d = SENTINEL;
    void* h = (void*)SENTINEL;
    CUresult rc;

    rc = cuMemAlloc(&d, 4096);
    show_out("cuMemAlloc before cuInit", rc, d == SENTINEL);
    show("cuInit", cuInit(0));

    show("cuMemFree(0)", cuMemFree(0));
    show("cuMemFree(unknown)", cuMemFree((CUdeviceptr)0xdead0000));
    show("cuMemFreeHost(NULL)", cuMemFreeHost(NULL));
    show("cuMemFreeHost(unknown)", cuMemFreeHost((void*)0xdead0000));
    show("cuMemFreeAsync(unknown)", cuMemFreeAsync((CUdeviceptr)0xdead0000, 0));

    d = SENTINEL;
    show_out("cuMemAlloc 0 bytes", cuMemAlloc(&d, 0), d == SENTINEL);
    show("cuMemAlloc NULL out", cuMemAlloc(NULL, 4096));
    d = SENTINEL;
    show_out("cuMemAlloc 2^50 bytes", cuMemAlloc(&d, (size_t)1 << 50), d == SENTINEL);
    d = SENTINEL;
    size_t pitch = 77;
    rc = cuMemAllocPitch(&d, &pitch, 0, 16, 4);
    show_out("cuMemAllocPitch width 0", rc, d == SENTINEL && pitch == 77);
    d = SENTINEL;
    show_out("cuMemAllocManaged bad flags", cuMemAllocManaged(&d, 4096, 0xff), d == SENTINEL);
    h = (void*)SENTINEL;
    show_out("cuMemAllocHost 0 bytes", cuMemAllocHost(&h, 0), h == (void*)SENTINEL);
    h = (void*)SENTINEL;
    show_out("cuMemHostAlloc bad flags", cuMemHostAlloc(&h, 4096, 0x80000000u),
             h == (void*)SENTINEL);
    d = SENTINEL;
    show_out("cuMemAllocAsync 0 bytes", cuMemAllocAsync(&d, 0, 0), d == SENTINEL);

    CUdeviceptr valid = 0;
    show("cuMemAlloc valid", cuMemAlloc(&valid, 65536));
    show("cuMemFreeHost(device pointer)", cuMemFreeHost((void*)valid));
    show("cuMemFree(interior pointer)", cuMemFree(valid + 64));
    show("cuMemFree(valid)", cuMemFree(valid));
    show("cuMemFree(valid) again", cuMemFree(valid));
    show("cuMemFreeAsync(valid) after free", cuMemFreeAsync(valid, 0));

    void* pinned = NULL;
    show("cuMemAllocHost valid", cuMemAllocHost(&pinned, 4096));
    show("cuMemFree(pinned pointer)", cuMemFree((CUdeviceptr)pinned));
    show("cuMemFreeHost(pinned)", cuMemFreeHost(pinned));
    show("cuMemFreeHost(pinned) again", cuMemFreeHost(pinned));

    CUmemGenericAllocationHandle bogus = (CUmemGenericAllocationHandle)0xdead;
    show("cuMemRelease(unknown handle)", cuMemRelease(bogus));
    show("cuMemUnmap(unmapped range)", cuMemUnmap((CUdeviceptr)0xdead0000, 2 << 20));
    CUmemGenericAllocationHandle out = 0x77;
    rc = cuMemRetainAllocationHandle(&out, (void*)0xdead0000);
    show_out("cuMemRetainAllocationHandle(unknown)", rc, out == 0x77);
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    out = 0x77;
    rc = cuMemCreate(&out, 0, &prop, 0);
    show_out("cuMemCreate 0 bytes, empty prop", rc, out == 0x77);
    return 0;
}
