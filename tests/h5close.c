/* h5close - two HDF5 datasets of the same shape compared value by value,
 * for results that may differ in the last bits (hpc-odegen on the GPU
 * against the CPU: CUDA's pow() rounds differently from glibc's, so step
 * sizes, and with them the values, differ by an ulp or two).  A pair is
 * close when
 *     |a - b| <= rtol |a|   or   |a - b| <= floor * max|a|
 * (max over the whole dataset: a value that crosses zero has no relative
 * precision, only one against the solution's scale); NaN only where the
 * other is NaN.  rtol 0 and floor 0: bit equality.  Prints the worst of
 * both measures; exit 0 if every pair is close, 1 if not, 2 on bad input.
 *
 *   h5close FILE1 FILE2 DATASET RTOL [FLOOR]
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <hdf5.h>

static double *load(const char *file, const char *name, hssize_t *n)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return NULL;
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t s = d < 0 ? -1 : H5Dget_space(d);
    double *v = NULL;
    *n = s < 0 ? -1 : H5Sget_simple_extent_npoints(s);
    if (*n >= 0 && (v = malloc((size_t)(*n ? *n : 1) * sizeof *v)) &&
        H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
        free(v);
        v = NULL;
    }
    if (s >= 0) H5Sclose(s);
    if (d >= 0) H5Dclose(d);
    H5Fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: h5close FILE1 FILE2 DATASET RTOL [FLOOR]\n");
        return 2;
    }
    double rtol = atof(argv[4]), floor_ = argc > 5 ? atof(argv[5]) : 0;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hssize_t na, nb;
    double *a = load(argv[1], argv[3], &na), *b = load(argv[2], argv[3], &nb);
    if (!a || !b || na != nb) {
        fprintf(stderr, "h5close: cannot read %s from both files, or their sizes differ\n", argv[3]);
        return 2;
    }
    double scale = 0, worst_rel = 0, worst_scaled = 0;
    for (hssize_t i = 0; i < na; i++)
        if (isfinite(a[i]) && fabs(a[i]) > scale) scale = fabs(a[i]);
    hssize_t bad = 0, first = -1;
    for (hssize_t i = 0; i < na; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            if (!(isnan(a[i]) && isnan(b[i])) && !bad++) first = i;
            continue;
        }
        double d = a[i] == b[i] ? 0 : fabs(a[i] - b[i]);
        double rel = d == 0 ? 0 : a[i] != 0 ? d / fabs(a[i]) : INFINITY;
        double scaled = scale > 0 ? d / scale : d;
        if (rel > worst_rel) worst_rel = rel;
        if (scaled > worst_scaled) worst_scaled = scaled;
        if (d > 0 && !(rel <= rtol || scaled <= floor_) && !bad++) first = i;
    }
    printf("h5close: %s: %lld values, worst %.3g relative, %.3g of the scale (max |a| %.6g); bound %g relative "
           "or %g of the scale: %s", argv[3], (long long)na, worst_rel, worst_scaled, scale, rtol, floor_,
           bad ? "FAIL" : "ok");
    if (bad) printf(", %lld beyond (first at element %lld: %.17g against %.17g)", (long long)bad, (long long)first,
                    a[first], b[first]);
    printf("\n");
    free(a);
    free(b);
    return bad ? 1 : 0;
}
