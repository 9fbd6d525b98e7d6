/* hpc_app_h5.h - the app kit's HDF5 part: outputs, checkpoints, file kinds.
 *
 * What a program that writes or reads HDF5 adds to hpc_app.h, in its own
 * library (libhpc-h5, with hpc_h5.h), so that a program without HDF5
 * files (hpc-info, hpc-collbench) neither compiles nor links against HDF5:
 *   - resumable outputs: options key + done flags + lock + atomic finish,
 *     their parts written by a background writer;
 *   - checkpoints of named arrays, replaced atomically;
 *   - file kinds: every file hpckit reads or writes held to its schema.
 */
#ifndef HPC_APP_H5_H
#define HPC_APP_H5_H

#include <stdio.h>
#include <hpc.h>
#include <hpc_h5.h>
#include <hpc_app.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Resumable outputs: PATH.partial with the options key and one done    */
/* flag per part; the run writes parts in any order; --resume continues */
/* the parts not done; the final name appears only when all are.        */
/* ------------------------------------------------------------------ */
typedef struct hpc_out hpc_out_t;
enum { HPC_OUT_NEW = 0, HPC_OUT_FORCE = 1, HPC_OUT_RESUME = 2 };
enum { HPC_OUT_CREATED = 0, HPC_OUT_RESUMED = 1, HPC_OUT_COMPLETE = 2 };
/* Collective over comm.  mode: NEW (PATH must not exist), FORCE (replace
 * it), RESUME (continue PATH.partial if its options key equals key - else
 * one line naming the first difference; a complete PATH is left alone;
 * neither: start afresh).  bytes: the size the output will have, checked
 * against the free space of its folder before anything is written and
 * then reserved on disk (hpc_h5_create_reserved; resumed: hpc_h5_reserve),
 * so that a disk filled by others mid-run cannot fail its writes.
 * done_dataset: where the done flags live ("stats/done").  After
 * HPC_OUT_CREATED the app creates its datasets and calls hpc_out_ready;
 * after HPC_OUT_RESUMED it opens and checks them (shapes AND types). */
HPC_EXPORT int hpc_out_open(const char *path, MPI_Comm comm, int mode, const char *key,
                            int64_t nparts, const char *done_dataset, double bytes,
                            hpc_out_t **out);
HPC_EXPORT int hpc_out_state(const hpc_out_t *o);
HPC_EXPORT hpc_h5file_t *hpc_out_file(const hpc_out_t *o);
HPC_EXPORT const uint8_t *hpc_out_done(const hpc_out_t *o);  /* [nparts] */
HPC_EXPORT int64_t hpc_out_ndone(const hpc_out_t *o);
/* Collective, after the datasets are created: writes the key and the
 * provenance (program = hpc_app_name()), puts the metadata on disk. */
HPC_EXPORT int hpc_out_ready(hpc_out_t *o, int argc, char **argv);
/* Independent: part's data is written; make it durable, then flag it. */
HPC_EXPORT int hpc_out_part_done(hpc_out_t *o, int64_t part);
/* Parts written in the background (libhpc/app/writer.c): a thread of
 * this rank runs fn(arg, checksums) for each batch handed over - fn
 * writes the batch's rows with hpc_h5_raw_* only (no MPI, no other HDF5
 * call) and gives one checksum (hpc_hash64 of the bytes it wrote) per
 * part, or -errno - and records the checksums in the file.  Every
 * sync_every seconds (0: after each batch) and when it stops, it syncs
 * the data and then flags the parts written before as done.  A killed
 * process loses no part (hpc_out_recover finds them); a crashed node
 * loses at most sync_every seconds of them.  Independent. */
typedef int (*hpc_out_write_fn)(void *arg, uint64_t *checksums);
HPC_EXPORT int hpc_out_writer_start(hpc_out_t *o, double sync_every);
/* Hands parts[0..n) (one batch) to the writer; returns once the batch
 * handed over before is written (its buffers are free again), or with
 * the writer's first error (HPC_ERR_IO naming the part and the cause). */
HPC_EXPORT int hpc_out_submit(hpc_out_t *o, const int64_t *parts, int n, hpc_out_write_fn fn, void *arg);
/* Everything handed over written, synced and flagged; the writer stops.
 * Its first error, or 0.  hpc_out_finish drains too. */
HPC_EXPORT int hpc_out_drain(hpc_out_t *o);
/* Collective, after a resume: parts an earlier run wrote but did not flag
 * (it was killed between syncs): each is re-read by one rank with
 * verify(arg, part, &checksum), the same checksum its write gave, and
 * counted as done where they match.  *recovered: how many. */
typedef int (*hpc_out_verify_fn)(void *arg, int64_t part, uint64_t *checksum);
HPC_EXPORT int hpc_out_recover(hpc_out_t *o, hpc_out_verify_fn verify, void *arg, int64_t *recovered);
/* Collective.  ok: this rank's verdict.  Records wall_time, ranks, runs
 * (and resume_command_line after a resume), syncs, renames to PATH.
 * Frees o.  The app has closed its datasets. */
HPC_EXPORT int hpc_out_finish(hpc_out_t *o, int ok, double wall, int argc, char **argv);
/* The attributes hpc_out_finish writes, which differ between runs that
 * produce the same data (for comparing files). */
#define HPC_OUT_VOLATILE_ATTRS "command_line created ranks wall_time runs resume_command_line"

/* ------------------------------------------------------------------ */
/* Checkpoints: named arrays and attributes in one HDF5 file, replaced  */
/* atomically - PATH.partial is written, synced and renamed, so PATH is */
/* always the last complete checkpoint and the previous one stays valid */
/* until the new one is.  For state that every rank holds alike (a      */
/* replicated model): rank 0's data is written, the other ranks take    */
/* part in the collective calls.                                        */
/* ------------------------------------------------------------------ */
typedef struct hpc_ckpt hpc_ckpt_t;
/* Collective: 1 if PATH exists (rank 0 looks), else 0. */
HPC_EXPORT int hpc_ckpt_exists(const char *path, MPI_Comm comm);
/* Collective over comm.  Start writing checkpoint PATH (as PATH.partial,
 * under PATH.lock); records key (the options key: attribute "options")
 * and the provenance (program = hpc_app_name()). */
HPC_EXPORT int hpc_ckpt_begin(const char *path, MPI_Comm comm, const char *key, int argc,
                              char **argv, hpc_ckpt_t **out);
/* Collective.  The same with the disk reserved first for bytes of arrays
 * (and HDF5's metadata): a full disk is HPC_ERR_IO "no room for
 * 'PATH.partial': it needs N MiB, its folder has M MiB free" before
 * anything is written, PATH untouched (hpc_h5_create_reserved). */
HPC_EXPORT int hpc_ckpt_begin_sized(const char *path, MPI_Comm comm, const char *key, int argc,
                                    char **argv, double bytes, hpc_ckpt_t **out);
/* Collective.  Array name (groups created: "model/0/weight") of ndims
 * dims, stored as memtype, from rank 0's data (other ranks: not read). */
HPC_EXPORT int hpc_ckpt_put(hpc_ckpt_t *c, const char *name, hid_t memtype, int ndims,
                            const hsize_t *dims, const void *data);
/* Collective.  The same from rank writer's data (the others: not read),
 * for state that ranks hold in parts (a pipeline stage's layers). */
HPC_EXPORT int hpc_ckpt_put_from(hpc_ckpt_t *c, const char *name, hid_t memtype, int ndims,
                                 const hsize_t *dims, const void *data, int writer);
/* Collective.  The same, each rank writing its own run of the array's
 * elements in row-major order, [first, first + count) (count 0: none),
 * for state that ranks hold in slices (a sharded optimiser); the runs of
 * all ranks together should cover the array. */
HPC_EXPORT int hpc_ckpt_put_part(hpc_ckpt_t *c, const char *name, hid_t memtype, int ndims,
                                 const hsize_t *dims, const void *data, size_t first, size_t count);
/* The file, for attributes (hpc_h5_attr_set_*: collective, one value for
 * all ranks; hpc_h5_attr_get_* when reading). */
HPC_EXPORT hid_t hpc_ckpt_id(const hpc_ckpt_t *c);
/* Collective.  ok: this rank's verdict.  Every rank ok: PATH.partial is
 * synced and renamed to PATH.  Otherwise PATH is untouched and
 * HPC_ERR_IO is returned everywhere.  Frees c. */
HPC_EXPORT int hpc_ckpt_commit(hpc_ckpt_t *c, int ok);
/* Collective.  Open checkpoint PATH to read it.  key != NULL: the file's
 * options key must equal it, else HPC_ERR_DATA naming the first
 * difference ("layers: 11,64,10 in the file, 11,32,10 now").  No PATH:
 * HPC_ERR_IO; not a readable HDF5 file (damaged, truncated): HPC_ERR_DATA. */
HPC_EXPORT int hpc_ckpt_open(const char *path, MPI_Comm comm, const char *key, hpc_ckpt_t **out);
/* Collective.  Read array name into data on every rank; its shape must be
 * exactly dims and its class that of memtype (HPC_ERR_DATA naming it). */
HPC_EXPORT int hpc_ckpt_get(hpc_ckpt_t *c, const char *name, hid_t memtype, int ndims,
                            const hsize_t *dims, void *data);
/* Collective.  The same for the run [first, first + count) of its
 * elements in row-major order only (count 0: none), into data. */
HPC_EXPORT int hpc_ckpt_get_part(hpc_ckpt_t *c, const char *name, hid_t memtype, int ndims,
                                 const hsize_t *dims, void *data, size_t first, size_t count);
/* Collective.  Close a checkpoint opened for reading. */
HPC_EXPORT int hpc_ckpt_close(hpc_ckpt_t *c);

/* ------------------------------------------------------------------ */
/* File kinds: every file hpckit reads or writes against its schema     */
/* ------------------------------------------------------------------ */
/* The schemas are data/schemas/KIND.json (installed under
 * share/hpckit/data/schemas, built into libhpc): datasets with their
 * shapes in named dimensions, types, required attributes, what values
 * may hold (docs/data.md, "Schemas"); hpc-h5check is their command
 * line.  Kinds: odegen, odegen-joined, train-xy, train-labels, model,
 * checkpoint, matrix, matmul-output, metrics. */
typedef void (*hpc_check_report_t)(void *ctx, const char *problem);
enum {
    HPC_CHECK_VALUES = 1   /* also read every value: NaN or infinity where
                              the schema allows none, labels below 0,
                              codes not in the list (without it: the
                              structure only, metadata reads) */
};
/* The kinds, space-separated; a kind's schema (the JSON text), or NULL. */
HPC_EXPORT const char *hpc_check_kinds(void);
HPC_EXPORT const char *hpc_check_schema(const char *kind);
/* Local.  The kind of the file at path among kinds ("a|b|c"; NULL: all):
 * the one whose "detect" marks the file holds (the most specific where
 * several do), malloc'd into *kind; NULL where none does.  A file that
 * cannot be read (missing, not HDF5 or text) is HPC_ERR_IO/HPC_ERR_DATA
 * naming it. */
HPC_EXPORT int hpc_check_detect(const char *path, const char *kinds, char **kind);
/* Local.  Check the file at path against kind's schema (dataset: the
 * user's FILE:/DATASET for a kind whose dataset is named so, or NULL);
 * each problem found is one line to report(ctx, line) - "/y: int32,
 * expected float64 or float32" - and the count is returned (0: the file
 * is a good KIND).  A negative code where it could not check at all (an
 * unknown kind: HPC_ERR_ARG; a file that cannot be opened: HPC_ERR_IO). */
HPC_EXPORT int hpc_check_file(const char *path, const char *dataset, const char *kind, int flags,
                              hpc_check_report_t report, void *ctx);
/* The kind's tables in Markdown (the guides' tables are this output). */
HPC_EXPORT int hpc_check_markdown(const char *kind, FILE *out);
/* Collective.  A program's input, checked before anything is allocated:
 * rank 0 finds its kind among kinds ("train-xy|odegen") and checks its
 * structure; a file of another kind or with a problem is one line
 * "what FILE: problem" from rank 0 and exit 1 on every rank.  Returns
 * the kind found (static storage, one of kinds) where it is good. */
HPC_EXPORT const char *hpc_app_check_input(const char *what, const char *path, const char *dataset,
                                           const char *kinds);

#ifdef __cplusplus
}
#endif
#endif /* HPC_APP_H5_H */
