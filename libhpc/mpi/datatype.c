/* datatype.c - MPI datatypes as libhpc sees them (libhpc-mpi.so).
 *
 * libhpc moves and reduces arrays of its own element types.  MPI lets the
 * ranks of one call pass different datatypes as long as the type
 * *signatures* match: the root may receive 12 MPI_DOUBLE while the others
 * send one vector of 12 doubles, one side may pass a duplicate
 * (MPI_Type_dup) or a contiguous type against its basic count, and
 * predefined pair types such as MPI_DOUBLE_INT hold 12 bytes of data in 16
 * of memory.  What every rank of a correct call agrees on is the number of
 * bytes of data (the signature's size), so data movement goes as bytes:
 * the caller's buffer itself where its type is dense - a named type with
 * no gaps, or duplicates and contiguous runs of one - and otherwise a copy
 * packed with MPI_Pack (on a homogeneous job the packed form of a type is
 * its signature's bytes in order, the same bytes a dense buffer holds),
 * unpacked with MPI_Unpack at the end (MPI_BOTTOM with a type of absolute
 * addresses too: packed from a real address, see shifted()).
 *
 * Reductions must pass the same type and op on every rank (MPI's rule),
 * so they are served by type: a duplicate or contiguous run of a type
 * libhpc reduces counts as that many of its elements; anything else (pair
 * types with MINLOC/MAXLOC, unsigned, user ops) falls through to MPI on
 * every rank alike.
 */
#include "config.h"
#include "pmpi.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The predefined types programs pass most, by handle: dense, of this
 * size (no questions to MPI on the path of a small call); 0: ask MPI. */
static size_t known_size(MPI_Datatype t)
{
    if (t == MPI_DOUBLE || t == MPI_INT64_T || t == MPI_UINT64_T) return 8;
    if (t == MPI_FLOAT || t == MPI_INT32_T || t == MPI_UINT32_T) return 4;
    if (t == MPI_INT || t == MPI_UNSIGNED) return sizeof(int);
    if (t == MPI_LONG || t == MPI_UNSIGNED_LONG) return sizeof(long);
    if (t == MPI_LONG_LONG) return sizeof(long long);
    if (t == MPI_CHAR || t == MPI_BYTE || t == MPI_SIGNED_CHAR || t == MPI_UNSIGNED_CHAR) return 1;
    return 0;
}

static int is_named(MPI_Datatype t)
{
    int ni, na, nd, comb;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) return 0;
    return comb == MPI_COMBINER_NAMED;
}

/* t is count-times its named base type: duplicates and contiguous runs
 * down to a named type (*base; *mult of them per element of t); 0 if t is
 * built otherwise. */
static int base_of(MPI_Datatype t, MPI_Datatype *base, size_t *mult)
{
    MPI_Datatype cur = t;
    int owned = 0, ok = 0;
    size_t m = 1;
    for (int depth = 0; depth < 16 && !ok; depth++) {
        int ni, na, nd, comb;
        if (cur == MPI_DATATYPE_NULL || PMPI_Type_get_envelope(cur, &ni, &na, &nd, &comb) != MPI_SUCCESS) break;
        if (comb == MPI_COMBINER_NAMED) {
            ok = 1;
            break;
        }
        if ((comb != MPI_COMBINER_DUP && comb != MPI_COMBINER_CONTIGUOUS) || ni > 1 || na != 0 || nd != 1) break;
        int cnt = 1;
        MPI_Aint unused = 0;
        MPI_Datatype inner;
        if (PMPI_Type_get_contents(cur, ni, 0, 1, &cnt, &unused, &inner) != MPI_SUCCESS) break;
        if (comb == MPI_COMBINER_CONTIGUOUS) m *= cnt > 0 ? (size_t)cnt : 0;
        if (owned) PMPI_Type_free(&cur);
        cur = inner;
        owned = !is_named(inner);    /* named types come back as themselves */
    }
    if (!ok) {
        if (owned) PMPI_Type_free(&cur);
        return 0;
    }
    *base = cur;
    *mult = m;
    return 1;
}

/* A named type whose data fills its extent from 0: not MPI_DOUBLE_INT
 * (12 bytes in 16), MPI_SHORT_INT, MPI_LONG_INT, MPI_LONG_DOUBLE_INT. */
static int dense_named(MPI_Datatype t)
{
    MPI_Count size = 0, lb = 0, ext = 0, tlb = 0, text = 0;
    if (PMPI_Type_size_x(t, &size) != MPI_SUCCESS || PMPI_Type_get_extent_x(t, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_x(t, &tlb, &text) != MPI_SUCCESS)
        return 0;
    return lb == 0 && tlb == 0 && ext == size && text == size;
}

/* The caller's buffer can be moved as it is. */
static int dense(MPI_Datatype t)
{
    if (known_size(t)) return 1;
    MPI_Datatype base;
    size_t mult;
    return base_of(t, &base, &mult) && dense_named(base);
}

int pm_bytes(MPI_Datatype t, size_t count, size_t *bytes)
{
    MPI_Count size = (MPI_Count)known_size(t);
    if (!size && (t == MPI_DATATYPE_NULL || PMPI_Type_size_x(t, &size) != MPI_SUCCESS || size < 0 ||
                  size == MPI_UNDEFINED))
        return -1;
    if (count && (size_t)size > SIZE_MAX / count) return -1;
    *bytes = (size_t)size * count;
    return 0;
}

/* ---- reductions -------------------------------------------------------- */
/* libhpc's dtype for reducing the named MPI type t, or -1 */
static int red_named(MPI_Datatype t)
{
    if (t == MPI_FLOAT) return HPC_FLOAT32;
    if (t == MPI_DOUBLE) return HPC_FLOAT64;
    if (t == MPI_INT32_T) return HPC_INT32;
    if (t == MPI_INT64_T) return HPC_INT64;
    if (t == MPI_INT || t == MPI_LONG || t == MPI_LONG_LONG) {
        size_t sz = known_size(t);
        return sz == 4 ? HPC_INT32 : sz == 8 ? HPC_INT64 : -1;
    }
    return -1;
}

int pm_red_type(MPI_Datatype t, int count, hpc_dtype_t *dt, size_t *n)
{
    MPI_Datatype base;
    size_t mult;
    int d = count < 0 ? -1 : red_named(t);
    if (d >= 0) {
        /* a named type itself: the common case, no questions to MPI */
        *dt = (hpc_dtype_t)d;
        *n = (size_t)count;
        return 1;
    }
    if (count < 0 || !base_of(t, &base, &mult)) return 0;
    d = red_named(base);
    if (d < 0 || (mult && (size_t)count > SIZE_MAX / mult)) return 0;
    *dt = (hpc_dtype_t)d;
    *n = (size_t)count * mult;
    return 1;
}

/* ---- packing ----------------------------------------------------------- */
/* MPI_BOTTOM is a legal buffer (the type holds absolute addresses), but
 * MPICH's MPI_Pack and MPI_Unpack refuse a NULL buffer: the same layout
 * is packed from a real address instead, through a type that holds t
 * once at minus that address (its extent and size are t's). */
static char anchor;

static int shifted(MPI_Datatype t, MPI_Datatype *out)
{
    int one = 1;
    MPI_Aint at, disp;
    if (PMPI_Get_address(&anchor, &at) != MPI_SUCCESS) return -1;
    disp = -at;
    if (PMPI_Type_create_hindexed(1, &one, &disp, t, out) != MPI_SUCCESS) return -1;
    if (PMPI_Type_commit(out) != MPI_SUCCESS) {
        PMPI_Type_free(out);
        return -1;
    }
    return 0;
}

/* Elements first..first+n-1 of t at buf to or from out (which holds
 * them from its start).  MPI_Pack and MPI_Unpack count in int: pieces of
 * at most INT_MAX bytes and elements.  Each piece must pack to exactly
 * its signature's bytes. */
static int pack(const void *buf, size_t first, size_t n, MPI_Datatype t, char *out, int unpack)
{
    MPI_Count size = 0, lb = 0, ext = 0;
    if (PMPI_Type_size_x(t, &size) != MPI_SUCCESS || PMPI_Type_get_extent_x(t, &lb, &ext) != MPI_SUCCESS)
        return -1;
    if (size == 0 || n == 0) return 0;
    size_t chunk = (size_t)INT_MAX / (size_t)size;
    if (chunk == 0) return -1;
    MPI_Datatype sh = MPI_DATATYPE_NULL;
    if (buf == MPI_BOTTOM) {
        if (shifted(t, &sh) < 0) return -1;
        buf = &anchor;
        t = sh;
    }
    int rc = 0;
    for (size_t j = 0; j < n && !rc; j += chunk) {
        size_t k = n - j < chunk ? n - j : chunk;
        char *elem = (char *)buf + (ptrdiff_t)(first + j) * (ptrdiff_t)ext;
        char *bytes = out + j * (size_t)size;
        int pos = 0, e;
        if (unpack) e = PMPI_Unpack(bytes, (int)(k * (size_t)size), &pos, elem, (int)k, t, MPI_COMM_WORLD);
        else e = PMPI_Pack(elem, (int)k, t, bytes, (int)(k * (size_t)size), &pos, MPI_COMM_WORLD);
        if (e != MPI_SUCCESS || (size_t)pos != k * (size_t)size) rc = -1;
    }
    if (sh != MPI_DATATYPE_NULL) PMPI_Type_free(&sh);
    return rc;
}

int pm_view(pm_view_t *v, const void *buf, size_t n, MPI_Datatype t, int how, void **lib, const char **why)
{
    memset(v, 0, sizeof *v);
    v->user = (void *)buf;
    v->n = n;
    v->type = t;
    if (dense(t)) {
        *lib = (void *)buf;
        return 0;
    }
    size_t bytes;
    if (pm_bytes(t, n, &bytes) < 0) return *why = "a datatype MPI refuses", -1;
    if (!(v->tmp = malloc(bytes ? bytes : 1))) return *why = "out of memory for a packed copy", -1;
    if ((how & PM_IN) && pack(buf, 0, n, t, v->tmp, 0) < 0) {
        pm_view_end(v, why);
        return *why = "MPI_Pack did not give the type signature's bytes", -1;
    }
    /* the caller may free its type before a nonblocking call ends */
    if (how & PM_OUT) {
        if (PMPI_Type_dup(t, &v->type) != MPI_SUCCESS) {
            v->type = t;
            pm_view_end(v, why);
            return *why = "MPI_Type_dup failed", -1;
        }
        v->dup = v->out = 1;
    }
    *lib = v->tmp;
    return 0;
}

int pm_view_pack(pm_view_t *v, size_t first, size_t n, const char **why)
{
    MPI_Count size = 0;
    if (!v->tmp) return 0;
    if (PMPI_Type_size_x(v->type, &size) != MPI_SUCCESS ||
        pack(v->user, first, n, v->type, v->tmp + first * (size_t)size, 0) < 0)
        return *why = "MPI_Pack did not give the type signature's bytes", -1;
    return 0;
}

int pm_view_end(pm_view_t *v, const char **why)
{
    int rc = 0;
    if (v->out && v->tmp && pack(v->user, 0, v->n, v->type, v->tmp, 1) < 0) {
        *why = "MPI_Unpack did not take the type signature's bytes";
        rc = -1;
    }
    if (v->dup) PMPI_Type_free(&v->type);
    free(v->tmp);
    memset(v, 0, sizeof *v);
    return rc;
}
