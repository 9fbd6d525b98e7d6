/* h5_attr.c - attributes: strings, numbers and vectors, set (replacing)
 * and read back with their type checked. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpc_h5.h"
#include "internal.h"
#include "h5_internal.h"

static int attr_write(hid_t obj, const char *name, hid_t type, hid_t space, const void *buf)
{
    QUIET;
    if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0)
        return hpc_error_hdf5(__FILE__, __LINE__, "H5Adelete");
    hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = a < 0 ? -1 : H5Awrite(a, type, buf);
    int rc = e < 0 ? hpc_error_hdf5(__FILE__, __LINE__, "H5Awrite") : 0;
    if (a >= 0) H5Aclose(a);
    if (rc) hpc_error_set(rc, __FILE__, __LINE__, __func__, "cannot write attribute '%s'", name);
    return rc;
}

static hid_t vlstr_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

int hpc_h5_attr_set_string(hid_t obj, const char *name, const char *value)
{
    hid_t t = vlstr_type(), s = H5Screate(H5S_SCALAR);
    int rc = attr_write(obj, name, t, s, &value);
    H5Sclose(s);
    H5Tclose(t);
    return rc;
}

static int attr_scalar(hid_t obj, const char *name, hid_t type, const void *v)
{
    hid_t s = H5Screate(H5S_SCALAR);
    int rc = attr_write(obj, name, type, s, v);
    H5Sclose(s);
    return rc;
}

int hpc_h5_attr_set_double(hid_t obj, const char *name, double v)
{
    return attr_scalar(obj, name, H5T_NATIVE_DOUBLE, &v);
}

int hpc_h5_attr_set_int64(hid_t obj, const char *name, int64_t v)
{
    return attr_scalar(obj, name, H5T_NATIVE_INT64, &v);
}

static int attr_vector(hid_t obj, const char *name, hid_t type, const void *v, size_t n)
{
    hsize_t dim = n;
    hid_t s = H5Screate_simple(1, &dim, NULL);
    int rc = attr_write(obj, name, type, s, v);
    H5Sclose(s);
    return rc;
}

int hpc_h5_attr_set_doubles(hid_t obj, const char *name, const double *v, size_t n)
{
    return attr_vector(obj, name, H5T_NATIVE_DOUBLE, v, n);
}

int hpc_h5_attr_set_int64s(hid_t obj, const char *name, const int64_t *v, size_t n)
{
    return attr_vector(obj, name, H5T_NATIVE_INT64, v, n);
}

static int attr_read(hid_t obj, const char *name, hid_t memtype, void *buf)
{
    QUIET;
    if (H5Aexists(obj, name) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return HPC_ERR(HPC_ERR_DATA, "attribute '%s' is missing", name);
    }
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    herr_t e = a < 0 ? -1 : H5Aread(a, memtype, buf);
    if (a >= 0) H5Aclose(a);
    if (e < 0) {
        hpc_error_hdf5(__FILE__, __LINE__, "H5Aread");
        return HPC_ERR(HPC_ERR_DATA, "attribute '%s' cannot be read as the expected type", name);
    }
    return 0;
}

int hpc_h5_attr_get_string(hid_t obj, const char *name, char **out)
{
    hid_t t = vlstr_type();
    char *v = NULL;
    int rc = attr_read(obj, name, t, &v);
    H5Tclose(t);
    if (rc) return rc;
    char *copy = strdup(v ? v : "");
    H5free_memory(v);
    if (!copy) return HPC_ERR(HPC_ERR_NOMEM, "attribute '%s'", name);
    *out = copy;
    return 0;
}

int hpc_h5_attr_get_double(hid_t obj, const char *name, double *out)
{
    double v;
    HPC_TRY(attr_read(obj, name, H5T_NATIVE_DOUBLE, &v));
    *out = v;
    return 0;
}

int hpc_h5_attr_get_int64(hid_t obj, const char *name, int64_t *out)
{
    int64_t v;
    HPC_TRY(attr_read(obj, name, H5T_NATIVE_INT64, &v));
    *out = v;
    return 0;
}
