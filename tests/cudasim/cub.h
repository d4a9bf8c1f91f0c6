/* cub.h - the part of cub that engine/cuda/ uses, for the simulator
 * (cudasim.h): DeviceRadixSort::SortPairs, a stable sort of (key, value)
 * pairs by the key bits [begin_bit, end_bit), as cub's radix sort orders
 * them (signed keys in signed order). */
#ifndef MATRIX_CUDASIM_CUB_H
#define MATRIX_CUDASIM_CUB_H

#include <algorithm>
#include <numeric>
#include <type_traits>
#include <vector>

namespace cub {

struct DeviceRadixSort {
    template <class K, class V, class N>
    static cudaError_t SortPairs(void *tmp, size_t &tmp_bytes, const K *kin, K *kout, const V *vin, V *vout,
                                 N n, int begin_bit = 0, int end_bit = (int)sizeof(K) * 8,
                                 cudaStream_t stream = 0)
    {
        if (!tmp) {
            tmp_bytes = 1; /* cub asks for scratch; the simulator needs none, but some */
            return cudaSuccess;
        }
        cudasim::enqueue(stream, [=] { sort(kin, kout, vin, vout, (size_t)n, begin_bit, end_bit); });
        return cudaSuccess;
    }

  private:
    template <class K, class V>
    static void sort(const K *kin, K *kout, const V *vin, V *vout, size_t n, int begin_bit, int end_bit)
    {
        typedef typename std::make_unsigned<K>::type U;
        auto bits = [&](K k) {
            U u = (U)k;
            if (std::is_signed<K>::value)
                u ^= (U)1 << (sizeof(U) * 8 - 1);
            int w = end_bit - begin_bit;
            U m = w >= (int)sizeof(U) * 8 ? (U)~(U)0 : (U)(((U)1 << w) - 1);
            return (U)((u >> begin_bit) & m);
        };
        std::vector<size_t> ix((size_t)n);
        std::iota(ix.begin(), ix.end(), (size_t)0);
        std::stable_sort(ix.begin(), ix.end(), [&](size_t a, size_t b) { return bits(kin[a]) < bits(kin[b]); });
        std::vector<K> ks((size_t)n);
        std::vector<V> vs((size_t)n);
        for (size_t i = 0; i < (size_t)n; i++) {
            ks[i] = kin[ix[i]];
            vs[i] = vin[ix[i]];
        }
        std::copy(ks.begin(), ks.end(), kout);
        std::copy(vs.begin(), vs.end(), vout);
    }
};

} // namespace cub

#endif
