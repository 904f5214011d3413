/**
 * @file fa_cli.h
 * @brief A small declarative parser for `--name value` command-line flags.
 *
 * Each program lists its flags in a table; the parser fills the destinations,
 * rejects unknown flags, missing values and bad numbers with a message and the
 * usage text, and returns the exit code the program should use.
 */
#ifndef FA_CLI_H
#define FA_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How a flag's value is read. */
typedef enum fa_flag_kind {
    FA_FLAG_BOOL,    /**< no value; sets *(bool *)dest = true */
    FA_FLAG_INT,     /**< a decimal int64 in [min, max]; dest is int64_t * */
    FA_FLAG_DOUBLE,  /**< a finite number; dest is double * */
    FA_FLAG_CHOICE,  /**< one of choices[] (NULL-terminated); dest is int * (the index) */
    FA_FLAG_STRING   /**< any text; dest is const char ** */
} fa_flag_kind;

/** One flag of a program. */
typedef struct fa_flag {
    const char *name;              /**< without the dashes: "impl" for --impl */
    fa_flag_kind kind;
    void *dest;
    const char *help;
    int64_t min, max;              /**< FA_FLAG_INT only: accepted range */
    const char *const *choices;    /**< FA_FLAG_CHOICE only */
} fa_flag;

/** Result of fa_cli_parse(). */
typedef enum fa_cli_result {
    FA_CLI_OK = 0,     /**< parsed; run the program */
    FA_CLI_HELP = 1,   /**< --help was given and the usage printed; exit 0 */
    FA_CLI_ERROR = 2   /**< bad command line: message and usage printed to stderr; exit 2 */
} fa_cli_result;

/**
 * Parses argv[1..argc) against flags[0..count). On error prints
 * "<program>: <what is wrong>" and the usage to stderr.
 */
fa_cli_result fa_cli_parse(int argc, char **argv, const fa_flag *flags, int count,
                           const char *summary);

/** Prints the usage text (one line per flag, with ranges and choices). */
void fa_cli_usage(FILE *out, const char *program, const fa_flag *flags, int count,
                  const char *summary);

#ifdef __cplusplus
}
#endif

#endif /* FA_CLI_H */
