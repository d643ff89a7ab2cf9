/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `spanprof view [DIR]`: the local span explorer's command line. */
#ifndef SPANPROF_VIEW_CMD_H
#define SPANPROF_VIEW_CMD_H

#include <signal.h>

/* Runs `spanprof view` with argv[0] = "view": loads DIR (default ./spanprof-data), serves it,
 * prints the URL as the first line of stdout, and returns when SIGINT or SIGTERM arrives (the
 * caller has blocked them; they are waited for here). Returns the exit status: 0, 1 on failure,
 * 2 on a bad command line. */
int view_main(int argc, char **argv, const sigset_t *stop_signals);

#endif /* SPANPROF_VIEW_CMD_H */
