/* The command line: subcommands and flags, parsed into the run
 * configuration (bench_config.h).
 *
 * zb_cli_parse is pure (no output, no exit), so it is unit-tested path by
 * path and fuzzed; main prints its one-line message and exits with 2. The
 * commands and their flags come from the benchmark registry (bench.h): every
 * flag is described once, next to the benchmark that takes it (the options
 * every command takes: in cli.c), and the same description drives --help. */
#ifndef ZB_CLI_H
#define ZB_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "bench_config.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses argv (argv[0] is the program). On bad input returns ZB_ERR_INVALID
 * with a one-line message (zb_error_message) naming the flag, the value and
 * what is accepted. */
zb_status zb_cli_parse(int argc, char *const *argv, zb_config *cfg);

/* Writes the usage text for a command (all flags that apply to it). */
void zb_cli_usage(zb_command cmd, char *out, size_t n);

/* The parsed configuration field by field, for ranks to compare
 * (config_agree.h): out[0] is the command itself, out[1 + i] a 64-bit
 * FNV-1a digest of the value of the command's i-th option in --help order.
 * Returns the count (at most cap). */
#define ZB_CLI_DIGESTS_MAX 128
int zb_cli_config_digests(const zb_config *cfg, uint64_t *out, int cap);
/* The n digests folded into one (FNV-1a over their bytes). */
uint64_t zb_cli_digests_fold(const uint64_t *digests, int n);
/* How messages name digest `index` of a `cmd` configuration: "the command",
 * "-b/--minbytes", "--layers". */
void zb_cli_digest_name(zb_command cmd, int index, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
