/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Hook files parsed off the run loop: a thread runs hook_elf_find_fd() on the files the run loop
 * opened, so a user who maps many crafted files (each up to about 0.1 s of parsing within its
 * budgets) delays the parses, never the windows. The run loop attaches the uprobe through the
 * same descriptor once the verdict is in. */
#ifndef SPANPROF_HOOK_PARSER_H
#define SPANPROF_HOOK_PARSER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/hook_elf.h"

/* Files queued or parsed and not yet claimed, at most; one user holds at most half of them, and
 * users take turns at the parser (the oldest file of another user than the last parsed goes
 * next). */
#define HOOK_PARSER_JOBS 64
/* Processes noted as waiting for one file's verdict (more are found by the periodic rescan). */
#define HOOK_PARSER_WAITERS 32
/* A verdict no waiter claimed is dropped (its descriptor closed) after this long. */
#define HOOK_PARSER_KEEP_NS (10ull * 1000000000ull)

struct hook_parser;

/* A file to parse: the mapping it was found in, opened by the caller. */
struct hook_parse_request {
	uint64_t dev, inode;
	uid_t uid; /* real uid of the process: whose share of the queue it takes */
	pid_t pid;
	int fd; /* passes to the parser when submitted */
	const char *path; /* for logs (kept cut) */
};

/* A finished parse. */
struct hook_parse_result {
	uint64_t dev, inode;
	pid_t pid; /* the process it was found in */
	char path[128];
	int fd; /* the parsed file; owned by whoever holds the result */
	int err; /* hook_elf_find_fd()'s result */
	struct hook_site site;
};

struct hook_parser_stats {
	uint64_t parsed; /* files parsed by the thread */
	uint64_t deferred; /* files not queued: the queue full, or their user at half of it */
	uint64_t expired; /* verdicts dropped unclaimed */
	uint64_t pending; /* files queued or being parsed (now) */
};

/* Starts the thread. NULL with errno on failure. */
struct hook_parser *hook_parser_new(void);

/* Stops the thread and closes every descriptor still held. A parse in progress is waited for
 * until 0.3 s after the stop was first asked for (here or by hook_parser_stop()): past that the
 * thread is left to finish on its own (the agent is exiting).
 * NULL-safe. */
void hook_parser_free(struct hook_parser *p);
/* Tells the thread to stop after the parse in progress, without waiting (see
 * file_verdicts_stop()). NULL-safe. */
void hook_parser_stop(struct hook_parser *p);

/* Queues a parse. Returns 0 (req->fd now the parser's), or -ENOSPC (counted; the caller keeps
 * req->fd) when the queue is full or req->uid holds half of it: pid is then handed back by
 * hook_parser_poll() once room is made, for a rescan. */
int hook_parser_submit(struct hook_parser *p, const struct hook_parse_request *req);

/* (dev, inode)'s parse: 0 when none is known; 1 when it is queued or running (pid is noted as a
 * waiter, handed back by hook_parser_poll() when it finishes); 2 when it finished: *out gets the
 * result, whose descriptor the caller now owns, and the parser forgets it. */
int hook_parser_claim(struct hook_parser *p, uint64_t dev, uint64_t inode, pid_t pid,
		      struct hook_parse_result *out);

/* Called by hook_parser_poll() for each parse that finished since the last poll. Returns 1 to
 * keep the result for hook_parser_claim() (its waiters are handed back), 0 to drop it (its
 * descriptor closed; its waiters are not handed back). */
typedef int (*hook_parser_done_fn)(void *ctx, const struct hook_parse_result *res);

/* Runs done() on each newly finished parse, drops verdicts unclaimed for HOOK_PARSER_KEEP_NS,
 * and fills rescan[] (up to max) with the processes to scan again: waiters of kept results, and
 * those deferred while the queue has room again. Returns how many. Never blocks on a parse. */
size_t hook_parser_poll(struct hook_parser *p, uint64_t now_ns, hook_parser_done_fn done, void *ctx,
			pid_t *rescan, size_t max);

/* Polls readable (POLLIN) while finished parses wait for hook_parser_poll(). */
int hook_parser_wake_fd(const struct hook_parser *p);

void hook_parser_get_stats(struct hook_parser *p, struct hook_parser_stats *out);

#endif /* SPANPROF_HOOK_PARSER_H */
