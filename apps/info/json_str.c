/* json_str.c - a string as JSON, for info.c and show_settings.c (a file
 * of its own below both, so that neither needs the other). */
#include "config.h"
#include <stdio.h>
#include "info.h"

void info_json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}
