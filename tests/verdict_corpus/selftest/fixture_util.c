// A handmade ground-truth source for run_corpus.py --selftest (never compiled).
void* dev_alloc(size_t n) {
    void* p = 0;
    cudaMalloc(&p, n); // HELPER
    return p;
}
void* grow(size_t n) {
    void* w = dev_alloc(n); // EXPECT: growth
    return w;
}
