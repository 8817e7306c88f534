/* scenario_two_devices: allocations attributed to the device current on the calling thread. Run
 * with FAKECUDA_DEVICES=2; exits 2 if fewer than two devices exist.
 *
 * Ground truth (cudaMalloc -> cuMemAlloc_v2):
 *   device0_leak       device 0, 1000001 dev leaked (after cudaSetDevice(0))
 *   device1_leak       device 1, 2000002 dev leaked (after cudaSetDevice(1))
 *   device1_transient  device 1, 3000003 dev, freed; on a second thread that selects device 1
 *                      itself (the current device is per thread)
 * Totals: 3 allocations, 1 free. Live at end: 2 blocks, 3000003 bytes (device 0: 1000001,
 * device 1: 2000002). Peaks: device 0 1000001, device 1 5000005; both devices together 6000006. */
#include "app_check.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>

__attribute__((noinline)) void* device0_leak(void) {
    void* p = NULL;
    APP_OK(cudaSetDevice(0));
    APP_OK(cudaMalloc(&p, 1000001));
    return p;
}

__attribute__((noinline)) void* device1_leak(void) {
    void* p = NULL;
    APP_OK(cudaSetDevice(1));
    APP_OK(cudaMalloc(&p, 2000002));
    return p;
}

__attribute__((noinline)) void device1_transient(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 3000003));
    APP_OK(cudaFree(p));
}

static void* second_thread(void* unused) {
    (void)unused;
    int device = -1;
    APP_OK(cudaGetDevice(&device));
    APP_CHECK(device == 0, "a new thread starts on device %d, expected 0", device);
    APP_OK(cudaSetDevice(1));
    device1_transient();
    return NULL;
}

int main(void) {
    int count = 0;
    APP_OK(cudaGetDeviceCount(&count));
    if (count < 2) {
        fprintf(stderr, "scenario_two_devices: %d device(s); run with FAKECUDA_DEVICES=2\n", count);
        return 2;
    }
    device0_leak();
    device1_leak();
    pthread_t thread;
    APP_CHECK(pthread_create(&thread, NULL, second_thread, NULL) == 0, "pthread_create failed");
    pthread_join(thread, NULL);

    app_expect_calls("cuMemAlloc_v2", 3);
    app_expect_calls("cuMemFree_v2", 1);
    app_expect_device_used(0, 1000001);
    app_expect_device_used(1, 2000002);
    app_expect_device_peak(0, 1000001);
    app_expect_device_peak(1, 5000005);
    return 0;
}
