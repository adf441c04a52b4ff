/* The helper's command line (the flags of helper_contract.h), read once into a table by flag: a
 * layer asks for its own flags by name, so a new flag is one line of the contract and its use. */
#ifndef RUNE_ARGS_H
#define RUNE_ARGS_H

#include "helper_contract.h"

/* Reads argv up to `--`. Returns the index of the command's argv[0], or 0 when only the actions
 * (--closed, --probe) were asked for. A malformed line exits with status 2 and the usage. */
int args_parse(int argc, char **argv);

/* How many times the flag was given (a list's length; 0 or 1 for the others). */
int flag_count(enum helper_flag flag);
/* The values given, in order: flag_count × the flag's values per use. */
const char **flag_values(enum helper_flag flag);
/* The value of a flag given once at most (a later use replaces it), or NULL. */
const char *flag_text(enum helper_flag flag);
/* That value as a number, or `fallback`. */
long long flag_number(enum helper_flag flag, long long fallback);

/* Ends the helper with status 2: `why`, then every flag the contract declares. */
void usage(const char *why) __attribute__((noreturn));

#endif
