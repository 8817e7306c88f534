#!/usr/bin/env python3
"""fake_torch's caching allocators against the rules of PyTorch's that the verdicts depend on: what
reaches the driver (segment sizes, reuse, splitting and merging, the retry after a failure; for
pinned host memory, blocks per power of two, never split).

usage: python3 caching_allocator_test.py   (ctest: python_scenarios.caching_allocator)
"""
import importlib.util
import os
import unittest

MIB = 1 << 20
FAKE_TORCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages", "fake_torch")


def load(name="CUDACachingAllocator"):
    """The module alone, read afresh (it reads the environment when loaded), without fake_torch's
    __init__, which loads the CUDA runtime."""
    spec = importlib.util.spec_from_file_location(name + "_under_test",
                                                  os.path.join(FAKE_TORCH, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


emulation = load()


class Driver:
    """cudaMalloc / cudaFree as the fake runtime answers them, with a capacity, and a log."""

    def __init__(self, capacity=1 << 40):
        self.capacity, self.used, self.next = capacity, 0, 1 << 32
        self.live, self.mallocs, self.frees = {}, [], []

    def cudaMalloc(self, out, size):
        if self.used + size > self.capacity:
            return 2
        ptr, self.next = self.next, self.next + size + MIB
        out._obj.value = ptr
        self.live[ptr] = size
        self.used += size
        self.mallocs.append(size)
        return 0

    def cudaFree(self, ptr):
        size = self.live.pop(ptr.value)
        self.used -= size
        self.frees.append(size)
        return 0


def cache(capacity=1 << 40):
    driver = Driver(capacity)
    return emulation.CachingAllocator(driver), driver


class SegmentsTest(unittest.TestCase):
    def test_small_requests_share_2_mib_segments(self):
        allocator, driver = cache()
        for _ in range(2048):
            allocator.malloc(1024)
        self.assertEqual(driver.mallocs, [2 * MIB])
        allocator.malloc(1024)
        self.assertEqual(driver.mallocs, [2 * MIB, 2 * MIB])

    def test_requests_rounded_to_512_bytes(self):
        allocator, driver = cache()
        for _ in range(4096):
            allocator.malloc(1)  # 512 B each: 4096 fill one segment
        self.assertEqual(driver.mallocs, [2 * MIB])

    def test_requests_of_1_to_10_mib_share_20_mib_segments(self):
        allocator, driver = cache()
        for _ in range(5):
            allocator.malloc(4 * MIB)
        self.assertEqual(driver.mallocs, [20 * MIB])
        allocator.malloc(4 * MIB)
        self.assertEqual(driver.mallocs, [20 * MIB, 20 * MIB])

    def test_larger_requests_get_a_segment_of_their_own(self):
        allocator, driver = cache()
        allocator.malloc(65 * MIB)
        allocator.malloc(11 * MIB + 1)
        self.assertEqual(driver.mallocs, [66 * MIB, 12 * MIB])


class ReuseTest(unittest.TestCase):
    def test_a_loop_that_frees_what_it_makes_asks_once(self):
        allocator, driver = cache()
        for _ in range(100):
            a, b = allocator.malloc(MIB), allocator.malloc(4 * MIB)
            allocator.free(a)
            allocator.free(b)
        self.assertEqual(driver.mallocs, [2 * MIB, 20 * MIB])
        self.assertEqual(driver.frees, [])

    def test_freed_neighbours_merge(self):
        allocator, driver = cache()
        blocks = [allocator.malloc(4 * MIB) for _ in range(5)]
        for b in blocks:
            allocator.free(b)
        allocator.malloc(9 * MIB)  # only the whole merged segment holds it
        self.assertEqual(driver.mallocs, [20 * MIB])

    def test_a_larger_request_than_any_freed_block_grows_the_cache(self):
        allocator, driver = cache()
        for size in (12 * MIB, 18 * MIB, 27 * MIB):
            allocator.free(allocator.malloc(size))
        self.assertEqual(driver.mallocs, [12 * MIB, 18 * MIB, 28 * MIB])


class FailureTest(unittest.TestCase):
    def test_a_failure_gives_back_free_segments_and_retries(self):
        allocator, driver = cache(capacity=40 * MIB)
        allocator.free(allocator.malloc(30 * MIB))
        ptr = allocator.malloc(34 * MIB)  # 30 MiB cached and free: given back, then it fits
        self.assertIsNotNone(ptr)
        self.assertEqual(driver.frees, [30 * MIB])
        self.assertEqual(driver.mallocs, [30 * MIB, 34 * MIB])

    def test_what_cannot_fit_even_then_fails(self):
        allocator, driver = cache(capacity=40 * MIB)
        allocator.malloc(10 * MIB + 1)  # held: 12 MiB
        self.assertIsNone(allocator.malloc(30 * MIB))


class UncachedTest(unittest.TestCase):
    def test_without_caching_each_tensor_is_a_malloc_and_a_free(self):
        os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
        try:
            uncached = load()
            driver = Driver()
            allocator = uncached.CachingAllocator(driver)
            for _ in range(3):
                allocator.free(allocator.malloc(1000))
            self.assertEqual(driver.mallocs, [1000, 1000, 1000])
            self.assertEqual(driver.frees, [1000, 1000, 1000])
        finally:
            del os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"]


class HostDriver:
    """cudaHostAlloc / cudaFreeHost as the fake runtime answers them, with a log."""

    def __init__(self):
        self.next, self.live, self.allocs, self.frees = 1 << 32, {}, [], []

    def cudaHostAlloc(self, out, size, flags):
        ptr, self.next = self.next, self.next + size
        out._obj.value = ptr
        self.live[ptr] = size
        self.allocs.append(size)
        return 0

    def cudaFreeHost(self, ptr):
        self.frees.append(self.live.pop(ptr.value))
        return 0


class HostCacheTest(unittest.TestCase):
    def setUp(self):
        self.driver = HostDriver()
        self.allocator = load("CachingHostAllocator").CachingHostAllocator(self.driver)

    def test_requests_are_rounded_to_powers_of_two(self):
        for nbytes in (1000, 1024, 1025, 3 * MIB):
            self.allocator.malloc(nbytes)
        self.assertEqual(self.driver.allocs, [1024, 1024, 2048, 4 * MIB])

    def test_a_freed_block_serves_its_power_of_two_only_and_is_never_split(self):
        big = self.allocator.malloc(MIB)
        self.allocator.free(big)
        small = self.allocator.malloc(1000)  # the free 1 MiB block is not cut
        self.assertEqual(self.driver.allocs, [MIB, 1024])
        self.allocator.free(small)
        self.assertEqual(self.allocator.malloc(MIB - 5), big)
        self.assertEqual(self.driver.allocs, [MIB, 1024])

    def test_batches_in_flight_grow_it_then_it_serves_them(self):
        in_flight = [self.allocator.malloc(MIB) for _ in range(3)]
        for _ in range(20):  # a batch done, the next pinned
            self.allocator.free(in_flight.pop(0))
            in_flight.append(self.allocator.malloc(MIB))
        self.assertEqual(self.driver.allocs, [MIB] * 3)
        self.assertEqual(self.driver.frees, [])

    def test_empty_cache_gives_back_the_free_blocks(self):
        held = self.allocator.malloc(MIB)
        self.allocator.free(self.allocator.malloc(2 * MIB))
        self.allocator.empty_cache()
        self.assertEqual(self.driver.frees, [2 * MIB])
        self.allocator.free(held)
        self.assertEqual(self.allocator.malloc(MIB), held)


if __name__ == "__main__":
    unittest.main(verbosity=1)
