/* ZB_VEC_CLONES: a hot loop compiled for AVX-512, AVX2 and the baseline,
 * chosen at load time by CPU feature (GCC's target_clones on x86-64), never
 * by CPU model ("arch=..."): these VMs report a model GCC's dispatcher does
 * not know (docs/design.md §10). Empty elsewhere. The file using it builds
 * with -O3 so that the vectoriser runs at any build type. */
#ifndef ZB_VEC_CLONES_H
#define ZB_VEC_CLONES_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define ZB_VEC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef ZB_VEC_CLONES
#define ZB_VEC_CLONES
#endif

#endif
