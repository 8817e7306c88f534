/* nvtx_iterations: a training loop whose iterations are NVTX ranges, and nothing else of gpuleak's.
 *
 * Usage: nvtx_iterations [HOW]. HOW is the NVTX call that opens each "iteration" range: push_a
 * (default), push_w, push_ex, push_ex_w, start_a, start_w, start_ex, domain_push_ex,
 * domain_start_ex, registered_a, registered_w (a domain range whose message is a registered
 * string), or second_instance (nvtxRangePushA from libnvtx_second_instance.so, whose NVTX3 headers
 * make an NVTX instance of its own, injected separately).
 *
 * Ground truth (device 0, cudaMalloc -> cuMemAlloc_v2):
 *   ranges: "iteration" opened 5 times, "forward" 10 times (twice inside each iteration, always
 *   nvtxRangePushA); nvtxMarkA("iteration") once and a range "iteration_setup" once, before the
 *   loop: neither is the iteration range.
 *   keep_output_leak      5 x 1000001 dev, once per iteration, never freed
 *   forward_workspace    10 x 3000003 dev, freed inside its "forward" range
 * Totals: 15 allocations, 10 frees. Live at end: 5000005 bytes. Device peak: 8000008.
 *
 * Every NVTX call must answer what it answers without a tool (a tool that only watches changes
 * nothing): pushes and pops NVTX_NO_PUSH_POP_TRACKING, starts range id 0. */
#include "app_check.h"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <string.h>
#include <wchar.h>

#include "second_instance.h"

#define ITERATIONS 5

__attribute__((noinline)) void* keep_output_leak(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 1000001));
    return p;
}

__attribute__((noinline)) void forward_workspace(void) {
    APP_EXPECT_RC(nvtxRangePushA("forward"), NVTX_NO_PUSH_POP_TRACKING);
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 3000003));
    APP_OK(cudaFree(p));
    APP_EXPECT_RC(nvtxRangePop(), NVTX_NO_PUSH_POP_TRACKING);
}

static nvtxEventAttributes_t attributes(void) {
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    return a;
}

static nvtxEventAttributes_t ascii(const char* message) {
    nvtxEventAttributes_t a = attributes();
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = message;
    return a;
}

static nvtxEventAttributes_t wide(const wchar_t* message) {
    nvtxEventAttributes_t a = attributes();
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = message;
    return a;
}

static nvtxEventAttributes_t registered(nvtxStringHandle_t handle) {
    nvtxEventAttributes_t a = attributes();
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = handle;
    return a;
}

#define EXPECT_NO_TRACKING(call) APP_EXPECT_RC(call, NVTX_NO_PUSH_POP_TRACKING)
#define EXPECT_NO_ID(call) APP_CHECK((call) == 0, "%s returned a range id", #call)

static nvtxDomainHandle_t domain;

/* One loop body, inside the iteration range opened with `how`. */
static void iteration(const char* how, void** output) {
    if (!strcmp(how, "push_a")) {
        EXPECT_NO_TRACKING(nvtxRangePushA("iteration"));
    } else if (!strcmp(how, "push_w")) {
        EXPECT_NO_TRACKING(nvtxRangePushW(L"iteration"));
    } else if (!strcmp(how, "push_ex")) {
        nvtxEventAttributes_t a = ascii("iteration");
        EXPECT_NO_TRACKING(nvtxRangePushEx(&a));
    } else if (!strcmp(how, "push_ex_w")) {
        nvtxEventAttributes_t a = wide(L"iteration");
        EXPECT_NO_TRACKING(nvtxRangePushEx(&a));
    } else if (!strcmp(how, "start_a")) {
        EXPECT_NO_ID(nvtxRangeStartA("iteration"));
    } else if (!strcmp(how, "start_w")) {
        EXPECT_NO_ID(nvtxRangeStartW(L"iteration"));
    } else if (!strcmp(how, "start_ex")) {
        nvtxEventAttributes_t a = ascii("iteration");
        EXPECT_NO_ID(nvtxRangeStartEx(&a));
    } else if (!strcmp(how, "domain_push_ex")) {
        nvtxEventAttributes_t a = ascii("iteration");
        EXPECT_NO_TRACKING(nvtxDomainRangePushEx(domain, &a));
    } else if (!strcmp(how, "domain_start_ex")) {
        nvtxEventAttributes_t a = ascii("iteration");
        EXPECT_NO_ID(nvtxDomainRangeStartEx(domain, &a));
    } else if (!strcmp(how, "registered_a")) {
        nvtxEventAttributes_t a = registered(nvtxDomainRegisterStringA(domain, "iteration"));
        EXPECT_NO_TRACKING(nvtxDomainRangePushEx(domain, &a));
    } else if (!strcmp(how, "registered_w")) {
        nvtxEventAttributes_t a = registered(nvtxDomainRegisterStringW(domain, L"iteration"));
        EXPECT_NO_TRACKING(nvtxDomainRangePushEx(domain, &a));
    } else if (!strcmp(how, "second_instance")) {
        EXPECT_NO_TRACKING(second_instance_push("iteration"));
    } else {
        app_fail("unknown HOW: %s", how);
    }

    *output = keep_output_leak();
    forward_workspace();
    forward_workspace();

    if (!strncmp(how, "start", 5)) {
        nvtxRangeEnd(0);
    } else if (!strcmp(how, "domain_start_ex")) {
        nvtxDomainRangeEnd(domain, 0);
    } else if (!strncmp(how, "domain", 6) || !strncmp(how, "registered", 10)) {
        EXPECT_NO_TRACKING(nvtxDomainRangePop(domain));
    } else if (!strcmp(how, "second_instance")) {
        EXPECT_NO_TRACKING(second_instance_pop());
    } else {
        EXPECT_NO_TRACKING(nvtxRangePop());
    }
}

int main(int argc, char** argv) {
    const char* how = argc > 1 ? argv[1] : "push_a";
    domain = nvtxDomainCreateA("nvtx_iterations");

    nvtxMarkA("iteration");
    EXPECT_NO_TRACKING(nvtxRangePushA("iteration_setup"));
    EXPECT_NO_TRACKING(nvtxRangePop());

    void* outputs[ITERATIONS];
    for (int i = 0; i < ITERATIONS; ++i)
        iteration(how, &outputs[i]);
    (void)outputs;

    app_expect_calls("cuMemAlloc_v2", 3 * ITERATIONS);
    app_expect_calls("cuMemFree_v2", 2 * ITERATIONS);
    app_expect_device_used(0, 5000005);
    app_expect_device_peak(0, 8000008);
    return 0;
}
