/* Synthetic training data: a seeded token stream a model can learn.
 *
 * Every sequence follows a fixed random "successor" function of the seed:
 * the next token is succ(current) with probability 0.9 and a uniform token
 * otherwise; the first token is uniform. succ is a hash of (seed, token)
 * into [0, V) (a random function, not necessarily a permutation), so a
 * model learns it as a bigram table: the loss can fall from ln V towards
 * the stream's entropy (~0.9 nats for V = 256).
 *
 * Sample s is a pure function of (seed, s), so any split of the samples
 * over ranks sees the same data. The step's samples: with n ranks and B
 * sequences per rank, rank r takes samples step*(n*B) + r*B + b for
 * b in [0, B) (zb_data_sample_index); an unsharded run with global batch
 * n*B takes samples step*(n*B) + i, i in [0, n*B): the same set.
 *
 * Shapes: tokens, targets [T] per sample; [n, T] for a batch. */
#ifndef ZB_ZERO3_DATA_H
#define ZB_ZERO3_DATA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Generates the sample's T + 1 tokens; tokens [T] = the first T, targets
 * [T] = the last T (tokens shifted by one). T >= 1, V >= 2. */
void zb_data_sample(uint64_t seed, uint64_t sample_index, int T, int V, int32_t *tokens,
                    int32_t *targets);

/* n consecutive samples from first_sample into tokens, targets [n, T]. */
void zb_data_batch(uint64_t seed, uint64_t first_sample, int n, int T, int V, int32_t *tokens,
                   int32_t *targets);

/* The index of sequence b (0 <= b < B) of rank `rank` of n_ranks at step
 * `step`: step*(n_ranks*B) + rank*B + b. */
uint64_t zb_data_sample_index(int step, int n_ranks, int rank, int B, int b);

/* The successor of token `cur` (what the stream follows 90% of the time). */
int32_t zb_data_successor(uint64_t seed, int32_t cur, int V);

#ifdef __cplusplus
}
#endif
#endif
