/* libnvidia-ml.so.1 for the tests: the NVML functions NCCL 2.28.9 looks up (its nvmlwrap.cc
 * dlsyms them by name from "libnvidia-ml.so.1"), answering for the devices the fake driver
 * models: FAKECUDA_DEVICES of them (default 1), compute capability 9.0, PCI location
 * 0000:<0x10 + n>:00.0 (as cuDeviceGetPCIBusId answers), peer-to-peer possible between any
 * two, no NVLink, no NVLink fabric, confidential computing off.
 *
 * NVIDIA's nvml.h is not part of the CUDA toolkit, so the few types are declared here with the
 * layouts of NVML API version 12 (the ones NCCL's own extract of nvml.h uses). FAKECUDA_LOG=1
 * prints one stderr line per call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st* nvmlDevice_t;

typedef struct {
    char busId[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    unsigned int reserved0, reserved1, reserved2, reserved3;
} nvmlPciInfo_t;

typedef enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;
typedef int nvmlNvLinkCapability_t;
typedef int nvmlGpuP2PCapsIndex_t;
typedef enum { NVML_P2P_STATUS_OK = 0, NVML_P2P_STATUS_NOT_SUPPORTED = 5 } nvmlGpuP2PStatus_t;

typedef union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
} nvmlValue_t;
typedef struct {
    unsigned int fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType;
    nvmlReturn_t nvmlReturn;
    nvmlValue_t value;
} nvmlFieldValue_t;

typedef struct {
    unsigned int version;
    unsigned char clusterUuid[16];
    nvmlReturn_t status;
    unsigned int cliqueId;
    unsigned char state;
    unsigned int healthMask;
} nvmlGpuFabricInfoV_t;
#define NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0

typedef struct {
    unsigned int version;
    unsigned char ibGuid[16], chassisSerialNumber[16];
    unsigned char slotNumber, trayIndex, hostId, peerType, moduleId;
} nvmlPlatformInfo_t;

typedef struct {
    unsigned int environment, ccFeature, devToolsMode;
} nvmlConfComputeSystemState_t;
typedef struct {
    unsigned int version, environment, ccFeature, devToolsMode, multiGpuMode;
} nvmlSystemConfComputeSettings_t;

/* ------------------------------------------------------------------------------------------ */

enum { kMaxDevices = 16 };
struct nvmlDevice_st {
    unsigned index;
};
static struct nvmlDevice_st g_devices[kMaxDevices];
static int g_initialized; /* reference count of nvmlInit */

static int env_flag(const char* name) {
    const char* v = getenv(name);
    return v != NULL && strcmp(v, "1") == 0;
}

static void trace(const char* call, nvmlReturn_t rc) {
    if (!env_flag("FAKECUDA_LOG")) return;
    char line[160];
    int n = snprintf(line, sizeof line, "fakenvml: %s -> %d\n", call, (int)rc);
    if (n > 0) {
        ssize_t w = write(2, line, (size_t)n);
        (void)w;
    }
}
#define RETURN(rc)                                                                                 \
    do {                                                                                           \
        nvmlReturn_t rc_ = (rc);                                                                   \
        trace(__func__, rc_);                                                                      \
        return rc_;                                                                                \
    } while (0)

static unsigned device_count(void) {
    const char* v = getenv("FAKECUDA_DEVICES");
    if (v == NULL || *v == '\0') return 1;
    char* end = NULL;
    unsigned long n = strtoul(v, &end, 0);
    return *end == '\0' && n <= kMaxDevices ? (unsigned)n : 1;
}

static int valid(nvmlDevice_t d) {
    return g_initialized > 0 && d >= g_devices && d < g_devices + device_count();
}

EXPORT nvmlReturn_t nvmlInit_v2(void) {
    for (unsigned i = 0; i < kMaxDevices; ++i)
        g_devices[i].index = i;
    ++g_initialized;
    RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlInit(void) {
    return nvmlInit_v2();
}
EXPORT nvmlReturn_t nvmlShutdown(void) {
    if (g_initialized == 0) RETURN(NVML_ERROR_UNINITIALIZED);
    --g_initialized;
    RETURN(NVML_SUCCESS);
}
EXPORT const char* nvmlErrorString(nvmlReturn_t r) {
    switch (r) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NOT_FOUND:
        return "Not Found";
    default:
        return "Unknown Error";
    }
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
    if (g_initialized == 0) RETURN(NVML_ERROR_UNINITIALIZED);
    if (count == NULL) RETURN(NVML_ERROR_INVALID_ARGUMENT);
    *count = device_count();
    RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
    return nvmlDeviceGetCount_v2(count);
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
    if (g_initialized == 0) RETURN(NVML_ERROR_UNINITIALIZED);
    if (device == NULL || index >= device_count()) RETURN(NVML_ERROR_INVALID_ARGUMENT);
    *device = &g_devices[index];
    RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
    return nvmlDeviceGetHandleByIndex_v2(index, device);
}
/* "0000:10:00.0" or "00000000:10:00.0", any case. */
EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId, nvmlDevice_t* device) {
    unsigned domain = 0, bus = 0, dev = 0, function = 0;
    if (g_initialized == 0) RETURN(NVML_ERROR_UNINITIALIZED);
    if (pciBusId == NULL || device == NULL ||
        sscanf(pciBusId, "%x:%x:%x.%x", &domain, &bus, &dev, &function) != 4)
        RETURN(NVML_ERROR_INVALID_ARGUMENT);
    if (domain != 0 || dev != 0 || function != 0 || bus < 0x10 || bus - 0x10 >= device_count())
        RETURN(NVML_ERROR_NOT_FOUND);
    *device = &g_devices[bus - 0x10];
    RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* pciBusId, nvmlDevice_t* device) {
    return nvmlDeviceGetHandleByPciBusId_v2(pciBusId, device);
}
EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
    if (!valid(device) || index == NULL) RETURN(NVML_ERROR_INVALID_ARGUMENT);
    *index = device->index;
    RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major,
                                                       int* minor) {
    if (!valid(device) || major == NULL || minor == NULL) RETURN(NVML_ERROR_INVALID_ARGUMENT);
    *major = 9;
    *minor = 0;
    RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                           nvmlGpuP2PCapsIndex_t p2pIndex,
                                           nvmlGpuP2PStatus_t* p2pStatus) {
    if (!valid(device1) || !valid(device2) || p2pStatus == NULL)
        RETURN(NVML_ERROR_INVALID_ARGUMENT);
    /* Read and write over PCIe; no NVLink (index 2) and no peer atomics (3). */
    *p2pStatus = p2pIndex <= 1 ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_NOT_SUPPORTED;
    RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                             nvmlEnableState_t* isActive) {
    (void)link;
    if (!valid(device) || isActive == NULL) RETURN(NVML_ERROR_INVALID_ARGUMENT);
    RETURN(NVML_ERROR_NOT_SUPPORTED);
}
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                        nvmlPciInfo_t* pci) {
    (void)link;
    if (!valid(device) || pci == NULL) RETURN(NVML_ERROR_INVALID_ARGUMENT);
    RETURN(NVML_ERROR_NOT_SUPPORTED);
}
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device, unsigned int link,
                                                     nvmlPciInfo_t* pci) {
    return nvmlDeviceGetNvLinkRemotePciInfo_v2(device, link, pci);
}
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkCapability(nvmlDevice_t device, unsigned int link,
                                                  nvmlNvLinkCapability_t capability,
                                                  unsigned int* capResult) {
    (void)link;
    (void)capability;
    if (!valid(device) || capResult == NULL) RETURN(NVML_ERROR_INVALID_ARGUMENT);
    RETURN(NVML_ERROR_NOT_SUPPORTED);
}
/* Every field (NVLink counts, C2C links, ...) is "not supported" on this PCIe device. */
EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                             nvmlFieldValue_t* values) {
    if (!valid(device) || valuesCount < 0 || (valuesCount > 0 && values == NULL))
        RETURN(NVML_ERROR_INVALID_ARGUMENT);
    for (int i = 0; i < valuesCount; ++i) {
        values[i].timestamp = 0;
        values[i].latencyUsec = 0;
        values[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
    RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t* info) {
    if (!valid(device) || info == NULL) RETURN(NVML_ERROR_INVALID_ARGUMENT);
    const unsigned int version = info->version;
    memset(info, 0, sizeof *info);
    info->version = version;
    info->state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
    info->status = NVML_ERROR_NOT_SUPPORTED;
    RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetPlatformInfo(nvmlDevice_t device, nvmlPlatformInfo_t* info) {
    if (!valid(device) || info == NULL) RETURN(NVML_ERROR_INVALID_ARGUMENT);
    RETURN(NVML_ERROR_NOT_SUPPORTED);
}
EXPORT nvmlReturn_t nvmlSystemGetConfComputeState(nvmlConfComputeSystemState_t* state) {
    if (g_initialized == 0) RETURN(NVML_ERROR_UNINITIALIZED);
    if (state == NULL) RETURN(NVML_ERROR_INVALID_ARGUMENT);
    memset(state, 0, sizeof *state);
    RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlSystemGetConfComputeSettings(nvmlSystemConfComputeSettings_t* settings) {
    if (g_initialized == 0) RETURN(NVML_ERROR_UNINITIALIZED);
    if (settings == NULL) RETURN(NVML_ERROR_INVALID_ARGUMENT);
    const unsigned int version = settings->version;
    memset(settings, 0, sizeof *settings);
    settings->version = version;
    RETURN(NVML_SUCCESS);
}
