/* opts.c - one option table gives getopt_long, --help, strict value checks
 * with one-line errors, and the options key.
 *
 * Every rank parses the same argv, so every rank reaches the same verdict
 * without talking; app.c turns the verdict into an exit.  Each program also
 * gets -h/--help, --version and -q/--quiet from here.
 */
#include "config.h"
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "app_internal.h"

enum { BUILTIN_HELP = 'h', BUILTIN_QUIET = 'q', BUILTIN_LIST = 999, BUILTIN_VERSION = 1000, OPT_BASE = 1001 };
#define HELP_COL 25      /* where the help text of an option starts */
#define HELP_WIDTH 79

static int count_opts(const hpc_opt_t *t)
{
    int n = 0;
    while (t[n].type != HPC_OPT_END) n++;
    return n;
}

/* a row getopt_long knows (not a heading or the operands) */
static int is_option(const hpc_opt_t *o)
{
    return o->type != HPC_OPT_SECTION && o->type != HPC_OPT_OPERANDS;
}

static int takes_value(const hpc_opt_t *o)
{
    return o->type != HPC_OPT_FLAG && is_option(o);
}

/* "--name" for messages */
static const char *shown(const hpc_opt_t *o, char *buf, size_t len)
{
    /* "-n" where the long name is the letter itself, else "--name" */
    snprintf(buf, len, "%s%s", o->letter && o->name[0] == o->letter && !o->name[1] ? "-" : "--", o->name);
    return buf;
}

/* CHOICE: index of value in "a|b|c", or -1 */
static int choice_index(const char *choices, const char *v)
{
    size_t n = strlen(v);
    int i = 0;
    for (const char *p = choices; *p; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, v, n)) return i;
        if (!bar) break;
        p = bar + 1;
    }
    return -1;
}

static void choice_name(const char *choices, int idx, char *buf, size_t len)
{
    const char *p = choices;
    for (int i = 0; i < idx && p; i++) p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL;
    size_t n = p ? strcspn(p, "|") : 0;
    snprintf(buf, len, "%.*s", (int)n, p ? p : "");
}

static int check_double(const hpc_opt_t *o, double v)
{
    char nm[80];
    if (!(o->flags & HPC_OPT_BOUNDS)) return 0;
    int lo_bad = (o->flags & HPC_OPT_GT) ? !(v > o->lo) : !(v >= o->lo);
    int hi_bad = (o->flags & HPC_OPT_LT) ? !(v < o->hi) : !(v <= o->hi);
    if (lo_bad || hi_bad)
        return HPC_ERR(HPC_ERR_ARG, "%s %g: must be %s %g and %s %g", shown(o, nm, sizeof nm), v,
                    (o->flags & HPC_OPT_GT) ? ">" : ">=", o->lo, (o->flags & HPC_OPT_LT) ? "<" : "<=",
                    o->hi);
    return 0;
}

/* Store one value into o->dest. */
static int set_value(const hpc_opt_t *o, const char *v)
{
    char nm[80], esc[160];
    shown(o, nm, sizeof nm);
    hpc_escape(v, esc, sizeof esc);
    switch (o->type) {
    case HPC_OPT_FLAG:
        *(int *)o->dest = 1;
        return 0;
    case HPC_OPT_INT: {
        int64_t x;
        if (hpc_parse_int64(v, &x) < 0) return HPC_ERR(HPC_ERR_ARG, "%s: '%s' is not an integer", nm, esc);
        if ((o->ilo || o->ihi) && (x < o->ilo || x > o->ihi))
            return HPC_ERR(HPC_ERR_ARG, "%s %lld: must be in [%lld, %lld]", nm, (long long)x,
                        (long long)o->ilo, (long long)o->ihi);
        *(int64_t *)o->dest = x;
        return 0;
    }
    case HPC_OPT_DOUBLE: {
        double x;
        if (hpc_parse_double(v, o->flags & HPC_OPT_INF, &x) < 0)
            return HPC_ERR(HPC_ERR_ARG, "%s: '%s' is not a %snumber", nm, esc,
                        (o->flags & HPC_OPT_INF) ? "" : "finite ");
        HPC_TRY(check_double(o, x));
        *(double *)o->dest = x;
        return 0;
    }
    case HPC_OPT_SIZE:
        if (hpc_parse_size(v, (size_t *)o->dest) < 0)
            return HPC_ERR(HPC_ERR_ARG, "%s: '%s' is not a size (64, 8K, 16M, 1G)", nm, esc);
        return 0;
    case HPC_OPT_STRING:
        if (!*v) return HPC_ERR(HPC_ERR_ARG, "%s: empty value", nm);
        *(const char **)o->dest = v;
        return 0;
    case HPC_OPT_CHOICE: {
        int i = choice_index(o->choices, v);
        if (i < 0) return HPC_ERR(HPC_ERR_ARG, "%s: '%s' is not one of %s", nm, esc, o->choices);
        *(int *)o->dest = i;
        return 0;
    }
    case HPC_OPT_CALL:
        hpc_error_clear();
        if (o->call(v, o->dest) < 0)
            return HPC_ERR(HPC_ERR_ARG, "%s: '%s': %s", nm, esc,
                           hpc_last_cause()[0] ? hpc_last_cause() : "invalid value");
        return 0;
    default:
        return HPC_ERR(HPC_ERR_ARG, "%s: bad option table", nm);
    }
}

/* The long-option table for getopt_long: the app's options, then the
 * built-ins.  val: the letter, or OPT_BASE + index for long-only ones. */
static struct option *long_table(const hpc_opt_t *t, int n, char *shorts, size_t slen)
{
    struct option *lo = calloc((size_t)n + 4, sizeof *lo);
    if (!lo) return NULL;
    size_t k = 0;
    shorts[k++] = ':';
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!is_option(&t[i])) continue;
        lo[m].name = t[i].name;
        lo[m].has_arg = takes_value(&t[i]) ? required_argument : no_argument;
        lo[m].val = t[i].letter ? t[i].letter : OPT_BASE + i;
        m++;
        if (t[i].letter && k + 3 < slen) {
            shorts[k++] = t[i].letter;
            if (takes_value(&t[i])) shorts[k++] = ':';
        }
    }
    lo[m++] = (struct option){"help", no_argument, NULL, BUILTIN_HELP};
    lo[m++] = (struct option){"quiet", no_argument, NULL, BUILTIN_QUIET};
    lo[m++] = (struct option){"version", no_argument, NULL, BUILTIN_VERSION};
    lo[m++] = (struct option){"list-options", no_argument, NULL, BUILTIN_LIST};
    snprintf(shorts + k, slen - k, "hq");
    return lo;
}

static int find(const hpc_opt_t *t, int n, int val)
{
    if (val >= OPT_BASE) return val - OPT_BASE;
    for (int i = 0; i < n; i++)
        if (is_option(&t[i]) && t[i].letter == val) return i;
    return -1;
}

/* Raw text of the last value of each option (CALL: all, comma-joined),
 * for the options key; NULL where the option was not given. */
static char **raw;
static int nraw;
static const hpc_opt_t *parsed;   /* the table raw is of */

int hpc_app_opt_given(const char *name)
{
    for (int i = 0; parsed && raw && i < nraw; i++)
        if (parsed[i].type != HPC_OPT_SECTION && parsed[i].name && !strcmp(parsed[i].name, name)) return raw[i] != NULL;
    return 0;
}

static void keep_raw(int i, const hpc_opt_t *o, const char *v)
{
    if (!raw) return;
    if (o->type == HPC_OPT_CALL && raw[i]) {
        char *j = malloc(strlen(raw[i]) + strlen(v) + 2);
        if (j) sprintf(j, "%s,%s", raw[i], v);
        free(raw[i]);
        raw[i] = j;
    } else {
        free(raw[i]);
        raw[i] = strdup(v ? v : "1");
    }
}

/* The long option a misspelt one most likely meant (--epoch: epochs),
 * at most two single-letter edits away and fewer than its length, or
 * NULL */
static const char *nearest_option(const char *name, const hpc_opt_t *t, int n)
{
    static const char *const builtin[] = {"help", "quiet", "version"};
    const char *best = NULL;
    size_t bestd = 3;
    for (int i = 0; i < n + 3; i++) {
        const char *cand = i < n ? (t[i].type == HPC_OPT_SECTION ? NULL : t[i].name) : builtin[i - n];
        if (!cand) continue;
        size_t d = hpc_edit_distance(name, cand);
        if (d < bestd && d < strlen(cand)) bestd = d, best = cand;
    }
    return best;
}

/* The message for what getopt_long could not take. */
static int bad_option(int c, int argc, char **argv, const hpc_opt_t *t, int n)
{
    char esc[256], nm[80];
    const char *arg = optind - 1 < argc ? argv[optind - 1] : "";
    if (c == ':') {
        int i = find(t, n, optopt);
        if (i >= 0) return HPC_ERR(HPC_ERR_ARG, "option %s needs a value", shown(&t[i], nm, sizeof nm));
        return HPC_ERR(HPC_ERR_ARG, "option '%s' needs a value", hpc_escape(arg, esc, sizeof esc));
    }
    /* an unknown letter inside "-Zq" is optopt; a long option is argv's */
    if (optopt > 0 && optopt < 256) return HPC_ERR(HPC_ERR_ARG, "unknown option '-%c' (see --help)", optopt);
    hpc_escape(arg, esc, sizeof esc);
    esc[strcspn(esc, "=")] = '\0';
    const char *near = !strncmp(esc, "--", 2) ? nearest_option(esc + 2, t, n) : NULL;
    if (near) return HPC_ERR(HPC_ERR_ARG, "unknown option '%s': did you mean --%s? (see --help)", esc, near);
    return HPC_ERR(HPC_ERR_ARG, "unknown option '%s' (see --help)", esc);
}

int app_opts_parse(const hpc_app_t *app, int argc, char **argv, int *quiet)
{
    const hpc_opt_t *t = app->opts;
    int n = count_opts(t);
    char shorts[256];
    struct option *lo = long_table(t, n, shorts, sizeof shorts);
    app_opts_free();
    raw = calloc((size_t)n + 1, sizeof *raw);
    nraw = n;
    parsed = t;
    if (!lo || !raw) {
        free(lo);
        return HPC_ERR(HPC_ERR_NOMEM, "out of memory");
    }
    opterr = 0;
    optind = 1;
    int c, rc = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        if (c == BUILTIN_HELP) rc = 1;
        else if (c == BUILTIN_VERSION) rc = 2;
        else if (c == BUILTIN_LIST) rc = 3;
        else if (c == BUILTIN_QUIET) *quiet = 1;
        else if (c == '?' || c == ':') rc = bad_option(c, argc, argv, t, n);
        else {
            int i = find(t, n, c);
            if (i < 0) rc = HPC_ERR(HPC_ERR_ARG, "option table error");
            else if ((rc = set_value(&t[i], optarg)) == 0) keep_raw(i, &t[i], optarg);
        }
    }
    const hpc_opt_t *ops = NULL;
    for (int i = 0; i < n; i++)
        if (t[i].type == HPC_OPT_OPERANDS) ops = &t[i];
    if (rc == 0 && ops) {   /* getopt_long moved them to the end */
        ((hpc_operands_t *)ops->dest)->n = argc - optind;
        ((hpc_operands_t *)ops->dest)->v = argv + optind;
    } else if (rc == 0 && optind < argc) {
        char esc[256];
        rc = HPC_ERR(HPC_ERR_ARG, "unexpected argument '%s' (see --help)",
                  hpc_escape(argv[optind], esc, sizeof esc));
    }
    free(lo);
    return rc;
}

/* ---- the options key ---- */

static void key_value(const hpc_opt_t *o, const char *rawv, char *buf, size_t len)
{
    switch (o->type) {
    case HPC_OPT_FLAG: snprintf(buf, len, "%d", *(int *)o->dest); break;
    case HPC_OPT_INT: snprintf(buf, len, "%lld", (long long)*(int64_t *)o->dest); break;
    case HPC_OPT_DOUBLE: snprintf(buf, len, "%.17g", *(double *)o->dest); break;
    case HPC_OPT_SIZE: snprintf(buf, len, "%zu", *(size_t *)o->dest); break;
    case HPC_OPT_STRING: {
        const char *s = *(const char **)o->dest;
        snprintf(buf, len, "%s", s ? s : "");
        break;
    }
    case HPC_OPT_CHOICE: choice_name(o->choices, *(int *)o->dest, buf, len); break;
    default: snprintf(buf, len, "%s", rawv ? rawv : ""); break;
    }
}

char *app_opts_key(const hpc_app_t *app)
{
    const hpc_opt_t *t = app->opts;
    int n = count_opts(t);
    size_t cap = 256, used = 0;
    char *key = malloc(cap);
    if (!key) return NULL;
    key[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (!(t[i].flags & HPC_OPT_KEY) || !is_option(&t[i])) continue;
        char v[4096];
        key_value(&t[i], raw ? raw[i] : NULL, v, sizeof v);
        size_t need = used + strlen(t[i].name) + strlen(v) + 3;
        if (need > cap) {
            cap = need * 2;
            char *k2 = realloc(key, cap);
            if (!k2) {
                free(key);
                return NULL;
            }
            key = k2;
        }
        used += (size_t)sprintf(key + used, "%s%s=%s", used ? ";" : "", t[i].name, v);
    }
    return key;
}

void app_opts_free(void)
{
    for (int i = 0; raw && i < nraw; i++) free(raw[i]);
    free(raw);
    raw = NULL;
    nraw = 0;
    parsed = NULL;
}

/* ---- --help ---- */

/* Print text wrapped to HELP_WIDTH, first line from column col0 (already
 * there), the rest indented to indent. */
static void wrap(FILE *out, const char *text, int col0, int indent)
{
    int col = col0;
    const char *p = text;
    while (*p) {
        if (*p == '\n') {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
            p++;
            continue;
        }
        size_t w = strcspn(p, " \n");
        if (col > indent && col + 1 + (int)w > HELP_WIDTH) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, w, out);
        col += (int)w;
        p += w;
        while (*p == ' ') p++;
    }
    fputc('\n', out);
}

static void help_row(FILE *out, char letter, const char *name, const char *arg, const char *help)
{
    char left[128];
    int n = snprintf(left, sizeof left, "  %c%c%s--%s%s%s", letter ? '-' : ' ', letter ? letter : ' ',
                     letter ? ", " : "  ", name, arg ? " " : "", arg ? arg : "");
    fputs(left, out);
    if (n >= HELP_COL - 1) {
        fprintf(out, "\n%*s", HELP_COL, "");
        n = HELP_COL;
    } else {
        fprintf(out, "%*s", HELP_COL - n, "");
        n = HELP_COL;
    }
    wrap(out, help ? help : "", n, HELP_COL);
}

/* "  FILE...               what they are" */
static void operands_row(FILE *out, const hpc_opt_t *o)
{
    int n = fprintf(out, "  %s", o->arg ? o->arg : "ARG...");
    if (n >= HELP_COL - 1) fprintf(out, "\n%*s", HELP_COL, "");
    else fprintf(out, "%*s", HELP_COL - n, "");
    wrap(out, o->help ? o->help : "", HELP_COL, HELP_COL);
}

/* Where the guide NAME is installed: beside this program's own install
 * (HPC_BIN_TO_DOC from its folder, so a moved prefix still finds it; the
 * path resolved, not ".../bin/../share/..."), else where configure said
 * the docs go.  A build tree names the latter. */
static void guide_path(const char *name, char *buf, size_t len)
{
    char exe[4096], joined[8192], real[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        snprintf(joined, sizeof joined, "%s/%s/%s", dirname(exe), HPC_BIN_TO_DOC, name);
        if (realpath(joined, real)) {
            snprintf(buf, len, "%s", real);
            return;
        }
    }
    snprintf(buf, len, "%s/%s", HPC_DOCDIR, name);
}

static void help_guide(const hpc_app_t *app, FILE *out)
{
    char path[4200];
    guide_path(app->guide, path, sizeof path);
    /* the README is at the top of the source tree, the guides in docs/ */
    fprintf(out, "\nGuide: %s (%s%s in the source tree); man %s.\n", path,
            strcmp(app->guide, "README.md") ? "docs/" : "", app->guide, app->name);
}

/* --list-options: the option table for shell completion (docs/
 * completion.sh makes each program's bash completion of it at build
 * time), one option a line: --NAME, TAB, -L or nothing, TAB, its value's
 * name (choices as a|b|c; nothing for a flag) */
void app_opts_list(const hpc_app_t *app, FILE *out)
{
    for (const hpc_opt_t *o = app->opts; o->type != HPC_OPT_END; o++) {
        if (o->type == HPC_OPT_SECTION || o->type == HPC_OPT_OPERANDS) continue;   /* no --NAME */
        fprintf(out, "--%s\t", o->name);
        if (o->letter) fprintf(out, "-%c", o->letter);
        fprintf(out, "\t%s\n", takes_value(o) && o->arg ? o->arg : "");
    }
    fprintf(out, "--quiet\t-q\t\n--help\t-h\t\n--version\t\t\n--list-options\t\t\n");
}

void app_opts_help(const hpc_app_t *app, FILE *out)
{
    fprintf(out, "Usage: ");
    for (const char *p = app->usage; *p;) {
        size_t w = strcspn(p, "\n");
        fprintf(out, "%s%.*s\n", p == app->usage ? "" : "       ", (int)w, p);
        p += w;
        if (*p) p++;
    }
    if (app->about) {
        fputc('\n', out);
        for (const char *p = app->about; *p;) {   /* paragraphs split at blank lines */
            const char *end = strstr(p, "\n\n");
            size_t w = end ? (size_t)(end - p) : strlen(p);
            char *para = strndup(p, w);
            if (para) wrap(out, para, 0, 0);
            free(para);
            p += w;
            if (*p) {
                fputc('\n', out);
                p += 2;
            }
        }
    }
    if (app->opts[0].type != HPC_OPT_SECTION && app->opts[0].type != HPC_OPT_END)
        fprintf(out, "\nOptions:\n");
    for (const hpc_opt_t *o = app->opts; o->type != HPC_OPT_END; o++) {
        if (o->type == HPC_OPT_SECTION) fprintf(out, "\n%s\n", o->help);
        else if (o->type == HPC_OPT_OPERANDS) operands_row(out, o);
        else help_row(out, o->letter, o->name, takes_value(o) ? o->arg : NULL, o->help);
    }
    fprintf(out, "\nEvery program:\n");
    help_row(out, 'q', "quiet", NULL, "no progress line and no summary line");
    help_row(out, 'h', "help", NULL, "this text");
    help_row(out, 0, "version", NULL, "the hpckit version");
    help_row(out, 0, "list-options", NULL, "the options, one a line, for shell completion");
    if (app->help_more) app->help_more(out);
    if (app->epilog) {
        fputc('\n', out);
        fputs(app->epilog, out);
        if (app->epilog[0] && app->epilog[strlen(app->epilog) - 1] != '\n') fputc('\n', out);
    }
    if (app->guide) help_guide(app, out);
}
