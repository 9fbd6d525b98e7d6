/* settings_rows.h - the collectives' HPC_* settings, declared once, beside
 * the code that reads them (as MPICH's CVAR blocks sit beside theirs).
 * Macros only, no code and no symbols: three expansions of the same rows
 *
 *   libhpc/settings.c        the rows of the one settings table (names,
 *                            defaults, ranges, help: hpc-info --settings,
 *                            the README, the unknown-name warning)
 *   coll/coll_internal.h     the fields of coll_settings_t
 *   coll/settings_cache.c    the loop that fills them (offsetof, as UCX
 *                            fills its config structs)
 *
 * so a setting's default and range are written once and adding one is a
 * row here and its use.  settings.c (the core) includes this file: the
 * table is data gathered where the unknown-name check can see every name
 * before the collectives run, as MPICH gathers its CVARs into one file.
 *
 *   X(field, NAME, TYPE, DEFAULT, MIN, MAX, VALUES, HELP)
 *
 *   field    its coll_settings_t member; its C type follows TYPE:
 *            FLAG int (-1: unset and no default), SECONDS and NUMBER
 *            double, BYTES size_t (VALUES's word for "off": SIZE_MAX),
 *            TEXT char[COLL_SETTING_TEXT]
 *   the rest as hpc_setting_t (hpc.h); every row is read by "collectives"
 *
 * The per-collective overrides HPC_COLL_<OP> are rows too, one per row of
 * colls.h (COLL_FORCE_ROW below), kept as written in coll_settings_t's
 * force[] for select.c to parse.
 */
#ifndef COLL_SETTINGS_ROWS_H
#define COLL_SETTINGS_ROWS_H

#define COLL_SETTING_TEXT 1024

#define COLL_SETTINGS(X)                                                                                     \
    X(timeout, "HPC_TIMEOUT", SECONDS, "0", 0, INFINITY, NULL,                                               \
      "abort a collective not done in this time (0: never)")                                                 \
    X(cuda_aware, "HPC_CUDA_AWARE", FLAG, NULL, 0, 1, NULL,                                                  \
      "the MPI library takes device pointers (default: asked of MPI)")                                       \
    X(tuning, "HPC_COLL_TUNING", TEXT, "", 0, 0, "FILE",                                                     \
      "the table hpc-collbench --tune wrote: algorithms by collective, nodes, ranks per node, memory, bytes") \
    X(segment, "HPC_COLL_SEGMENT", BYTES, "128K", 64, INFINITY, NULL, "pipeline segment of ring and tree")    \
    X(stall, "HPC_COLL_STALL", SECONDS, "1", 0, INFINITY, NULL,                                              \
      "a call with no progress this long looks for ranks running another algorithm (0: never)")              \
    X(yield, "HPC_COLL_YIELD", FLAG, NULL, 0, 1, NULL,                                                       \
      "yield the core while waiting (default: where the node has more ranks than cores)")                    \
    X(alpha, "HPC_COLL_ALPHA", NUMBER, "2e-6", 0, INFINITY, "s", "cost model: seconds per message")          \
    X(beta, "HPC_COLL_BETA", NUMBER, "2e-10", 0, INFINITY, "s/byte", "cost model: seconds per byte sent")    \
    X(gamma, "HPC_COLL_GAMMA", NUMBER, "2.5e-10", 0, INFINITY, "s/byte", "cost model: seconds per byte reduced") \
    X(alpha_inter, "HPC_COLL_ALPHA_INTER", NUMBER, "5e-6", 0, INFINITY, "s",                                 \
      "cost model: seconds per message between nodes")                                                       \
    X(beta_inter, "HPC_COLL_BETA_INTER", NUMBER, "4e-10", 0, INFINITY, "s/byte",                             \
      "cost model: seconds per byte between nodes")                                                          \
    X(alpha_shm, "HPC_COLL_ALPHA_SHM", NUMBER, "2e-7", 0, INFINITY, "s",                                     \
      "cost model: a flag handed to another core through shared memory")                                     \
    X(beta_shm, "HPC_COLL_BETA_SHM", NUMBER, "1.25e-10", 0, INFINITY, "s/byte",                              \
      "cost model: one core's copy, per byte")                                                               \
    X(single_copy, "HPC_COLL_SINGLE_COPY", BYTES, "64K", 0, INFINITY, "off",                                 \
      "shm moves messages of at least this size by single copy (process_vm_readv) where the kernel "         \
      "allows it (0: all; off: never)")                                                                      \
    X(pool_max, "HPC_COLL_POOL_MAX", BYTES, "256M", 0, INFINITY, NULL,                                       \
      "scratch buffers kept per communicator for reuse")                                                     \
    X(pool_idle, "HPC_COLL_POOL_IDLE", SECONDS, "10", 0, INFINITY, NULL,                                     \
      "free kept scratch buffers unused this long")

/* a coll_settings_t member of the setting's type */
#define COLL_SETTING_FIELD(field, NAME, TYPE, ...) COLL_SETTING_FIELD_##TYPE(field)
#define COLL_SETTING_FIELD_FLAG(f) int f;
#define COLL_SETTING_FIELD_SECONDS(f) double f;
#define COLL_SETTING_FIELD_NUMBER(f) double f;
#define COLL_SETTING_FIELD_BYTES(f) size_t f;
#define COLL_SETTING_FIELD_TEXT(f) char f[COLL_SETTING_TEXT];

/* its row of the settings table */
#define COLL_SETTING_ROW(field, NAME, TYPE, DEF, MIN, MAX, VALUES, HELP) \
    {NAME, HPC_SET_##TYPE, DEF, MIN, MAX, VALUES, "collectives", HELP, NULL},

/* HPC_COLL_<OP>, for a row of colls.h's COLL_TABLE: its name, and its
 * row (the algorithm a name allows is select.c's to check, at the call) */
#define COLL_FORCE_VAR(name, ENUM, ...) "HPC_COLL_" #ENUM,
#define COLL_FORCE_ROW(name, ENUM, ...)                                       \
    {COLL_FORCE_VAR(name, ENUM) HPC_SET_TEXT, "auto", 0, 0, "ALG", "collectives", \
     "force the algorithm auto picks for " #name " (its names: hpc-collbench --help)", NULL},

#endif
