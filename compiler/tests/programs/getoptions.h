/* A small options parser in the style the classic Cilk examples carry beside their Cilk files. */
#ifndef GETOPTIONS_H
#define GETOPTIONS_H

enum { INT_ARG = 1, BOOL_ARG = 2 };

/* get_options(argc, argv, name, kind, pointer, ..., (const char *)0): each name ("-n") given on
 * the command line sets its int: INT_ARG from the next argument, BOOL_ARG to 1. Returns 0, having
 * said why, for an unknown option or a missing value. */
int get_options(int argc, char *argv[], ...);

#endif
