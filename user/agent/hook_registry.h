/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Which files hold spanprof_span_set(), which processes map them, and the uprobe attached to
 * each: one uprobe per distinct file, detached (off the run loop) when no tracked process maps
 * it any more. Slots are shared fairly between users: when all max_files are taken, a user
 * holding less than max_files / (users holding slots) takes one from the user holding most. */
#ifndef SPANPROF_HOOK_REGISTRY_H
#define SPANPROF_HOOK_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/proc_maps.h"

struct loader;

struct hook_registry_limits {
	size_t max_files; /* hook files attached at once */
	size_t max_pids; /* processes tracked as hook users */
	size_t max_negative; /* files remembered as "no hook here" */
	const char *proc_root; /* "/proc" */
	int use_nop5; /* attach to the 5-byte nop when the file has one */
};

struct hook_registry_stats {
	uint64_t files_attached; /* now */
	uint64_t pids_tracked; /* now */
	uint64_t attaches, detaches, attach_errors, elf_errors, limit_drops;
	uint64_t go_pids_full; /* Go processes not marked: go_pids was full (in limit_drops too) */
	uint64_t open_refused; /* mapped files not opened: replaced, not regular, unreadable */
	uint64_t slot_reclaims; /* files detached to give their slot to a user below its share */
	uint64_t slot_refusals; /* files not attached: the table full, their user at its share */
	uint64_t detach_pending; /* uprobes being removed by the detach threads (now) */
	uint64_t oversized; /* files refused: a section over its stated maximum (elf_section.h) */
	uint64_t parses; /* files parsed (off the run loop) */
	uint64_t parse_pending; /* files queued for parsing or being parsed (now) */
	uint64_t parse_deferred; /* files not queued: the queue full or their user at half of it */
	uint64_t pid_table_full; /* processes mapping a hook not tracked: max_pids were already */
	uint64_t negative_resets; /* files known to have no hook all forgotten: max_negative held */
};

/* Attaching goes through `loader` (not owned). NULL with errno on failure. */
struct hook_registry *hook_registry_new(struct loader *loader,
					const struct hook_registry_limits *limits);
void hook_registry_free(struct hook_registry *r); /* detaches everything; NULL-safe */
/* The agent is exiting: the hook file parser stops after its parse in progress, without
 * waiting. NULL-safe. */
void hook_registry_stop_parses(struct hook_registry *r);

/* Re-evaluates which hook files pid maps (given its executable mappings): attaches files whose
 * parse found a hook, sends files seen for the first time to the parser (pid is handed back by
 * hook_registry_poll() for a rescan) and releases those it no longer maps. Returns the number of
 * hook files pid maps, or -errno (the process vanished: -ENOENT/-ESRCH; -ENOSPC: too many
 * processes map hooks). Errors on single files are counted/logged. *waiting is set to 1 when a
 * file's verdict is not in yet (being parsed, or not queued: the parser was full): a later scan
 * must look again. */
int hook_registry_update_pid(struct hook_registry *r, pid_t pid, const struct proc_maps *maps,
			     int *waiting);

/* The process exited: releases its files, detaching any that no tracked process maps. */
void hook_registry_forget_pid(struct hook_registry *r, pid_t pid);

/* Forgets (as hook_registry_forget_pid) every tracked pid for which alive(ctx, pid) is 0: the
 * exit event of those was lost. Returns how many. */
size_t hook_registry_reap(struct hook_registry *r, int (*alive)(void *ctx, pid_t pid), void *ctx);

/* Settles the parses that finished (off the run loop, discover/hook_parser.h) and fills
 * rescan[] (up to max) with the processes to scan again now, so that their files are attached.
 * Call it whenever hook_registry_wake_fd() polls readable, and at least once per drain. */
size_t hook_registry_poll(struct hook_registry *r, uint64_t now_ns, pid_t *rescan, size_t max);
int hook_registry_wake_fd(const struct hook_registry *r);

void hook_registry_get_stats(struct hook_registry *r, struct hook_registry_stats *out);

#endif /* SPANPROF_HOOK_REGISTRY_H */
