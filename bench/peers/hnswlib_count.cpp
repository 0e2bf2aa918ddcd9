// Distances hnswlib computes per query, on the index and queries of `hnsw_ab_peer.py` (which
// saves CACHE_DIR/hnswlib.bin), for comparing with `hnsw_ab`'s counts. The distance function is
// wrapped by one that counts its calls, so the figure is the distances actually computed (not
// hnswlib's own metric, which counts list sizes). One thread; also prints microseconds per
// query. Build against hnswlib 0.8.0's headers (https://github.com/nmslib/hnswlib):
//
//     g++ -O3 -march=native -I HNSWLIB_DIR bench/peers/hnswlib_count.cpp -o hnswlib_count
//     ./hnswlib_count DIM CACHE_DIR
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "hnswlib/hnswlib.h"

static std::atomic<long> distance_calls{0};
static hnswlib::DISTFUNC<float> inner_distance;

static float counted_distance(const void *a, const void *b, const void *param) {
    distance_calls.fetch_add(1, std::memory_order_relaxed);
    return inner_distance(a, b, param);
}

// hnswlib's inner-product space (what `space='cosine'` uses on normalized rows), counting.
class CountingSpace : public hnswlib::SpaceInterface<float> {
    hnswlib::InnerProductSpace inner_;

 public:
    explicit CountingSpace(size_t dim) : inner_(dim) { inner_distance = inner_.get_dist_func(); }
    size_t get_data_size() override { return inner_.get_data_size(); }
    hnswlib::DISTFUNC<float> get_dist_func() override { return counted_distance; }
    void *get_dist_func_param() override { return inner_.get_dist_func_param(); }
};

static std::vector<float> read_floats(const std::string &path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    std::vector<float> values(in.tellg() / sizeof(float));
    in.seekg(0);
    in.read(reinterpret_cast<char *>(values.data()), values.size() * sizeof(float));
    return values;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: hnswlib_count DIM CACHE_DIR\n");
        return 2;
    }
    const size_t dim = std::stoul(argv[1]);
    const std::string cache = argv[2];
    std::vector<float> queries = read_floats(cache + "/queries.f32");
    const size_t count = queries.size() / dim;
    for (size_t q = 0; q < count; q++) {
        float *row = &queries[q * dim];
        float norm = 0;
        for (size_t i = 0; i < dim; i++) norm += row[i] * row[i];
        norm = 1.0f / (std::sqrt(norm) + 1e-30f);
        for (size_t i = 0; i < dim; i++) row[i] *= norm;
    }
    CountingSpace space(dim);
    hnswlib::HierarchicalNSW<float> index(&space, cache + "/hnswlib.bin");
    for (size_t efs : {16, 32, 64, 128, 200}) {
        index.setEf(efs);
        distance_calls = 0;
        auto start = std::chrono::steady_clock::now();
        for (size_t q = 0; q < count; q++) index.searchKnn(&queries[q * dim], 10);
        double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("efs %3zu hnswlib distances/query %.0f us/query %.1f\n", efs,
                    double(distance_calls) / count, seconds * 1e6 / count);
    }
    return 0;
}
