/* h5check.c - hpc-h5check: is this file a good hpckit file of its kind?
 *
 * The command line of the checker every program runs on its inputs
 * (libhpc/app/check*.c, the schemas data/schemas/KIND.json built into
 * libhpc): each file's kind is detected (or given with --kind), its
 * structure checked against the kind's schema and, unless --structure,
 * every value the schema constrains read.  One line per problem on
 * stdout, "FILE: problem"; exit 0 when every file is good, 1 when one is
 * not (or cannot be read), 2 for a bad option.  A program of its own
 * rather than a subcommand of one: it checks the files of every program
 * (and of none: a user's /X,/Y file before the job), it is serial, and
 * it must work on a login node where the job's programs would not be
 * started by hand.  Rank 0 does the work; other ranks, if any, wait.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "hpc_app_h5.h"

#define PROG "hpc-h5check"

static const char *kind, *schema, *markdown;
static int structure, list;
static hpc_operands_t files;

static const hpc_opt_t options[] = {
    HPC_OPERANDS(&files, "FILE...", "files to check: HDF5 or CSV; FILE:/DATASET checks that dataset as a "
                 "matrix (what hpc-matmul's --a and --b take) unless --kind says otherwise"),
    HPC_STRING("kind", 'k', &kind, "KIND", 0, "check against this kind's schema (default: the kind the file's "
               "datasets show)"),
    HPC_FLAG("structure", 's', &structure, 0, "the structure only (datasets, shapes, types, attributes: "
             "metadata reads, what the programs check of their inputs), not every value"),
    HPC_FLAG("list-kinds", 0, &list, 0, "list the kinds, one a line with what it is, and exit"),
    HPC_STRING("schema", 0, &schema, "KIND", 0, "print KIND's schema (JSON) and exit"),
    HPC_STRING("markdown", 0, &markdown, "KIND", 0, "print KIND's tables in Markdown (the guides' tables) and exit"),
    HPC_OPTS_END};

static const hpc_app_t app = {
    .name = PROG,
    .usage = "hpc-h5check [OPTIONS] FILE[:/DATASET]...\nhpc-h5check --list-kinds | --schema KIND | --markdown KIND",
    .about = "Check that each FILE is a good hpckit file of its kind - hpc-odegen output (plain or joined), "
             "/X,/Y training data, an hpc-train checkpoint or model, an hpc-matmul matrix or output, "
             "metrics.csv - against the kind's schema (PREFIX/share/hpckit/data/schemas): every dataset there "
             "with its shape in named dimensions and its type, the attributes, a joined file's shards, a "
             "checkpoint's version, and every value where NaN or a label below 0 is not allowed. One line per "
             "problem, \"FILE: /path: what is wrong\". The programs check their inputs the same way (the "
             "structure) before they allocate anything.",
    .opts = options,
    .epilog = "Exit status: 0 every file is good, 1 a problem (or a file that cannot be read), 2 a bad option "
              "or kind.\n"
              "\nExamples:\n"
              "  # an hpc-odegen output and a training run's checkpoint, every value\n"
              "  hpc-h5check ode.h5 run/checkpoint.h5\n"
              "  # the structure only of a large file, held to a kind\n"
              "  hpc-h5check --structure --kind train-xy data.h5\n"
              "  # the kinds hpckit knows\n"
              "  hpc-h5check --list-kinds\n",
    .guide = "data.md"};

static void print_problem(void *ctx, const char *line)
{
    printf("%s: %s\n", (const char *)ctx, line);
}

/* FILE:/DATASET -> the file (in buf) and the dataset, where FILE exists */
static const char *split(const char *arg, char *buf, size_t len, const char **dataset)
{
    const char *colon = strstr(arg, ":/");
    struct stat st;
    *dataset = NULL;
    snprintf(buf, len, "%s", arg);
    if (colon && stat(arg, &st) != 0) {
        buf[colon - arg] = '\0';
        *dataset = colon + 1;
    }
    return buf;
}

/* one file: 0 good, 1 not */
static int check_one(const char *arg)
{
    char path[4096], *found = NULL;
    const char *dataset;
    split(arg, path, sizeof path, &dataset);
    /* FILE:/DATASET names a dataset of the one input kind whose dataset
     * the user names (hpc-matmul's --a, --b: a matrix, whatever else the
     * file holds); a plain FILE is the kind its datasets show */
    const char *k = kind ? kind : dataset ? "matrix" : NULL;
    if (!k && hpc_check_detect(path, NULL, &found) == 0) k = found;
    hpc_error_clear();
    int n = hpc_check_file(path, dataset, k, structure ? 0 : HPC_CHECK_VALUES, print_problem, (void *)arg);
    if (n < 0) printf("%s: %s\n", arg, hpc_last_cause());
    else if (n == 0 && !hpc_app_quiet()) printf("%s: ok, %s\n", arg, k);
    free(found);
    return n != 0;
}

static void list_kinds(void)
{
    const char *all = hpc_check_kinds();
    for (const char *p = all; *p;) {
        size_t w = strcspn(p, " ");
        char k[64];
        snprintf(k, sizeof k, "%.*s", (int)w, p);
        const char *s = hpc_check_schema(k), *t = s ? strstr(s, "\"title\": \"") : NULL;
        printf("%-14s %.*s\n", k, t ? (int)strcspn(t + 10, "\"") : 0, t ? t + 10 : "");
        p += w + (p[w] == ' ');
    }
}

int main(int argc, char **argv)
{
    hpc_app_start(&app, &argc, &argv);
    const char *only = schema ? schema : markdown ? markdown : kind;
    if (only && !hpc_check_schema(only))
        hpc_app_exit(HPC_EXIT_USAGE, "no file kind '%s' (the kinds: %s)", only, hpc_check_kinds());
    if (!list && !schema && !markdown && files.n == 0)
        hpc_app_exit(HPC_EXIT_USAGE, "no FILE to check (see --help)");
    int bad = 0;
    if (hpc_rank() == 0) {
        if (list) list_kinds();
        else if (schema) fputs(hpc_check_schema(schema), stdout);
        else if (markdown) hpc_check_markdown(markdown, stdout);
        for (int i = 0; !list && !schema && !markdown && i < files.n; i++) bad += check_one(files.v[i]);
        fflush(stdout);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, hpc_comm_world());
    if (bad) hpc_app_exit(HPC_EXIT_DATA, "%d of %d file%s not good", bad, files.n, files.n == 1 ? "" : "s");
    return hpc_app_finish();
}
