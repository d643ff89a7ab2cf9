// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The CFI unwind tables: written by the agent (user/unwind/unwind_store.c), read by every
 * program that unwinds (unwind_native.bpf.h, in sample.bpf.c and off_cpu.bpf.c). No BPF program
 * writes them, so they are defined here on their own, and linked before their readers. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "maps.bpf.h"

UNWIND_CHUNKS_MAP;
UNWIND_RULES_MAP;
UNWIND_TABLES_MAP;
UNWIND_PROCS_MAP;

char LICENSE[] SEC("license") = "Dual BSD/GPL";
