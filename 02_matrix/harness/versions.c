/** @file versions.c @brief Which versions of a milestone a check runs, and its verdict. */
#include "versions.h"

#include <stdio.h>
#include <string.h>

void versions_label(const milestone_versions *versions, int version, char *label, size_t cap)
{
    snprintf(label, cap, "v%d %s", version, versions->names[version - 1]);
}

fa_status versions_probe(const milestone_versions *versions, void *context, int version)
{
    if (version != 0)
        return versions->written(version, context);
    for (int v = 1; v <= versions->count; ++v)
        if (versions->written(v, context) == FA_OK)
            return FA_OK;
    return versions->written(1, context); /* again, so that the message is version 1's */
}

/** Appends ", <label>" (or "<label>" first) to @p list. */
static void list_add(const milestone_versions *versions, int version, char *list, size_t cap)
{
    char label[64];
    versions_label(versions, version, label, sizeof label);
    const size_t used = strlen(list);
    if (used < cap)
        snprintf(list + used, cap - used, "%s%s", used > 0 ? ", " : "", label);
}

/** Puts "<passed> passed; " before the detail of a failure (cut at the end if too long). */
static void prefix_detail(fa_result *result, const char *passed)
{
    char detail[FA_RESULT_DETAIL];
    const int written = snprintf(detail, sizeof detail, "%s passed; ", passed);
    if (written < 0 || (size_t)written >= sizeof detail)
        return;
    const size_t room = sizeof detail - 1 - (size_t)written;
    size_t rest = strlen(result->detail);
    rest = rest < room ? rest : room;
    memcpy(detail + written, result->detail, rest);
    detail[(size_t)written + rest] = '\0';
    memcpy(result->detail, detail, sizeof detail);
}

void versions_check(const milestone_versions *versions, void *context,
                    const fa_run_options *options, const char *summary, fa_result *result)
{
    char passed[FA_RESULT_DETAIL / 4] = "", unwritten[FA_RESULT_DETAIL / 4] = "";
    for (int v = 1; v <= versions->count; ++v) {
        if (options->version != 0 && v != options->version)
            continue;
        const fa_status written = versions->written(v, context);
        if (written != FA_OK) {
            if (options->version != 0) {
                fa_result_status(result, "probe", written);
                return;
            }
            list_add(versions, v, unwritten, sizeof unwritten);
            continue;
        }
        if (!versions->run(v, context, result)) {
            if (passed[0] != '\0')
                prefix_detail(result, passed);
            return;
        }
        list_add(versions, v, passed, sizeof passed);
    }
    if (passed[0] == '\0') { /* no version written: version 1 is the one to write */
        fa_result_status(result, "probe", versions->written(1, context));
        return;
    }
    if (unwritten[0] == '\0')
        fa_result_pass(result, "%s passed: %d cases (%s)", passed, result->cases, summary);
    else
        fa_result_pass(result, "%s passed: %d cases (%s); not written yet: %s", passed,
                       result->cases, summary, unwritten);
}

int versions_timed(const milestone_versions *versions, void *context,
                   const fa_run_options *options)
{
    if (options->version != 0)
        return versions->written(options->version, context) == FA_OK ? options->version : 0;
    for (int v = versions->count; v >= 1; --v)
        if (versions->written(v, context) == FA_OK)
            return v;
    return 0;
}
