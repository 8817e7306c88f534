// NVIDIA's real CUDA runtime (libcudart.so.13 shared, libcudart_static.a) and cuBLAS, in programs
// built by the real nvcc (tests/real_cuda), run on the fake driver with and without libgpuleak.so:
// exit status and output must be identical, every allocation path must be recorded with its size,
// kind and function, and the trace's counts must equal the driver's own (printed by the program).
// Without a CUDA toolkit at build time these tests skip, saying why.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "e2e_support.h"

namespace gpuleak::e2e {
namespace {

std::string real_dir() {
    return Paths::build() + "/tests/real_cuda";
}

// Empty when the programs exist; otherwise why they were not built (SKIPPED: no toolkit at all;
// PROGRAM.SKIPPED: a library that program needs is missing).
std::string skip_reason(const std::string& program) {
    for (const std::string& file :
         {real_dir() + "/SKIPPED", real_dir() + "/" + program + ".SKIPPED"}) {
        std::ifstream skipped(file);
        if (!skipped) continue;
        std::stringstream why;
        why << skipped.rdbuf();
        return why.str();
    }
    if (!std::ifstream(real_dir() + "/" + program)) return program + " was not built";
    return "";
}

RunOptions real_options(bool preload, const std::map<std::string, std::string>& env = {}) {
    RunOptions o;
    o.preload = preload;
    o.uninstrumented_program = true;
    o.env = env;
    // The real libcudart dlopens libcuda.so.1 through its own RUNPATH, never the program's.
    o.env["LD_LIBRARY_PATH"] = Paths::build() + "/tests/fake_driver_only";
    return o;
}

// "driver-calls a=1 b=2" -> {a: 1, b: 2}
std::map<std::string, long> driver_calls(const std::string& output) {
    std::map<std::string, long> calls;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("driver-calls ", 0) != 0) continue;
        std::istringstream words(line.substr(13));
        for (std::string w; words >> w;) {
            auto eq = w.find('=');
            calls[w.substr(0, eq)] = std::stol(w.substr(eq + 1));
        }
    }
    return calls;
}

long sum(const std::map<std::string, long>& calls, std::initializer_list<const char*> names) {
    long total = 0;
    for (const char* n : names) {
        auto it = calls.find(n);
        EXPECT_NE(it, calls.end()) << n;
        if (it != calls.end()) total += it->second;
    }
    return total;
}

struct Traced {
    RunResult plain, traced;
    Json report;
};

// Runs `program` both ways (with `env` added); fails the test unless both exit 0 with the same
// output.
Traced run_both(const std::string& program, const std::map<std::string, std::string>& env = {}) {
    Traced t;
    t.plain = run({real_dir() + "/" + program}, real_options(false, env));
    EXPECT_EQ(t.plain.exit_code, 0) << t.plain.output;
    t.traced = run({real_dir() + "/" + program}, real_options(true, env));
    EXPECT_EQ(t.traced.exit_code, t.plain.exit_code) << t.traced.output;
    EXPECT_EQ(t.traced.output, t.plain.output);
    EXPECT_EQ(t.traced.traces.size(), 1u) << t.traced.output;
    if (t.traced.traces.size() == 1) t.report = report(t.traced.traces[0]);
    return t;
}

// The one site whose frames mention `function`.
const Json& site_of(const Json& rep, const std::string& function) {
    static const Json none;
    std::vector<const Json*> found = sites_mentioning(rep, function);
    EXPECT_EQ(found.size(), 1u) << function << " in\n" << rep["sites"].dump(1);
    return found.size() == 1 ? *found[0] : none;
}

struct ExpectedPath {
    const char* function;
    const char* kind;
    uint64_t bytes;
    bool freed;
    const char* shared_api; // with the shared runtime: the runtime call's tag, or the driver's
    const char* static_api; // with the static runtime: always the driver entry point
};

const ExpectedPath kPaths[] = {
    {"real_device_leak", "device", 1000001, false, "cudaMalloc", "cuMemAlloc_v2"},
    {"real_kernel_transient", "device", 1000002, true, "cudaMalloc", "cuMemAlloc_v2"},
    {"real_async_leak", "device", 1000003, false, "cudaMallocAsync", "cuMemAllocAsync"},
    {"real_pool_transient", "device", 1000004, true, "cudaMallocFromPoolAsync",
     "cuMemAllocFromPoolAsync"},
    {"real_managed_leak", "managed", 1000005, false, "cudaMallocManaged", "cuMemAllocManaged"},
    {"real_host_leak", "pinned_host", 1000006, false, "cudaMallocHost", "cuMemHostAlloc"},
    {"real_pitch_leak", "device", 7168, false, "cudaMallocPitch", "cuMemAllocPitch_v2"},
    {"real_3d_leak", "device", 6144, false, "cudaMalloc3D", "cuMemAllocPitch_v2"},
    {"real_array_leak", "array", 16384, false, "cudaMallocArray", "cuArray3DCreate_v2"},
    {"real_array3d_transient", "array", 8192, true, "cudaMalloc3DArray", "cuArray3DCreate_v2"},
    {"real_mipmap_transient", "array", 21504, true, "cuMipmappedArrayCreate",
     "cuMipmappedArrayCreate"},
    {"real_register_transient", "host_registered", 65536, true, "cudaHostRegister",
     "cuMemHostRegister_v2"},
    {"real_capture_leak", "graph", 1000007, false, "cudaMallocAsync", "cuMemAllocAsync"},
    {"real_graph_transient", "graph", 1000008, true, "cuGraphAddMemAllocNode",
     "cuGraphAddMemAllocNode"},
    {"real_ipc_transient", "imported", 1000001, true, "cuIpcOpenMemHandle_v2",
     "cuIpcOpenMemHandle_v2"},
    {"real_import_kept", "imported", 1000003, false, "cuMemPoolImportPointer",
     "cuMemPoolImportPointer"},
    {"real_external_transient", "imported", 65536, true, "cuExternalMemoryGetMappedBuffer",
     "cuExternalMemoryGetMappedBuffer"},
};

class RealRuntime : public testing::TestWithParam<std::string> {};

TEST_P(RealRuntime, EveryAllocationPathIsTracedAsTheDriverCountsIt) {
    const std::string program = GetParam();
    if (std::string why = skip_reason(program); !why.empty()) GTEST_SKIP() << why;
    Traced t = run_both(program);
    ASSERT_FALSE(t.report.is_null());
    const bool is_static = program == "real_paths_static";
    for (const ExpectedPath& p : kPaths) {
        SCOPED_TRACE(p.function);
        const Json& s = site_of(t.report, p.function);
        if (s.is_null()) continue;
        EXPECT_EQ(s["kinds"], Json::array({p.kind}));
        // The user's line heads the site, also when the runtime is linked into the program: its
        // internal functions (libcudart_static_<hash>) and API entry are not the program's code.
        EXPECT_EQ(s["headline"]["function"], p.function) << s["frames"].dump(1);
        EXPECT_EQ(s["headline"]["file"].get<std::string>().substr(
                      s["headline"]["file"].get<std::string>().rfind('/') + 1),
                  "real_paths.cu");
        EXPECT_EQ(s["headline"]["reason"], "first frame in the program's own code");
        EXPECT_EQ(s["allocations"], 1);
        EXPECT_EQ(s["bytes_allocated"], p.bytes);
        EXPECT_EQ(s["frees"], p.freed ? 1 : 0);
        EXPECT_EQ(s["apis"], Json::array({is_static ? p.static_api : p.shared_api}));
        // Imported memory is never this process's: not in its live device memory.
        uint64_t live = p.freed || std::string(p.kind) == "imported" ? 0 : p.bytes;
        const char* field = std::string(p.kind) == "managed"       ? "managed_live_bytes_end"
                            : std::string(p.kind) == "pinned_host" ? "pinned_live_bytes_end"
                                                                   : "live_bytes_end";
        EXPECT_EQ(s[field], live);
    }
    // The trace's counts are the driver's.
    auto calls = driver_calls(t.plain.output);
    const Json& summary = t.report["summary"];
    EXPECT_EQ(
        summary["allocations"],
        sum(calls, {"cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocAsync_ptsz",
                    "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz", "cuMemAllocManaged",
                    "cuMemHostAlloc", "cuMemAllocHost_v2", "cuMemAllocPitch_v2", "cuArrayCreate_v2",
                    "cuArray3DCreate_v2", "cuMipmappedArrayCreate", "cuMemHostRegister_v2",
                    "cuGraphAddMemAllocNode", "cuIpcOpenMemHandle_v2", "cuMemPoolImportPointer",
                    "cuExternalMemoryGetMappedBuffer", "cuMemCreate"}));
    EXPECT_EQ(summary["frees"].get<long>() + summary["unknown_frees"].get<long>() +
                  summary["failed_frees"].get<long>(),
              sum(calls, {"cuMemFree_v2", "cuMemFreeAsync", "cuMemFreeAsync_ptsz", "cuMemFreeHost",
                          "cuArrayDestroy", "cuMipmappedArrayDestroy", "cuMemHostUnregister",
                          "cuGraphAddMemFreeNode", "cuIpcCloseMemHandle"}));
    EXPECT_EQ(summary["unknown_frees"], 0);
    EXPECT_EQ(summary["failed_allocations"], 0);
    // device + array + graph memory left live: the leaks above.
    EXPECT_EQ(summary["live_bytes_end"], 1000001 + 1000003 + 7168 + 6144 + 16384 + 1000007);
}

INSTANTIATE_TEST_SUITE_P(Builds, RealRuntime,
                         testing::Values("real_paths_shared", "real_paths_static"));

// "NAME a=1 b=2" -> {a: 1, b: 2}; "NAME 7" -> {"": 7}.
std::map<std::string, long> line_values(const std::string& output, const std::string& name) {
    std::map<std::string, long> values;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(name + " ", 0) != 0) continue;
        std::istringstream words(line.substr(name.size() + 1));
        for (std::string w; words >> w;) {
            auto eq = w.find('=');
            if (eq == std::string::npos)
                values[""] = std::stol(w);
            else
                values[w.substr(0, eq)] = std::stol(w.substr(eq + 1));
        }
    }
    return values;
}

// cuBLAS on the fake driver: cublasCreate makes its own device memory (its workspace and state),
// a GEMM picks a kernel and launches it, cublasDestroy gives the memory back. The driver runs no
// kernel, so the product is not computed and nothing here looks at it; what is checked is that
// every allocation cuBLAS made is in the trace, attributed to cublasCreate, with the bytes the
// driver counted, and freed.
TEST(RealRuntime, CublasWorkspaceAndGemmAreTraced) {
    if (std::string why = skip_reason("real_cublas"); !why.empty()) GTEST_SKIP() << why;
    Traced t = run_both("real_cublas");
    ASSERT_FALSE(t.report.is_null());
    const std::string& out = t.plain.output;
    for (const char* step : {"cublasCreate 0\n", "cublasSgemm 0\n", "cublasDestroy 0\n",
                             "cudaDeviceSynchronize 0\n", "failures 0\n"})
        EXPECT_NE(out.find(step), std::string::npos) << step << "in\n" << out;

    auto calls = driver_calls(out);
    const Json& summary = t.report["summary"];
    long allocs =
        sum(calls, {"cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocAsync_ptsz",
                    "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz", "cuMemAllocManaged",
                    "cuMemHostAlloc", "cuMemAllocHost_v2", "cuMemAllocPitch_v2", "cuMemCreate"});
    EXPECT_EQ(summary["allocations"], allocs);
    EXPECT_EQ(summary["unknown_frees"], 0);
    EXPECT_EQ(summary["failed_allocations"], 0);
    EXPECT_EQ(summary["live_bytes_end"], 0);

    // The program's own matrices.
    const Json& matrices = site_of(t.report, "real_cublas_matrices");
    EXPECT_EQ(matrices["allocations"], 3);
    EXPECT_EQ(matrices["bytes_allocated"], 3 * 64 * 64 * 4);
    EXPECT_EQ(matrices["frees"], 3);

    // cuBLAS's own memory: what the driver saw allocated inside cublasCreate is exactly what the
    // trace attributes to cublasCreate_v2, and cublasDestroy freed all of it.
    auto own = line_values(out, "cublas-own");
    ASSERT_TRUE(own.count("bytes") && own.count("allocations")) << out;
    EXPECT_GT(own["allocations"], 0) << "cuBLAS allocated nothing of its own";
    EXPECT_EQ(line_values(out, "cublas-left-after-destroy")[""], 0);
    int64_t cublas_bytes = 0, cublas_allocs = 0, cublas_frees = 0;
    for (const Json* s : sites_mentioning(t.report, "cublasCreate_v2")) {
        cublas_bytes += (*s)["bytes_allocated"].get<int64_t>();
        cublas_allocs += (*s)["allocations"].get<int64_t>();
        cublas_frees += (*s)["frees"].get<int64_t>();
        EXPECT_EQ((*s)["kinds"], Json::array({"device"}));
        EXPECT_EQ((*s)["live_bytes_end"], 0);
    }
    EXPECT_EQ(cublas_bytes, own["bytes"]) << t.report["sites"].dump(1);
    EXPECT_EQ(cublas_allocs, own["allocations"]);
    EXPECT_EQ(cublas_frees, own["allocations"]);
    // Every allocation is either the program's or cuBLAS's.
    EXPECT_EQ(summary["allocations"].get<int64_t>(), 3 + cublas_allocs);

    // The GEMM ran as far as a kernel launch (cuBLAS found an algorithm for the device).
    EXPECT_GE(line_values(out, "gemm-launches")[""], 1) << out;
}

// NCCL on the fake driver and the fake NVML: one communicator on one device, an all-reduce, the
// communicator destroyed. NCCL's own memory (194 VMM chunks and 4 pinned host buffers on this
// driver) comes from the driver directly, never through the program's allocator: the trace must
// hold every byte of it, attributed to the NCCL call that made it, and see it all freed by
// ncclCommDestroy. The driver runs no kernel; with one rank the all-reduce launches none anyway.
TEST(RealRuntime, NcclBuffersAreTracedAndAttributedToTheNcclCall) {
    if (std::string why = skip_reason("real_nccl"); !why.empty()) GTEST_SKIP() << why;
    // Bootstrap over loopback: the machine's other interfaces are none of the test's business.
    Traced t = run_both("real_nccl", {{"NCCL_SOCKET_IFNAME", "lo"}});
    ASSERT_FALSE(t.report.is_null());
    const std::string& out = t.plain.output;
    for (const char* step :
         {"ncclCommInitAll 0\n", "ncclAllReduce 0\n", "ncclCommDestroy 0\n", "failures 0\n"})
        ASSERT_NE(out.find(step), std::string::npos) << step << "in\n" << out;

    std::map<std::string, long> init;
    {
        std::istringstream lines(out);
        for (std::string line; std::getline(lines, line);)
            if (line.rfind("phase init ", 0) == 0) init = line_values(line, "phase init");
    }
    ASSERT_GT(init["creates"], 0) << "NCCL made no VMM allocation\n" << out;
    EXPECT_EQ(line_values(out, "left")["device"], 0);
    EXPECT_EQ(line_values(out, "left")["pinned"], 0);

    // The trace's counts are the driver's.
    auto calls = driver_calls(out);
    const Json& summary = t.report["summary"];
    EXPECT_EQ(
        summary["allocations"],
        sum(calls, {"cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocAsync_ptsz",
                    "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz", "cuMemAllocManaged",
                    "cuMemHostAlloc", "cuMemAllocHost_v2", "cuMemAllocPitch_v2", "cuMemCreate"}));
    EXPECT_EQ(summary["unknown_frees"], 0);
    EXPECT_EQ(summary["failed_allocations"], 0);
    EXPECT_EQ(summary["live_bytes_end"], 0);
    EXPECT_EQ(summary["pinned_live_bytes_end"], 0);

    // Everything NCCL made inside ncclCommInitAll is attributed to it (NCCL defines its API as
    // pnccl* with the nccl* names as aliases; the symbolizer may name either): as many
    // allocations as the driver counted in that phase, its device memory (VMM chunks) and its
    // pinned host memory byte for byte, all of it freed.
    std::map<uint64_t, const Json*> nccl_sites;
    for (const char* name : {"ncclCommInitAll", "pncclCommInitAll"})
        for (const Json* s : sites_mentioning(t.report, name))
            nccl_sites[(*s)["id"].get<uint64_t>()] = s;
    int64_t allocations = 0, frees = 0, vmm_device_bytes = 0, host_alloc_bytes = 0;
    for (const auto& [id, s] : nccl_sites) {
        allocations += (*s)["allocations"].get<int64_t>();
        frees += (*s)["frees"].get<int64_t>();
        if ((*s)["kinds"] == Json::array({"device"}) &&
            (*s)["apis"] == Json::array({"cuMemCreate"}))
            vmm_device_bytes += (*s)["bytes_allocated"].get<int64_t>();
        if ((*s)["kinds"] == Json::array({"pinned_host"}) &&
            (*s)["apis"] == Json::array({"cuMemHostAlloc"}))
            host_alloc_bytes += (*s)["bytes_allocated"].get<int64_t>();
        EXPECT_EQ((*s)["live_bytes_end"], 0) << s->dump(1);
        EXPECT_EQ((*s)["pinned_live_bytes_end"], 0) << s->dump(1);
    }
    EXPECT_EQ(allocations, init["creates"] + init["host_allocs"] + init["allocs"])
        << t.report["sites"].dump(1);
    EXPECT_EQ(frees, allocations);
    EXPECT_EQ(vmm_device_bytes, init["device"]) << t.report["sites"].dump(1);
    EXPECT_EQ(host_alloc_bytes, init["pinned"]) << t.report["sites"].dump(1);
    // The program's own buffer is the program's.
    const Json& buffer = site_of(t.report, "real_nccl_buffer");
    EXPECT_EQ(buffer["allocations"], 1);
    EXPECT_EQ(buffer["bytes_allocated"], 4096);
    EXPECT_EQ(buffer["frees"], 1);
    // Every allocation of the run is the program's buffer or one of NCCL's init.
    EXPECT_EQ(summary["allocations"].get<int64_t>(), 1 + allocations);
}

} // namespace
} // namespace gpuleak::e2e
