/* show_settings.c - hpc-info --settings: every HPC_* setting, its value in
 * effect on rank 0 and where that came from, as text, Markdown (the
 * README's table is this output: docs/settings-table.sh) or JSON. */
#include "config.h"
#include "info.h"

#include <stdio.h>
#include <string.h>

static const char *type_name(hpc_setting_type_t t)
{
    static const char *const n[] = {"0|1", "seconds", "number", "bytes", "integer", "choice", "list", "text"};
    return (unsigned)t < sizeof n / sizeof n[0] ? n[t] : "?";
}

/* what the setting takes, in a few words: "0|1", "bytes (or off)", ... */
static void form(const hpc_setting_t *s, char *buf, size_t len)
{
    if (s->type == HPC_SET_CHOICE || s->type == HPC_SET_LIST || s->type == HPC_SET_TEXT)
        snprintf(buf, len, "%s", s->values ? s->values : "text");
    else if (s->type == HPC_SET_BYTES && s->values)
        snprintf(buf, len, "bytes, or %s", s->values);
    else if (s->type == HPC_SET_NUMBER && s->values)
        snprintf(buf, len, "%s", s->values);
    else
        snprintf(buf, len, "%s", type_name(s->type));
}

/* a Markdown cell: '|' escaped */
static void md(const char *s)
{
    for (; *s; s++) {
        if (*s == '|') putchar('\\');
        putchar(*s);
    }
}

void info_print_settings(int format)
{
    int n = hpc_settings_count();
    if (format == INFO_SETTINGS_MARKDOWN)
        printf("| setting | takes | default | read by | meaning |\n|---|---|---|---|---|\n");
    else if (format == INFO_SETTINGS_TEXT)
        printf("%-24s %-12s %-12s %s\n", "SETTING", "VALUE", "FROM", "MEANING");
    else
        printf("[\n");
    for (int i = 0; i < n; i++) {
        const hpc_setting_t *s = hpc_setting_at(i);
        const char *from, *v = strchr(s->name, '*') ? "" : hpc_setting_value(s->name, &from);
        char takes[96];
        form(s, takes, sizeof takes);
        if (strchr(s->name, '*')) from = "-";
        const char *def = s->def ? (*s->def ? s->def : "-") : "detected";
        if (format == INFO_SETTINGS_MARKDOWN) {
            printf("| `%s` | ", s->name);
            md(takes);
            printf(" | %s | %s | ", def, s->who);
            md(s->help);
            printf(" |\n");
        } else if (format == INFO_SETTINGS_TEXT) {
            printf("%-24s %-12s %-12s %s\n", s->name, *v ? v : (s->def ? "-" : "detected"),
                   !strncmp(from, "default", 7) ? "default" : from, s->help);
        } else {
            printf("  {\"name\": ");
            info_json_str(s->name);
            printf(", \"value\": ");
            info_json_str(v);
            printf(", \"from\": ");
            info_json_str(from);
            printf(", \"default\": ");
            info_json_str(s->def ? s->def : "");
            printf(", \"takes\": ");
            info_json_str(takes);
            printf(", \"read_by\": ");
            info_json_str(s->who);
            printf("}%s\n", i + 1 < n ? "," : "");
        }
    }
    if (format == INFO_SETTINGS_JSON) printf("]\n");
}
