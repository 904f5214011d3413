/**
 * @file fa_cli.c
 * @brief The flag parser: `--name value` and `--name=value`, nothing positional.
 */
#include "fa_cli.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(long long) == sizeof(int64_t), "strtoll must parse the whole int64 range");

enum {
    MESSAGE_CAPACITY = 512,
    PLACEHOLDER_CAPACITY = 256,
    HELP_COLUMN_MAX = 40 /* flags wider than this push their help text further right */
};

static const char *program_name(int argc, char **argv)
{
    if (argc < 1 || !argv[0] || !argv[0][0])
        return "program";
    const char *slash = strrchr(argv[0], '/');
    return slash ? slash + 1 : argv[0];
}

/** The value placeholder of a flag in the usage: "<int>", "a|b|c", ... ("" for a bool). */
static const char *placeholder(const fa_flag *flag, char *buf, size_t cap)
{
    buf[0] = '\0';
    switch (flag->kind) {
    case FA_FLAG_BOOL: break;
    case FA_FLAG_INT: snprintf(buf, cap, "<int>"); break;
    case FA_FLAG_DOUBLE: snprintf(buf, cap, "<number>"); break;
    case FA_FLAG_STRING: snprintf(buf, cap, "<text>"); break;
    case FA_FLAG_CHOICE: {
        size_t used = 0;
        for (int c = 0; flag->choices && flag->choices[c] && used < cap; c++) {
            const int written = snprintf(buf + used, cap - used, "%s%s", c ? "|" : "", flag->choices[c]);
            if (written < 0)
                break;
            used += (size_t)written;
        }
        break;
    }
    }
    return buf;
}

static int left_column_width(const fa_flag *flag)
{
    char value[PLACEHOLDER_CAPACITY];
    const size_t value_length = strlen(placeholder(flag, value, sizeof value));
    return (int)(2 + strlen(flag->name) + (value_length ? 1 + value_length : 0));
}

void fa_cli_usage(FILE *out, const char *program, const fa_flag *flags, int count,
                  const char *summary)
{
    fprintf(out, "usage: %s [flags]\n", program);
    if (summary && summary[0])
        fprintf(out, "%s\n", summary);
    fprintf(out, "\nflags:\n");

    int column = (int)strlen("--help, -h");
    for (int f = 0; f < count; f++) {
        const int width = left_column_width(&flags[f]);
        if (width > column && width <= HELP_COLUMN_MAX)
            column = width;
    }
    for (int f = 0; f < count; f++) {
        const fa_flag *flag = &flags[f];
        char value[PLACEHOLDER_CAPACITY];
        placeholder(flag, value, sizeof value);
        const int width = left_column_width(flag);
        fprintf(out, "  --%s%s%s%*s  %s", flag->name, value[0] ? " " : "", value,
                width < column ? column - width : 0, "", flag->help ? flag->help : "");
        if (flag->kind == FA_FLAG_INT)
            fprintf(out, " [%" PRId64 ", %" PRId64 "]", flag->min, flag->max);
        fprintf(out, "\n");
    }
    fprintf(out, "  %-*s  print this message and exit\n", column, "--help, -h");
}

/** Prints "<program>: <message>" and the usage to stderr; returns FA_CLI_ERROR. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static fa_cli_result reject(const char *program, const fa_flag *flags, int count, const char *summary,
       const char *format, ...)
{
    char message[MESSAGE_CAPACITY];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    fprintf(stderr, "%s: %s\n", program, message);
    fa_cli_usage(stderr, program, flags, count, summary);
    return FA_CLI_ERROR;
}

static const fa_flag *find_flag(const fa_flag *flags, int count, const char *name, size_t length)
{
    for (int f = 0; f < count; f++)
        if (strlen(flags[f].name) == length && strncmp(flags[f].name, name, length) == 0)
            return &flags[f];
    return NULL;
}

/** True when @p text is a whole decimal integer (no blanks, nothing after it). */
static bool parse_int(const char *text, int64_t *value, bool *in_range)
{
    if (!text[0] || isspace((unsigned char)text[0]))
        return false;
    char *end;
    errno = 0;
    const long long parsed = strtoll(text, &end, 10);
    if (*end != '\0')
        return false;
    *in_range = errno != ERANGE;
    *value = parsed;
    return true;
}

/** True when @p text is a whole finite number (strtod syntax, no blanks). */
static bool parse_double(const char *text, double *value)
{
    if (!text[0] || isspace((unsigned char)text[0]))
        return false;
    char *end;
    const double parsed = strtod(text, &end);
    if (*end != '\0' || !isfinite(parsed))
        return false;
    *value = parsed;
    return true;
}

/** Stores @p text into the flag's destination; on a bad value writes why into @p why. */
static bool set_value(const fa_flag *flag, const char *text, char *why, size_t cap)
{
    switch (flag->kind) {
    case FA_FLAG_INT: {
        int64_t value;
        bool in_range;
        if (!parse_int(text, &value, &in_range)) {
            snprintf(why, cap, "--%s expects an integer, got '%s'", flag->name, text);
            return false;
        }
        if (!in_range || value < flag->min || value > flag->max) {
            snprintf(why, cap, "--%s %s is out of range [%" PRId64 ", %" PRId64 "]", flag->name,
                     text, flag->min, flag->max);
            return false;
        }
        *(int64_t *)flag->dest = value;
        return true;
    }
    case FA_FLAG_DOUBLE:
        if (!parse_double(text, (double *)flag->dest)) {
            snprintf(why, cap, "--%s expects a finite number, got '%s'", flag->name, text);
            return false;
        }
        return true;
    case FA_FLAG_CHOICE: {
        for (int c = 0; flag->choices && flag->choices[c]; c++) {
            if (strcmp(flag->choices[c], text) == 0) {
                *(int *)flag->dest = c;
                return true;
            }
        }
        char choices[PLACEHOLDER_CAPACITY];
        snprintf(why, cap, "--%s: unknown choice '%s' (expected %s)", flag->name, text,
                 placeholder(flag, choices, sizeof choices));
        return false;
    }
    case FA_FLAG_STRING: *(const char **)flag->dest = text; return true;
    default: break; /* FA_FLAG_BOOL: set by the caller when written without a value */
    }
    snprintf(why, cap, "--%s takes no value, got '%s'", flag->name, text);
    return false;
}

static bool starts_like_flag(const char *arg) { return arg[0] == '-' && arg[1] == '-'; }

/*
 * A value may not start with "--" in the two-word form (`--seed --quick` is a
 * missing value, not the seed "--quick"); write `--name=--text` for that.
 * A repeated flag takes its last value.
 */
fa_cli_result fa_cli_parse(int argc, char **argv, const fa_flag *flags, int count,
                           const char *summary)
{
    const char *program = program_name(argc, argv);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fa_cli_usage(stdout, program, flags, count, summary);
            return FA_CLI_HELP;
        }
        if (arg[0] != '-')
            return reject(program, flags, count, summary,
                          "unexpected argument '%s' (every value follows a --flag)", arg);
        if (!starts_like_flag(arg) || arg[2] == '\0')
            return reject(program, flags, count, summary, "unknown flag '%s'", arg);

        const char *name = arg + 2;
        const char *equals = strchr(name, '=');
        const size_t name_length = equals ? (size_t)(equals - name) : strlen(name);
        const fa_flag *flag = find_flag(flags, count, name, name_length);
        if (!flag)
            return reject(program, flags, count, summary, "unknown flag '--%.*s'",
                          (int)name_length, name);

        if (flag->kind == FA_FLAG_BOOL && !equals) {
            *(bool *)flag->dest = true;
            continue;
        }
        const char *value;
        if (equals)
            value = equals + 1;
        else if (i + 1 < argc && !starts_like_flag(argv[i + 1]))
            value = argv[++i];
        else
            return reject(program, flags, count, summary, "missing value for --%s", flag->name);

        char why[MESSAGE_CAPACITY];
        if (!set_value(flag, value, why, sizeof why))
            return reject(program, flags, count, summary, "%s", why);
    }
    return FA_CLI_OK;
}
