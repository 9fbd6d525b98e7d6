/* sha256.h - SHA-256 of a buffer as 64 lowercase hex digits (sha256.c). */
#ifndef ODE_SHA256_H
#define ODE_SHA256_H
#include <stddef.h>
void ode_sha256(const void *data, size_t len, char hex[65]);
#endif
