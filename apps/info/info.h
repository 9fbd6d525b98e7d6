/* info.h - hpc-info's parts. */
#ifndef HPC_INFO_H
#define HPC_INFO_H
#include "hpc.h"

enum { INFO_SETTINGS_TEXT, INFO_SETTINGS_MARKDOWN, INFO_SETTINGS_JSON };
/* every HPC_* setting, its value in effect and where it came from */
void info_print_settings(int format);
/* s as a JSON string, quoted and escaped, on stdout (json_str.c) */
void info_json_str(const char *s);

#endif
