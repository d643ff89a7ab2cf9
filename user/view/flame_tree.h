/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A call tree merged from samples of CPU and off-CPU profiles: each node holds the CPU and the
 * off-CPU nanoseconds spent in it and below, so one tree draws the CPU view, the waiting view
 * and the wall-clock view (both). */
#ifndef SPANPROF_VIEW_FLAME_TREE_H
#define SPANPROF_VIEW_FLAME_TREE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "view/view_profile.h"

struct flame_tree;

/* An empty tree (a root node) of at most max_nodes nodes. NULL with errno = ENOMEM. */
struct flame_tree *flame_tree_new(size_t max_nodes);
void flame_tree_free(struct flame_tree *ft); /* NULL-safe */

/* Adds sample s of p (its kind says CPU or off-CPU) along its stack. Past max_nodes, the rest
 * of a stack is added to the deepest node it reached (counted as truncated). Returns 0 or
 * -ENOMEM. */
int flame_tree_add(struct flame_tree *ft, const struct view_profile *p,
		   const struct view_sample *s);

/* Writes the tree as JSON: {"strings":[...],"nodes":[...],"cpu_ns":N,"off_cpu_ns":N,
 * "samples":N,"truncated":N}. nodes lists every node in pre-order as [name, file, line,
 * cpu_ns, off_cpu_ns, children] (name and file index strings; children counts the node's
 * direct children, whose subtrees follow it). */
void flame_tree_write_json(const struct flame_tree *ft, FILE *f);

#endif /* SPANPROF_VIEW_FLAME_TREE_H */
