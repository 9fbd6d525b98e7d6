/* text.c - the small formatting helpers every program's messages share. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "app_internal.h"

void hpc_format_bytes(double b, char *buf, size_t len)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int i = 0;
    while (b >= 1024 && i < 6) b /= 1024, i++;
    snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", b, u[i]);
}

void hpc_format_count(double v, char *buf, size_t len)
{
    const char *suf = "";
    if (v >= 1e9) v /= 1e9, suf = "G";
    else if (v >= 1e6) v /= 1e6, suf = "M";
    else if (v >= 1e4) v /= 1e3, suf = "k";
    snprintf(buf, len, v >= 100 ? "%.0f%s" : "%.3g%s", v, suf);
}

