// Streams, events, stream capture and graphs (with memory nodes), copies and memsets. Device
// memory is host memory here, so copies and memsets are plain memcpy/memset on the addresses.
#include "simple_call.hpp"

#include "accounting.hpp"
#include "config.hpp"
#include "linear_memory.hpp"
#include "streams.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

namespace {

struct Node {
    CUgraphNodeType type;
    CUdeviceptr dptr;
    std::size_t bytes;
    CUDA_KERNEL_NODE_PARAMS kernel{}; // kernel nodes: what was added or last set
};
struct Graph {
    std::mutex mutex;
    std::vector<Node*> nodes;
};
struct Stream {
    int device;
    unsigned flags;
    int priority;
    unsigned long long id;
    std::atomic<Graph*> capture{nullptr};
};
struct Event {
    unsigned flags;
};

std::atomic<unsigned long long> g_next_stream_id{100};
// The per-thread default stream of each thread, for capture.
thread_local Stream t_per_thread{0, 0, 0, 2, {}};

Stream* stream_of(CUstream s, bool per_thread) {
    if (s == CU_STREAM_PER_THREAD || (per_thread && s == nullptr)) return &t_per_thread;
    if (s == nullptr || s == CU_STREAM_LEGACY) return nullptr; // the legacy stream cannot capture
    return reinterpret_cast<Stream*>(s);
}

Node* add_node(Graph* g, CUgraphNodeType type, CUdeviceptr dptr, std::size_t bytes) {
    auto* n = new Node{type, dptr, bytes};
    std::lock_guard lock(g->mutex);
    g->nodes.push_back(n);
    return n;
}

// Graph memory is device memory of the graph's device, allocated when the node is made and kept
// until a free node or a free outside the graph (the fake does not defer it to instantiation).
CUresult alloc_node(Graph* g, CUgraphNode* node, CUdeviceptr* dptr, std::size_t bytes, int device) {
    std::uintptr_t address = 0;
    if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    const CUresult rc = fakecuda::allocate(fakecuda::Kind::device, device, bytes, false, &address);
    if (rc != CUDA_SUCCESS) return rc;
    Node* n = add_node(g, CU_GRAPH_NODE_TYPE_MEM_ALLOC, address, bytes);
    if (node != nullptr) *node = reinterpret_cast<CUgraphNode>(n);
    *dptr = address;
    return CUDA_SUCCESS;
}

CUresult free_node(Graph* g, CUgraphNode* node, CUdeviceptr dptr) {
    const CUresult rc = fakecuda::release(dptr, fakecuda::mask(fakecuda::Kind::device));
    if (rc != CUDA_SUCCESS) return rc;
    Node* n = add_node(g, CU_GRAPH_NODE_TYPE_MEM_FREE, dptr, 0);
    if (node != nullptr) *node = reinterpret_cast<CUgraphNode>(n);
    return CUDA_SUCCESS;
}

CUresult copy(void* dst, const void* src, std::size_t n) {
    if (n == 0) return CUDA_SUCCESS;
    if (dst == nullptr || src == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::memmove(dst, src, n);
    return CUDA_SUCCESS;
}
void* ptr(CUdeviceptr p) {
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p));
}

CUresult copy2d(const CUDA_MEMCPY2D* c) {
    if (c == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto base = [](CUmemorytype type, const void* host, CUdeviceptr dev, CUarray array) {
        if (type == CU_MEMORYTYPE_HOST) return const_cast<void*>(host);
        if (type == CU_MEMORYTYPE_ARRAY) return static_cast<void*>(array);
        return ptr(dev); // device and unified
    };
    auto* src = static_cast<char*>(base(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray));
    auto* dst = static_cast<char*>(base(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray));
    if (src == nullptr || dst == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const std::size_t spitch = c->srcPitch != 0 ? c->srcPitch : c->WidthInBytes;
    const std::size_t dpitch = c->dstPitch != 0 ? c->dstPitch : c->WidthInBytes;
    for (std::size_t row = 0; row < c->Height; ++row)
        std::memmove(dst + (c->dstY + row) * dpitch + c->dstXInBytes,
                     src + (c->srcY + row) * spitch + c->srcXInBytes, c->WidthInBytes);
    return CUDA_SUCCESS;
}

CUresult copy3d(const CUDA_MEMCPY3D* c) {
    if (c == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto base = [](CUmemorytype type, const void* host, CUdeviceptr dev, CUarray array) {
        if (type == CU_MEMORYTYPE_HOST) return const_cast<void*>(host);
        if (type == CU_MEMORYTYPE_ARRAY) return static_cast<void*>(array);
        return ptr(dev);
    };
    auto* src = static_cast<char*>(base(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray));
    auto* dst = static_cast<char*>(base(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray));
    if (src == nullptr || dst == nullptr) return CUDA_ERROR_INVALID_VALUE;
    // Arrays are opaque: a copy into or out of one only checks its arguments.
    if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
        return CUDA_SUCCESS;
    const std::size_t spitch = c->srcPitch != 0 ? c->srcPitch : c->WidthInBytes;
    const std::size_t dpitch = c->dstPitch != 0 ? c->dstPitch : c->WidthInBytes;
    const std::size_t sheight = c->srcHeight != 0 ? c->srcHeight : c->Height;
    const std::size_t dheight = c->dstHeight != 0 ? c->dstHeight : c->Height;
    for (std::size_t z = 0; z < c->Depth; ++z)
        for (std::size_t row = 0; row < c->Height; ++row)
            std::memmove(dst + ((c->dstZ + z) * dheight + c->dstY + row) * dpitch + c->dstXInBytes,
                         src + ((c->srcZ + z) * sheight + c->srcY + row) * spitch + c->srcXInBytes,
                         c->WidthInBytes);
    return CUDA_SUCCESS;
}

template <typename T> CUresult fill(CUdeviceptr dst, T value, std::size_t n) {
    if (n != 0 && dst == 0) return CUDA_ERROR_INVALID_VALUE;
    auto* p = static_cast<T*>(ptr(dst));
    for (std::size_t i = 0; i < n; ++i)
        p[i] = value;
    return CUDA_SUCCESS;
}
template <typename T>
CUresult fill2d(CUdeviceptr dst, std::size_t pitch, T value, std::size_t width,
                std::size_t height) {
    for (std::size_t row = 0; row < height; ++row)
        if (const CUresult rc = fill(dst + row * pitch, value, width); rc != CUDA_SUCCESS)
            return rc;
    return CUDA_SUCCESS;
}

} // namespace

namespace fakecuda {

bool stream_capturing(CUstream stream, bool per_thread) noexcept {
    const Stream* s = stream_of(stream, per_thread);
    return s != nullptr && s->capture.load() != nullptr;
}

CUresult graph_alloc(CUstream stream, bool per_thread, CUdeviceptr* dptr,
                     std::size_t bytes) noexcept {
    Stream* s = stream_of(stream, per_thread);
    Graph* g = s != nullptr ? s->capture.load() : nullptr;
    if (g == nullptr || dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return alloc_node(g, nullptr, dptr, bytes, current_device());
}

CUresult graph_free(CUstream stream, bool per_thread, CUdeviceptr dptr) noexcept {
    Stream* s = stream_of(stream, per_thread);
    Graph* g = s != nullptr ? s->capture.load() : nullptr;
    if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return free_node(g, nullptr, dptr);
}

} // namespace fakecuda

// --- streams ---------------------------------------------------------------------------------
FAKECUDA_ACCEPT(cuStreamCreate, (CUstream * phStream, unsigned int Flags), {
    if (phStream == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *phStream = reinterpret_cast<CUstream>(
            new Stream{fakecuda::current_device(), Flags, 0, g_next_stream_id++, {}});
})
FAKECUDA_ACCEPT(cuStreamCreateWithPriority, (CUstream * phStream, unsigned int flags, int priority),
                {
                    if (phStream == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *phStream = reinterpret_cast<CUstream>(new Stream{
                            fakecuda::current_device(), flags, priority, g_next_stream_id++, {}});
                })
FAKECUDA_ACCEPT(cuStreamDestroy_v2, (CUstream hStream), {
    Stream* s = stream_of(hStream, false);
    if (s == nullptr || s == &t_per_thread)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else
        delete s;
})
#define FAKECUDA_STREAM_TWINS(name, ptsz, params, ...)                                             \
    FAKECUDA_ACCEPT(name, params, __VA_ARGS__)                                                     \
    FAKECUDA_ACCEPT(ptsz, params, __VA_ARGS__)
FAKECUDA_STREAM_TWINS(cuStreamSynchronize, cuStreamSynchronize_ptsz, (CUstream hStream),
                      { (void)hStream; })
FAKECUDA_STREAM_TWINS(cuStreamQuery, cuStreamQuery_ptsz, (CUstream hStream), { (void)hStream; })
FAKECUDA_STREAM_TWINS(cuStreamWaitEvent, cuStreamWaitEvent_ptsz,
                      (CUstream hStream, CUevent hEvent, unsigned int Flags), {
                          (void)hStream;
                          (void)Flags;
                          if (hEvent == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
                      })
FAKECUDA_STREAM_TWINS(cuStreamGetFlags, cuStreamGetFlags_ptsz,
                      (CUstream hStream, unsigned int* flags), {
                          const Stream* s = stream_of(hStream, false);
                          if (flags != nullptr) *flags = s != nullptr ? s->flags : 0;
                      })
FAKECUDA_STREAM_TWINS(cuStreamGetPriority, cuStreamGetPriority_ptsz,
                      (CUstream hStream, int* priority), {
                          const Stream* s = stream_of(hStream, false);
                          if (priority != nullptr) *priority = s != nullptr ? s->priority : 0;
                      })
FAKECUDA_STREAM_TWINS(cuStreamGetId, cuStreamGetId_ptsz,
                      (CUstream hStream, unsigned long long* streamId), {
                          const Stream* s = stream_of(hStream, false);
                          if (streamId != nullptr) *streamId = s != nullptr ? s->id : 1;
                      })
FAKECUDA_STREAM_TWINS(cuStreamGetDevice, cuStreamGetDevice_ptsz,
                      (CUstream hStream, CUdevice* device), {
                          const Stream* s = stream_of(hStream, false);
                          if (device != nullptr)
                              *device = s != nullptr && s != &t_per_thread
                                            ? s->device
                                            : fakecuda::current_device();
                      })
FAKECUDA_ACCEPT(cuStreamGetCtx, (CUstream hStream, CUcontext* pctx), {
    (void)hStream;
    if (pctx != nullptr) *pctx = fakecuda::primary_context(fakecuda::current_device());
})
FAKECUDA_STREAM_TWINS(cuStreamAddCallback, cuStreamAddCallback_ptsz,
                      (CUstream hStream, CUstreamCallback callback, void* userData,
                       unsigned int flags),
                      {
                          (void)flags;
                          if (callback == nullptr)
                              rc = CUDA_ERROR_INVALID_VALUE;
                          else
                              callback(hStream, CUDA_SUCCESS, userData);
                      })
FAKECUDA_STREAM_TWINS(cuStreamGetAttribute, cuStreamGetAttribute_ptsz,
                      (CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue* value_out), {
                          (void)hStream;
                          (void)attr;
                          if (value_out != nullptr) std::memset(value_out, 0, sizeof *value_out);
                      })
FAKECUDA_STREAM_TWINS(cuStreamSetAttribute, cuStreamSetAttribute_ptsz,
                      (CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue* value), {
                          (void)hStream;
                          (void)attr;
                          (void)value;
                      })

// --- stream capture --------------------------------------------------------------------------
FAKECUDA_STREAM_TWINS(cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz,
                      (CUstream hStream, CUstreamCaptureMode mode), {
                          (void)mode;
                          Stream* s = stream_of(hStream, false);
                          Graph* none = nullptr;
                          if (s == nullptr)
                              rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
                          else if (!s->capture.compare_exchange_strong(none, new Graph))
                              rc = CUDA_ERROR_ILLEGAL_STATE;
                      })
FAKECUDA_STREAM_TWINS(cuStreamEndCapture, cuStreamEndCapture_ptsz,
                      (CUstream hStream, CUgraph* phGraph), {
                          Stream* s = stream_of(hStream, false);
                          Graph* g = s != nullptr ? s->capture.exchange(nullptr) : nullptr;
                          if (g == nullptr)
                              rc = CUDA_ERROR_ILLEGAL_STATE;
                          else if (phGraph != nullptr)
                              *phGraph = reinterpret_cast<CUgraph>(g);
                      })
FAKECUDA_STREAM_TWINS(cuStreamGetCaptureInfo_v3, cuStreamGetCaptureInfo_v3_ptsz,
                      (CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                       cuuint64_t* id_out, CUgraph* graph_out, const CUgraphNode** dependencies_out,
                       const CUgraphEdgeData** edgeData_out, size_t* numDependencies_out),
                      {
                          Stream* s = stream_of(hStream, false);
                          Graph* g = s != nullptr ? s->capture.load() : nullptr;
                          if (captureStatus_out != nullptr)
                              *captureStatus_out = g != nullptr ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                                                : CU_STREAM_CAPTURE_STATUS_NONE;
                          if (id_out != nullptr) *id_out = s != nullptr ? s->id : 0;
                          if (graph_out != nullptr) *graph_out = reinterpret_cast<CUgraph>(g);
                          if (dependencies_out != nullptr) *dependencies_out = nullptr;
                          if (edgeData_out != nullptr) *edgeData_out = nullptr;
                          if (numDependencies_out != nullptr) *numDependencies_out = 0;
                      })
// The older capture-info ABIs, which the real driver still exports (cuBLASLt dlsyms _v2).
#define FAKECUDA_CAPTURE_INFO_V2_BODY                                                              \
    {                                                                                              \
        Stream* s = stream_of(hStream, false);                                                     \
        Graph* g = s != nullptr ? s->capture.load() : nullptr;                                     \
        if (captureStatus_out != nullptr)                                                          \
            *captureStatus_out =                                                                   \
                g != nullptr ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;    \
        if (id_out != nullptr) *id_out = s != nullptr ? s->id : 0;                                 \
        if (graph_out != nullptr) *graph_out = reinterpret_cast<CUgraph>(g);                       \
        if (dependencies_out != nullptr) *dependencies_out = nullptr;                              \
        if (numDependencies_out != nullptr) *numDependencies_out = 0;                              \
    }
FAKECUDA_STREAM_TWINS(cuStreamGetCaptureInfo_v2, cuStreamGetCaptureInfo_v2_ptsz,
                      (CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                       cuuint64_t* id_out, CUgraph* graph_out, const CUgraphNode** dependencies_out,
                       size_t* numDependencies_out),
                      FAKECUDA_CAPTURE_INFO_V2_BODY)
FAKECUDA_STREAM_TWINS(cuStreamGetCaptureInfo, cuStreamGetCaptureInfo_ptsz,
                      (CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                       cuuint64_t* id_out),
                      {
                          CUgraph* graph_out = nullptr;
                          const CUgraphNode** dependencies_out = nullptr;
                          size_t* numDependencies_out = nullptr;
                          FAKECUDA_CAPTURE_INFO_V2_BODY
                      })
FAKECUDA_ACCEPT(cuThreadExchangeStreamCaptureMode, (CUstreamCaptureMode * mode), { (void)mode; })

// --- graphs ----------------------------------------------------------------------------------
FAKECUDA_ACCEPT(cuGraphCreate, (CUgraph * phGraph, unsigned int flags), {
    (void)flags;
    if (phGraph == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *phGraph = reinterpret_cast<CUgraph>(new Graph);
})
FAKECUDA_ACCEPT(cuGraphDestroy, (CUgraph hGraph), {
    if (hGraph == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
})
FAKECUDA_ACCEPT(cuGraphAddMemAllocNode,
                (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                 size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams),
                {
                    (void)dependencies;
                    (void)numDependencies;
                    if (hGraph == nullptr || nodeParams == nullptr ||
                        nodeParams->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        rc = alloc_node(reinterpret_cast<Graph*>(hGraph), phGraphNode,
                                        &nodeParams->dptr, nodeParams->bytesize,
                                        nodeParams->poolProps.location.id);
                })
FAKECUDA_ACCEPT(cuGraphAddMemFreeNode,
                (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                 size_t numDependencies, CUdeviceptr dptr),
                {
                    (void)dependencies;
                    (void)numDependencies;
                    if (hGraph == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        rc = free_node(reinterpret_cast<Graph*>(hGraph), phGraphNode, dptr);
                })
FAKECUDA_ACCEPT(cuGraphAddEmptyNode,
                (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                 size_t numDependencies),
                {
                    (void)dependencies;
                    (void)numDependencies;
                    if (hGraph == nullptr || phGraphNode == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *phGraphNode = reinterpret_cast<CUgraphNode>(add_node(
                            reinterpret_cast<Graph*>(hGraph), CU_GRAPH_NODE_TYPE_EMPTY, 0, 0));
                })
FAKECUDA_ACCEPT(cuGraphAddKernelNode_v2,
                (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                 size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS* nodeParams),
                {
                    (void)dependencies;
                    (void)numDependencies;
                    if (hGraph == nullptr || phGraphNode == nullptr || nodeParams == nullptr) {
                        rc = CUDA_ERROR_INVALID_VALUE;
                    } else {
                        Node* n = add_node(reinterpret_cast<Graph*>(hGraph),
                                           CU_GRAPH_NODE_TYPE_KERNEL, 0, 0);
                        n->kernel = *nodeParams;
                        *phGraphNode = reinterpret_cast<CUgraphNode>(n);
                    }
                })
// Kernel node parameters, in the CUDA 12 layout and the CUDA 10 one (no kern, no ctx) that the
// real driver still exports under the unsuffixed names (cuBLASLt dlsyms those).
FAKECUDA_ACCEPT(cuGraphKernelNodeGetParams_v2,
                (CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS* nodeParams), {
                    const auto* n = reinterpret_cast<const Node*>(hNode);
                    if (n == nullptr || nodeParams == nullptr ||
                        n->type != CU_GRAPH_NODE_TYPE_KERNEL)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *nodeParams = n->kernel;
                })
FAKECUDA_ACCEPT(
    cuGraphKernelNodeGetParams, (CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1* nodeParams), {
        const auto* n = reinterpret_cast<const Node*>(hNode);
        if (n == nullptr || nodeParams == nullptr || n->type != CU_GRAPH_NODE_TYPE_KERNEL) {
            rc = CUDA_ERROR_INVALID_VALUE;
        } else {
            const CUDA_KERNEL_NODE_PARAMS& k = n->kernel;
            *nodeParams = {k.func,      k.gridDimX,  k.gridDimY,       k.gridDimZ,     k.blockDimX,
                           k.blockDimY, k.blockDimZ, k.sharedMemBytes, k.kernelParams, k.extra};
        }
    })
FAKECUDA_ACCEPT(cuGraphExecKernelNodeSetParams_v2,
                (CUgraphExec hGraphExec, CUgraphNode hNode,
                 const CUDA_KERNEL_NODE_PARAMS* nodeParams),
                {
                    auto* n = reinterpret_cast<Node*>(hNode);
                    if (hGraphExec == nullptr || n == nullptr || nodeParams == nullptr ||
                        n->type != CU_GRAPH_NODE_TYPE_KERNEL)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        n->kernel = *nodeParams;
                })
FAKECUDA_ACCEPT(cuGraphExecKernelNodeSetParams,
                (CUgraphExec hGraphExec, CUgraphNode hNode,
                 const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams),
                {
                    auto* n = reinterpret_cast<Node*>(hNode);
                    if (hGraphExec == nullptr || n == nullptr || nodeParams == nullptr ||
                        n->type != CU_GRAPH_NODE_TYPE_KERNEL) {
                        rc = CUDA_ERROR_INVALID_VALUE;
                    } else {
                        const CUDA_KERNEL_NODE_PARAMS_v1& k = *nodeParams;
                        n->kernel = {k.func,         k.gridDimX,  k.gridDimY,  k.gridDimZ,
                                     k.blockDimX,    k.blockDimY, k.blockDimZ, k.sharedMemBytes,
                                     k.kernelParams, k.extra,     nullptr,     nullptr};
                    }
                })
FAKECUDA_ACCEPT(cuGraphMemAllocNodeGetParams,
                (CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* params_out), {
                    const auto* n = reinterpret_cast<const Node*>(hNode);
                    if (n == nullptr || params_out == nullptr ||
                        n->type != CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
                        rc = CUDA_ERROR_INVALID_VALUE;
                    } else {
                        std::memset(params_out, 0, sizeof *params_out);
                        params_out->dptr = n->dptr;
                        params_out->bytesize = n->bytes;
                    }
                })
FAKECUDA_ACCEPT(cuGraphMemFreeNodeGetParams, (CUgraphNode hNode, CUdeviceptr* dptr_out), {
    const auto* n = reinterpret_cast<const Node*>(hNode);
    if (n == nullptr || dptr_out == nullptr || n->type != CU_GRAPH_NODE_TYPE_MEM_FREE)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *dptr_out = n->dptr;
})
FAKECUDA_ACCEPT(cuGraphNodeGetType, (CUgraphNode hNode, CUgraphNodeType* type), {
    if (hNode == nullptr || type == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *type = reinterpret_cast<const Node*>(hNode)->type;
})
FAKECUDA_ACCEPT(cuGraphGetNodes, (CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes), {
    auto* g = reinterpret_cast<Graph*>(hGraph);
    if (g == nullptr || numNodes == nullptr) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        std::lock_guard lock(g->mutex);
        if (nodes != nullptr)
            for (std::size_t i = 0; i < *numNodes && i < g->nodes.size(); ++i)
                nodes[i] = reinterpret_cast<CUgraphNode>(g->nodes[i]);
        *numNodes = g->nodes.size();
    }
})
FAKECUDA_ACCEPT(cuGraphDestroyNode, (CUgraphNode hNode), {
    if (hNode == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
})
FAKECUDA_ACCEPT(cuGraphInstantiateWithFlags,
                (CUgraphExec * phGraphExec, CUgraph hGraph, unsigned long long flags), {
                    (void)flags;
                    if (phGraphExec == nullptr || hGraph == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *phGraphExec = reinterpret_cast<CUgraphExec>(hGraph);
                })
// The CUDA 10 and 11 forms, with an error node and a log; still exported by the real driver.
#define FAKECUDA_GRAPH_INSTANTIATE_V1_BODY                                                         \
    {                                                                                              \
        if (phErrorNode != nullptr) *phErrorNode = nullptr;                                        \
        if (logBuffer != nullptr && bufferSize > 0) logBuffer[0] = '\0';                           \
        if (phGraphExec == nullptr || hGraph == nullptr)                                           \
            rc = CUDA_ERROR_INVALID_VALUE;                                                         \
        else                                                                                       \
            *phGraphExec = reinterpret_cast<CUgraphExec>(hGraph);                                  \
    }
FAKECUDA_ACCEPT(cuGraphInstantiate,
                (CUgraphExec * phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                 char* logBuffer, size_t bufferSize),
                FAKECUDA_GRAPH_INSTANTIATE_V1_BODY)
FAKECUDA_ACCEPT(cuGraphInstantiate_v2,
                (CUgraphExec * phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                 char* logBuffer, size_t bufferSize),
                FAKECUDA_GRAPH_INSTANTIATE_V1_BODY)
FAKECUDA_STREAM_TWINS(cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_ptsz,
                      (CUgraphExec * phGraphExec, CUgraph hGraph,
                       CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams),
                      {
                          if (phGraphExec == nullptr || hGraph == nullptr) {
                              rc = CUDA_ERROR_INVALID_VALUE;
                          } else {
                              *phGraphExec = reinterpret_cast<CUgraphExec>(hGraph);
                              if (instantiateParams != nullptr)
                                  instantiateParams->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
                          }
                      })
FAKECUDA_STREAM_TWINS(cuGraphLaunch, cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream),
                      {
                          (void)hStream;
                          if (hGraphExec == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
                      })
FAKECUDA_STREAM_TWINS(cuGraphUpload, cuGraphUpload_ptsz, (CUgraphExec hGraphExec, CUstream hStream),
                      {
                          (void)hStream;
                          if (hGraphExec == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
                      })
FAKECUDA_ACCEPT(cuGraphExecDestroy, (CUgraphExec hGraphExec), {
    if (hGraphExec == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
})
FAKECUDA_ACCEPT(cuDeviceGraphMemTrim, (CUdevice device), {
    if (!fakecuda::valid_device(device)) rc = CUDA_ERROR_INVALID_DEVICE;
})

// --- events ----------------------------------------------------------------------------------
FAKECUDA_ACCEPT(cuEventCreate, (CUevent * phEvent, unsigned int Flags), {
    if (phEvent == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *phEvent = reinterpret_cast<CUevent>(new Event{Flags});
})
FAKECUDA_ACCEPT(cuEventDestroy_v2, (CUevent hEvent), {
    if (hEvent == nullptr)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else
        delete reinterpret_cast<Event*>(hEvent);
})
FAKECUDA_STREAM_TWINS(cuEventRecord, cuEventRecord_ptsz, (CUevent hEvent, CUstream hStream), {
    (void)hStream;
    if (hEvent == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
})
FAKECUDA_STREAM_TWINS(cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz,
                      (CUevent hEvent, CUstream hStream, unsigned int flags), {
                          (void)hStream;
                          (void)flags;
                          if (hEvent == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
                      })
FAKECUDA_ACCEPT(cuEventQuery, (CUevent hEvent), {
    if (hEvent == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
})
FAKECUDA_ACCEPT(cuEventSynchronize, (CUevent hEvent), {
    if (hEvent == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
})
FAKECUDA_ACCEPT(cuEventElapsedTime, (float* pMilliseconds, CUevent hStart, CUevent hEnd), {
    if (pMilliseconds == nullptr || hStart == nullptr || hEnd == nullptr)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else
        *pMilliseconds = 0.5f;
})
FAKECUDA_ACCEPT(cuEventElapsedTime_v2, (float* pMilliseconds, CUevent hStart, CUevent hEnd), {
    if (pMilliseconds == nullptr || hStart == nullptr || hEnd == nullptr)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else
        *pMilliseconds = 0.5f;
})

// --- copies and memsets (plain / per-thread twins) ---------------------------------------------
FAKECUDA_STREAM_TWINS(cuMemcpy, cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount),
                      { rc = copy(ptr(dst), ptr(src), ByteCount); })
FAKECUDA_STREAM_TWINS(cuMemcpyAsync, cuMemcpyAsync_ptsz,
                      (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream), {
                          (void)hStream;
                          rc = copy(ptr(dst), ptr(src), ByteCount);
                      })
FAKECUDA_STREAM_TWINS(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds,
                      (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount),
                      { rc = copy(ptr(dstDevice), srcHost, ByteCount); })
FAKECUDA_STREAM_TWINS(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds,
                      (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount),
                      { rc = copy(dstHost, ptr(srcDevice), ByteCount); })
FAKECUDA_STREAM_TWINS(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds,
                      (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
                      { rc = copy(ptr(dstDevice), ptr(srcDevice), ByteCount); })
FAKECUDA_STREAM_TWINS(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz,
                      (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount,
                       CUstream hStream),
                      {
                          (void)hStream;
                          rc = copy(ptr(dstDevice), srcHost, ByteCount);
                      })
FAKECUDA_STREAM_TWINS(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz,
                      (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream), {
                          (void)hStream;
                          rc = copy(dstHost, ptr(srcDevice), ByteCount);
                      })
FAKECUDA_STREAM_TWINS(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz,
                      (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                       CUstream hStream),
                      {
                          (void)hStream;
                          rc = copy(ptr(dstDevice), ptr(srcDevice), ByteCount);
                      })
FAKECUDA_STREAM_TWINS(cuMemcpy2D_v2, cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D* pCopy),
                      { rc = copy2d(pCopy); })
FAKECUDA_STREAM_TWINS(cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned_v2_ptds,
                      (const CUDA_MEMCPY2D* pCopy), { rc = copy2d(pCopy); })
FAKECUDA_STREAM_TWINS(cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz,
                      (const CUDA_MEMCPY2D* pCopy, CUstream hStream), {
                          (void)hStream;
                          rc = copy2d(pCopy);
                      })
FAKECUDA_STREAM_TWINS(cuMemcpy3D_v2, cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D* pCopy),
                      { rc = copy3d(pCopy); })
FAKECUDA_STREAM_TWINS(cuMemcpy3DAsync_v2, cuMemcpy3DAsync_v2_ptsz,
                      (const CUDA_MEMCPY3D* pCopy, CUstream hStream), {
                          (void)hStream;
                          rc = copy3d(pCopy);
                      })
FAKECUDA_STREAM_TWINS(cuMemsetD8_v2, cuMemsetD8_v2_ptds,
                      (CUdeviceptr dstDevice, unsigned char uc, size_t N),
                      { rc = fill(dstDevice, uc, N); })
FAKECUDA_STREAM_TWINS(cuMemsetD32_v2, cuMemsetD32_v2_ptds,
                      (CUdeviceptr dstDevice, unsigned int ui, size_t N),
                      { rc = fill(dstDevice, ui, N); })
FAKECUDA_STREAM_TWINS(cuMemsetD8Async, cuMemsetD8Async_ptsz,
                      (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream), {
                          (void)hStream;
                          rc = fill(dstDevice, uc, N);
                      })
FAKECUDA_STREAM_TWINS(cuMemsetD32Async, cuMemsetD32Async_ptsz,
                      (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream), {
                          (void)hStream;
                          rc = fill(dstDevice, ui, N);
                      })
FAKECUDA_STREAM_TWINS(cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds,
                      (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                       size_t Height),
                      { rc = fill2d(dstDevice, dstPitch, uc, Width, Height); })
FAKECUDA_STREAM_TWINS(cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz,
                      (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                       size_t Height, CUstream hStream),
                      {
                          (void)hStream;
                          rc = fill2d(dstDevice, dstPitch, uc, Width, Height);
                      })
FAKECUDA_STREAM_TWINS(cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds,
                      (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                       size_t Height),
                      { rc = fill2d(dstDevice, dstPitch, ui, Width, Height); })

// --- stream memory operations ------------------------------------------------------------------
// Work completes when issued, so a wait finds whatever the memory holds and goes on; writes
// happen at once. The first ABI (8.0) and the second (11.7) take the same arguments.
namespace {

CUresult batch_mem_op(unsigned count, const CUstreamBatchMemOpParams* ops) {
    if (count > 0 && ops == nullptr) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < count; ++i) {
        const CUstreamBatchMemOpParams& op = ops[i];
        switch (op.operation) {
        case CU_STREAM_MEM_OP_WRITE_VALUE_32:
            std::memcpy(ptr(op.writeValue.address), &op.writeValue.value, 4);
            break;
        case CU_STREAM_MEM_OP_WRITE_VALUE_64:
            std::memcpy(ptr(op.writeValue.address), &op.writeValue.value64, 8);
            break;
        case CU_STREAM_MEM_OP_WAIT_VALUE_32:
        case CU_STREAM_MEM_OP_WAIT_VALUE_64:
        case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
        case CU_STREAM_MEM_OP_BARRIER:
            break;
        default:
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

} // namespace

#define FAKECUDA_MEM_OP_PARAMS                                                                     \
    (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
#define FAKECUDA_WAIT_BODY                                                                         \
    {                                                                                              \
        (void)stream, (void)value, (void)flags;                                                    \
        if (addr == 0) rc = CUDA_ERROR_INVALID_VALUE;                                              \
    }
#define FAKECUDA_WRITE_BODY                                                                        \
    {                                                                                              \
        (void)stream, (void)flags;                                                                 \
        if (addr == 0)                                                                             \
            rc = CUDA_ERROR_INVALID_VALUE;                                                         \
        else                                                                                       \
            std::memcpy(ptr(addr), &value, sizeof value);                                          \
    }
FAKECUDA_STREAM_TWINS(cuStreamWaitValue32, cuStreamWaitValue32_ptsz, FAKECUDA_MEM_OP_PARAMS,
                      FAKECUDA_WAIT_BODY)
FAKECUDA_ACCEPT(cuStreamWaitValue32_v2, FAKECUDA_MEM_OP_PARAMS, FAKECUDA_WAIT_BODY)
FAKECUDA_STREAM_TWINS(cuStreamWriteValue32, cuStreamWriteValue32_ptsz, FAKECUDA_MEM_OP_PARAMS,
                      FAKECUDA_WRITE_BODY)
FAKECUDA_ACCEPT(cuStreamWriteValue32_v2, FAKECUDA_MEM_OP_PARAMS, FAKECUDA_WRITE_BODY)
#define FAKECUDA_BATCH_PARAMS                                                                      \
    (CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray, unsigned int flags)
#define FAKECUDA_BATCH_BODY                                                                        \
    {                                                                                              \
        (void)stream, (void)flags;                                                                 \
        rc = batch_mem_op(count, paramArray);                                                      \
    }
FAKECUDA_STREAM_TWINS(cuStreamBatchMemOp, cuStreamBatchMemOp_ptsz, FAKECUDA_BATCH_PARAMS,
                      FAKECUDA_BATCH_BODY)
FAKECUDA_ACCEPT(cuStreamBatchMemOp_v2, FAKECUDA_BATCH_PARAMS, FAKECUDA_BATCH_BODY)

// Prefetching moves nothing: managed memory is host memory here. CUDA 8 form (a device or
// CU_DEVICE_CPU) and CUDA 12.2 form (a location).
FAKECUDA_STREAM_TWINS(cuMemPrefetchAsync, cuMemPrefetchAsync_ptsz,
                      (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream), {
                          (void)hStream;
                          if (devPtr == 0 || count == 0 ||
                              (dstDevice != CU_DEVICE_CPU && !fakecuda::valid_device(dstDevice)))
                              rc = CUDA_ERROR_INVALID_VALUE;
                      })
FAKECUDA_ACCEPT(cuMemPrefetchAsync_v2,
                (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                 CUstream hStream),
                {
                    (void)location, (void)flags, (void)hStream;
                    if (devPtr == 0 || count == 0) rc = CUDA_ERROR_INVALID_VALUE;
                })
