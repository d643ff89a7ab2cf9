/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types and limits shared by the BPF programs (bpf/) and the agent (user/).
 * Includes nothing: the includer provides __u8..__u64 (vmlinux.h or <linux/types.h>). */
#ifndef SPANPROF_ABI_H
#define SPANPROF_ABI_H

/* Must match SPANPROF_SPAN_NAME_MAX in include/spanprof.h (checked in user/agent/loader.c). */
#define SPANPROF_ABI_SPAN_NAME_MAX 256
/* Version the hook writes first in struct spanprof_span; the uprobe ignores other versions.
 * Version 1 (hooks built before the name grew) carries a 64-byte name; both are read. */
#define SPANPROF_ABI_VERSION 2
#define SPANPROF_ABI_VERSION_V1 1
#define SPANPROF_ABI_SPAN_NAME_MAX_V1 64
/* Offset of the name in struct spanprof_span, in both versions. */
#define SPANPROF_ABI_SPAN_NAME_OFFSET 40
/* Distinct span names kept (LRU) in span_names by default (--span-name-entries); names are
 * series labels, so they are few. */
#define SPANPROF_MAX_SPAN_NAMES 4096
/* Fair shares of what span hooks write into maps every process shares, per user (per process
 * for root, whose processes are often unrelated services) and per second: new names interned
 * in span_names, and records sent to span_ends. Names a user keeps setting are interned once
 * and cost nothing more. */
#define SPANPROF_NEW_NAMES_PER_USER_S 128
#define SPANPROF_SPAN_ENDS_PER_USER_S 4096
/* Users (and root processes) whose budgets are kept; the least recent are forgotten. */
#define SPANPROF_MAX_BUDGET_USERS 4096

/* Frames kept per stack: the kernel's default perf_event_max_stack. */
#define SPANPROF_MAX_STACK_DEPTH 127
/* Sizes compiled into the maps; the agent sets the real ones before load from the sample rate
 * (user/agent/map_sizes.h) with bpf_map__set_max_entries(). */
#define SPANPROF_DEFAULT_STACKS 16384
#define SPANPROF_DEFAULT_COUNTS 16384
/* Off-CPU profiles: a count map, a stack map and an interpreter stack map per window (sized from
 * --off-cpu-map-entries), and in frame-pointer mode one stack map both windows share. */
#define SPANPROF_OFF_CPU_COUNTS 8192
#define SPANPROF_OFF_CPU_INTERP_STACKS 2048
/* After a process event woke it, the agent looks at the event ring again within this many ms
 * even without a new wake-up: BPF wakes it for at most one event per 100 ms
 * (proc_events.bpf.c), and events in between are read then. */
#define SPANPROF_EVENTS_FOLLOWUP_MS 200

/* Ring buffer of ended spans: each entry (an 8-byte header) holds one or more struct
 * spanprof_span_end (72 bytes each) back to back, a ring read at switch-out sending its records
 * in pieces of up to 16: about 13,100 records when each is alone, 14,400 in full pieces; BPF
 * wakes the agent when it is half full, the agent reads it at every drain too. */
#define SPANPROF_SPAN_ENDS_BYTES (1 << 20)

/* A thread's span as the BPF programs keep it: the first 40 bytes of the hook's struct
 * spanprof_span (ids), then the name's id instead of the name. Names are interned in the
 * span_names map (name_id -> struct span_name), so per-thread state and sample keys stay small
 * however long names get. name_id 0: no name. */
struct span_ctx {
	__u32 abi_version;
	__u32 _pad;
	__u8 trace_id[16];
	__u8 span_id[8];
	__u8 root_span_id[8];
	__u64 name_id; /* FNV-1a 64 of the name's bytes (never 0 for a non-empty name) */
};

/* Value of span_names: the name, NUL-terminated (bytes after the NUL are undefined). */
struct span_name {
	char name[SPANPROF_ABI_SPAN_NAME_MAX];
};

/* Per-thread state in task storage. The uprobe writes the slot that is not current and then
 * flips `current`, so a sample that interrupts the write still sees a whole span context. */
struct thread_span {
	__u32 current; /* index into slot[] of the live span */
	__u32 active; /* 0: no span active on this thread */
	struct span_ctx slot[2];
};

/* Go programs: goroutines move between threads, so their spans are kept per goroutine in the
 * goroutine_spans map, keyed by the runtime's g pointer (read from the thread's TLS). The runtime
 * reuses a g for a later goroutine, so each entry also holds the goroutine id (g.goid, never
 * reused in a process) it was set by: an entry whose goid is not the running goroutine's is a
 * dead goroutine's, and is ignored. */
/* Entries goroutine_spans starts with; it grows (twice as big each time) up to
 * --go-span-map-entries. */
#define SPANPROF_GOROUTINES_START 1024
#define SPANPROF_MAX_GO_PIDS 4096

/* Where a Go process's runtime keeps a goroutine's pprof labels (g.labels), so the sampler can
 * read span_id / span_name labels of goroutines that have no span from the hook (labels set by
 * Grafana's otel-profiling-go, or inherited from the goroutine that started them). */
enum spanprof_go_labels {
	SPANPROF_GO_LABELS_NONE = 0, /* unknown Go version: labels are not read */
	SPANPROF_GO_LABELS_MAP = 1, /* Go 1.17-1.23: *labelMap, a map[string]string */
	SPANPROF_GO_LABELS_SLICE = 2, /* Go 1.24+: *labelMap{LabelSet{list []label}} */
};

/* Value of the go_pids map: one per Go process (with or without the hook). */
struct go_proc {
	__u32 labels_offset; /* offset of labels in runtime.g */
	__u32 labels_kind; /* enum spanprof_go_labels */
	/* g.m and m.curg: a sample taken on the system stack (g0, the signal handler's gsignal)
	 * belongs to the user goroutine m.curg. 0: unknown, the g from TLS is used as it is. */
	__u32 m_offset;
	__u32 curg_offset;
	/* Offset of the running goroutine's g pointer from the thread's FS base (amd64): -8 when
	 * the Go linker linked the program itself, inside the executable's TLS block (runtime.tlsg)
	 * when an external linker did (cgo). Always set by the agent. */
	__s32 g_tls_offset;
	__u32 goid_offset; /* of goid in runtime.g; 0: unknown (the hook is then not attached) */
};

struct goroutine_key {
	__u32 pid;
	__u32 _pad;
	__u64 g; /* address of the runtime.g of the goroutine */
};

/* Value of goroutine_spans: the span the hook set, and who set it (helpers.bpf.h
 * goroutine_owner): an entry is only read by the goroutine that wrote it. */
struct goroutine_span {
	struct thread_span span;
	__u64 goid; /* runtime.g.goid of the goroutine that set it */
	__u64 mm; /* its process's address space (kernel mm_struct address, compared only) */
};

/* The Go hook's attach cookie: g's offset from FS base (struct go_proc g_tls_offset, as a __u32)
 * in the low half, g.goid's offset in runtime.g in the high half. */
#define SPANPROF_GO_COOKIE(g_tls_offset, goid_offset) \
	((__u64)(__u32)(g_tls_offset) | (__u64)(goid_offset) << 32)

/* Python interpreter frames (docs/interpreters.md). Per process, the agent writes where the thread
 * state's pthread key lives and the frame-chain offsets of its CPython version; the sampler walks
 * up to SPANPROF_INTERP_MAX_FRAMES frames of the interrupted thread and stores them per window in
 * interp_stacks, keyed by a hash the sample's key carries. */
#define SPANPROF_INTERP_MAX_FRAMES 64
#define SPANPROF_MAX_PY_PROCS 4096
#define SPANPROF_DEFAULT_INTERP_STACKS 2048
#define SPANPROF_PY_NO_FIELD 0xffff /* offset of a field this version does not have */

struct py_proc_info {
	__u64 tss_key_addr; /* address of the autoTSSkey pthread key (int) */
	__u16 tstate_frame; /* tstate: frame (<= 3.10), cframe (3.11/3.12), current_frame (3.13) */
	__u16 cframe_current; /* _PyCFrame.current_frame, or SPANPROF_PY_NO_FIELD */
	__u16 frame_code; /* f_code / f_executable */
	__u16 frame_back; /* f_back / previous */
	__u16 frame_lasti; /* f_lasti (int, <= 3.10) or prev_instr / instr_ptr (pointer) */
	__u16 frame_owner; /* owner byte (3.12+) or SPANPROF_PY_NO_FIELD */
	__u16 code_firstlineno; /* co_firstlineno, captured to recognize a reused code object */
	__u16 code_adaptive; /* co_code_adaptive (3.11+), to turn the instruction pointer into
			      * an index */
	__u16 code_name, code_filename; /* co_name, co_filename: pointers checked with the code */
	__u16 frame_entry; /* is_entry byte (3.11) or SPANPROF_PY_NO_FIELD */
	__u16 code_qualname; /* co_qualname (3.11+) or SPANPROF_PY_NO_FIELD */
	__u16 code_linetable; /* co_linetable (co_lnotab before 3.10) */
	__u8 minor; /* CPython 3.<minor> */
	__u8 _pad[5];
};

/* interp_frame.check of a code object: its name, file name, qualified name and line table pointers
 * folded to 32 bits. A code object created at a freed one's address with the same interned
 * name and file but another qualified name or line table gets another check (qual is 0 before
 * 3.11). */
#define SPANPROF_PY_CHECK(name, file, qual, table) \
	((__u32)((name) ^ (file)) ^ (__u32)((qual) >> 4) ^ (__u32)((table) >> 3))

/* One interpreter frame as captured: the code object, what identifies it, the instruction. */
/* Ruby frames (bpf/ruby_frames.bpf.c) use the same record: code is the rb_iseq_t (or, for a
 * C function, the method's ID), firstlineno the iseq's raw first_lineno word, lasti the
 * instruction position of pc, check the low 32 bits of label ^ pathobj, flags SPANPROF_RB_*. */
struct interp_frame {
	__u64 code; /* code object address */
	__u32 firstlineno; /* co_firstlineno read with it: a reused address rarely matches both */
	__u32 lasti; /* bytes (<= 3.9) or code units (3.10+), as python_line_for() takes it */
	__u32 check; /* SPANPROF_PY_CHECK of the code object (Ruby: see above) */
	__u32 flags; /* SPANPROF_PY_FRAME_* for Python, SPANPROF_RB_FRAME_* for Ruby */
};

/* interp_frame.flags of a Python frame. ENTRY: the outermost frame its _PyEval_EvalFrameDefault
 * activation runs (every frame up to 3.10; is_entry on 3.11; on 3.12+ the frame right over the
 * activation's shim frame). */
#define SPANPROF_PY_FRAME_ENTRY 1

/* The interpreter whose frames a struct interp_stack holds. */
enum spanprof_interp {
	SPANPROF_INTERP_PYTHON = 0,
	SPANPROF_INTERP_RUBY = 1,
};

/* An interpreter stack (the map is named interp_stacks; Ruby stacks share it and the sample key's
 * interp_stack_hash, told apart by interp). */
struct interp_stack {
	__u32 nframes;
	__u16 truncated; /* 1: the chain had more than SPANPROF_INTERP_MAX_FRAMES frames */
	__u16 interp; /* enum spanprof_interp */
	struct interp_frame frames[SPANPROF_INTERP_MAX_FRAMES]; /* innermost first */
};

/* CRuby control frames (docs/interpreters.md). Per process the agent writes how to reach the
 * thread's rb_execution_context_t (ruby_current_ec through the dtv, or a global pointer before 3.0)
 * and the offsets of its Ruby version. */
#define SPANPROF_MAX_RB_PROCS 4096

enum spanprof_rb_ec_mode {
	SPANPROF_RB_EC_TLS = 1, /* ec = *(dtv[tls_modid] + tls_offset), dtv = *(fsbase + 8) */
	SPANPROF_RB_EC_GLOBAL = 2, /* ec = *ec_addr (2.7: ruby_current_execution_context_ptr) */
};

struct rb_proc_info {
	__u64 ec_addr; /* SPANPROF_RB_EC_GLOBAL: address of the EC pointer */
	__u64 tls_modid; /* SPANPROF_RB_EC_TLS: libruby's TLS module id (dtv index) */
	__u64 tls_offset; /* ... ruby_current_ec's offset in that module's block */
	__u32 ec_mode; /* enum spanprof_rb_ec_mode */
	__u16 cfp_size; /* sizeof(rb_control_frame_t) */
	__u16 body_encoded; /* iseq body: iseq_encoded */
	__u16 body_location; /* iseq body: location {pathobj, base_label, label, first_lineno} */
	__u16 _pad[3];
};

/* interp_frame.flags of a Ruby frame. */
#define SPANPROF_RB_FRAME_CFUNC 1 /* a C function: code is its method's original_id (0: unread) */
#define SPANPROF_RB_FRAME_FINISH 2 /* the last frame run by its rb_vm_exec activation */

/* OpenTelemetry thread context (docs/thread-context.md): a process whose SDK exports the TLS
 * variable otel_thread_ctx_v1 points it, per thread, at a record {trace_id[16], span_id[8],
 * valid, trace_flags, attrs_data_size (u16), attributes {key index, len, value[len]}...}. The
 * agent tells the sampler where each process keeps that pointer and which key indexes matter. */
#define SPANPROF_TCTX_RECORD_MAX 640 /* the most of a record read; the rest is ignored */
#define SPANPROF_TCTX_HEADER_SIZE 28
#define SPANPROF_TCTX_ATTRS_MAX (SPANPROF_TCTX_RECORD_MAX - SPANPROF_TCTX_HEADER_SIZE)
#define SPANPROF_TCTX_MAX_LABELS 4 /* record attributes that may become sample labels */
#define SPANPROF_TCTX_NO_KEY 0xffff /* a key the process's key map does not (yet) name */
#define SPANPROF_MAX_TCTX_PROCS 4096
/* span_ctx.abi_version of a span read from a thread context, or from OBI's map. The span's
 * name_id then names "<span name>\x1f<label 1 value>\x1f...<label N value>" (values of the
 * attributes listed in struct tctx_proc.label_keys, in that order, "" when absent). */
#define SPANPROF_SPAN_FROM_TCTX 0x4947
#define SPANPROF_SPAN_FROM_OBI 0x0b1
#define SPANPROF_TCTX_SEP '\x1f'

enum spanprof_tctx_tls {
	SPANPROF_TCTX_TLS_STATIC = 1, /* slot at fsbase + tp_offset (initial/local-exec) */
	SPANPROF_TCTX_TLS_DTV = 2, /* slot at dtv[modid] + offset, dtv = *(fsbase + dtv_off) */
};

/* Value of tctx_procs, per process (tgid). Written by the agent; BPF sets rescan. */
struct tctx_proc {
	__s64 tp_offset; /* STATIC: from the thread pointer (negative on x86-64) */
	__u64 modid; /* DTV: the defining module's TLS module id */
	__u64 offset; /* DTV: the variable's offset in that module's TLS block */
	__u32 tls; /* enum spanprof_tctx_tls */
	__u16 dtv_off; /* DTV: offset of the dtv pointer from fsbase (8: glibc and musl) */
	__u16 dtv_entry; /* DTV: bytes per dtv entry (16: glibc, 8: musl) */
	__u16 nkeys; /* entries of the key map the agent read; a higher index asks a re-read */
	__u16 root_key; /* index of the local root span id key, or SPANPROF_TCTX_NO_KEY */
	__u16 name_key; /* index of the span name key, or SPANPROF_TCTX_NO_KEY */
	__u16 label_keys[SPANPROF_TCTX_MAX_LABELS]; /* configured label attributes' indexes */
	__u16 _pad;
	__u32 rescan; /* set by BPF on an unknown key index: the agent re-reads the key map */
	__u32 _pad2;
};

/* Hook ABI version 3 (docs/thread-context.md, "spanprof's hook as a writer"): the hook library
 * keeps each thread's span in an OpenTelemetry thread context record at the start of a
 * per-thread area (struct spanprof_thread_area), and while an agent is attached it also queues
 * every span change, with its time, in the area's ring. It enters the uprobe only to register
 * the area (once per thread and agent), when the local root's name changes, and when
 * SPANPROF_RING_TRAP_EVERY changes were queued since its last entry, or about a second passed
 * since then (a new agent may have come unseen). It then passes struct spanprof_span's version
 * 2 layout with abi_version 3, followed by the area's address, the ring index of the change
 * that call queued (= head: it queued none), the address of the thread's otel_thread_ctx_v1
 * (the slot that points at the record: samples read it there), and the ring's clock: 0, or a
 * time stamp counter reading and the CLOCK_MONOTONIC time read right beside it (the ring then
 * holds counter readings, converted from that pair at the rate the agent measured). */
#define SPANPROF_ABI_VERSION_V3 3
#define SPANPROF_ABI_V3_AREA_OFFSET 296
#define SPANPROF_ABI_V3_RING_FROM_OFFSET 304
#define SPANPROF_ABI_V3_SLOT_OFFSET 312
#define SPANPROF_ABI_V3_CLOCK_TSC_OFFSET 320
#define SPANPROF_ABI_V3_CLOCK_NS_OFFSET 328
#define SPANPROF_ABI_V3_SIZE 336
/* Changes queued per thread; the ring wraps. A thread that queued more than this since the
 * agent last read its ring (at its last switch-out or uprobe entry) loses the oldest. The hook
 * enters the uprobe when the ring is full since its last entry, so only a failed read loses
 * changes. */
#define SPANPROF_RING_ENTRIES 256
#define SPANPROF_RING_MASK (SPANPROF_RING_ENTRIES - 1)
#define SPANPROF_RING_TRAP_EVERY SPANPROF_RING_ENTRIES
/* A change this long after the thread's last uprobe entry enters it again, in the ring's clock:
 * a second in ns, 0.2 to 1 s in time stamp counter ticks (1 to 5 GHz). Why: thread_record.c. */
#define SPANPROF_RING_TRAP_AGE 1000000000ull
/* The agent's time stamp counter rate (tsc_mult in span_hook.bpf.c): ns per tick, times
 * 2^SPANPROF_TSC_MULT_SHIFT. */
#define SPANPROF_TSC_MULT_SHIFT 32
/* Room for the OTEP record at the start of the area: 28 bytes of header, the local root span id
 * attribute (18 bytes) and the name attribute (2 + 255 bytes), rounded up. */
#define SPANPROF_AREA_RECORD_SIZE 304

/* One span change: from time on, the thread is in the span (trace_id, span_id) under the local
 * root's name name_id (FNV-1a 64 of its bytes, the id span_names keys it by; 0: none); a zero
 * span_id: in none. A change of name alone is a change too. time is CLOCK_MONOTONIC ns, or a time
 * stamp counter reading when the area was registered with a counter clock. The hook enters the
 * uprobe with a name the first time it queues it (see thread_record.c), so the agent holds the
 * name's text by the time it reads the id. */
struct spanprof_ring_entry {
	__u64 time;
	__u8 trace_id[16];
	__u8 span_id[8];
	__u64 name_id;
};

/* The hook library's per-thread area (in its TLS). */
struct spanprof_thread_area {
	__u8 record[SPANPROF_AREA_RECORD_SIZE]; /* the OTEP 4947 record */
	__u64 head; /* changes queued so far; entry i is ring[i & SPANPROF_RING_MASK] */
	__u64 nested; /* calls dropped: made while another ran on this thread (a signal handler) */
	struct spanprof_ring_entry ring[SPANPROF_RING_ENTRIES];
};

/* Per-thread BPF state of a registered area (task storage span_areas). */
struct span_area {
	__u64 area; /* address of the thread's struct spanprof_thread_area */
	__u64 slot; /* address of the thread's otel_thread_ctx_v1 */
	__u64 consumed; /* ring entries read so far */
	__u64 floor_ns; /* when the thread last came on the CPU (or the ring was last read) */
	__u64 name_id; /* the name the hook last entered the uprobe with (interned already) */
	__u64 clock_tsc; /* 0: the ring's times are ns; else a counter reading, taken beside */
	__u64 clock_ns; /* this CLOCK_MONOTONIC time, at the hook's last uprobe entry */
	struct span_ctx cur; /* the span the thread's current span segment belongs to */
};

/* Value of OBI's pinned map (key: the thread's pid_tgid). */
struct obi_trace_ctx {
	__u8 trace_id[16];
	__u8 span_id[8];
};

/* Key of the per-window sample counts: process, both stacks, and the span (zero = none).
 * Stacks are stored whole in the window's stack map under a hash of their frames (CFI-unwound,
 * frame-pointer and kernel stacks alike); a hash the map does not hold is a stack that could not
 * be stored (counted when it was taken). */
struct sample_key {
	__u32 pid;
	__u32 has_span;
	__u64 kern_stack_hash; /* key in the window's stacks; 0: no kernel stack */
	__u64 user_stack_hash; /* likewise; 0: no user stack (a kernel thread) */
	struct span_ctx span;
	__u64 interp_stack_hash; /* key in interp_stacks; 0: no interpreter frames */
};

/* One record per ended span segment (exact CPU time per span): a thread's span id
 * changed or was cleared. Times are the thread's within that segment: cpu_ns on the CPU,
 * off_cpu_ns blocked (every voluntary switch-out until it ran again, whatever its length),
 * wall_ns from the hook call that set the span to the one that ended it. */
struct spanprof_span_end {
	__u8 trace_id[16];
	__u8 span_id[8];
	__u64 name_id; /* key in span_names; 0: no name */
	__u64 cpu_ns;
	__u64 off_cpu_ns;
	__u64 wall_ns;
	__u32 pid; /* tgid */
	__u32 tid;
	__u64 end_ns; /* bpf_ktime_get_ns() when it ended (CLOCK_MONOTONIC) */
};

/* ---- Native unwinding from the binaries' CFI (bpf/unwind_native.bpf.h, user/unwind/) ---- */

/* How a row finds the canonical frame address (CFA); the return address is at CFA - 8. */
enum spanprof_cfa_kind {
	SPANPROF_CFA_NONE = 0, /* no CFI covers this PC (gap between FDEs): cannot unwind here */
	SPANPROF_CFA_RSP, /* CFA = rsp + cfa_off */
	SPANPROF_CFA_RBP, /* CFA = rbp + cfa_off */
	SPANPROF_CFA_PLT1, /* .plt expression: CFA = rsp + cfa_off + ((rip & 15) >= 11 ? 8 : 0) */
	SPANPROF_CFA_PLT2, /* the same with threshold 10 */
	SPANPROF_CFA_SIGNAL, /* signal trampoline: registers come from the ucontext at rsp */
	SPANPROF_CFA_STOP, /* return address undefined: the outermost frame (_start, clone) */
	SPANPROF_CFA_INVALID, /* a rule the unwinder does not handle: cannot unwind here */
	/* No CFI covers this PC in a Go executable linked with C (cgo): .eh_frame holds the C
	 * code's FDEs only, and Go code keeps frame pointers: a frame-pointer step. */
	SPANPROF_CFA_FP,
};

/* Where the caller's rbp is. */
enum spanprof_rbp_kind {
	SPANPROF_RBP_SAME = 0, /* unchanged */
	SPANPROF_RBP_AT_CFA, /* saved at CFA + rbp_off */
	SPANPROF_RBP_LOST, /* in a register or an expression: unknown from here on */
};

/* One unwind rule. Rules are interned: rows name them by index into unwind_rules. */
struct spanprof_unwind_rule {
	__u8 cfa_kind; /* enum spanprof_cfa_kind */
	__u8 rbp_kind; /* enum spanprof_rbp_kind */
	__u16 _pad;
	__s32 cfa_off;
	__s32 rbp_off;
	__u32 _pad2;
};

/* A row applies from pc (an ELF virtual address of the file) up to the next row's pc. */
struct spanprof_unwind_row {
	__u32 pc;
	__u32 rule; /* index into unwind_rules */
};

/* Rows live in fixed-size chunks so each binary search in BPF has a constant bound: at most
 * log2(SPANPROF_UNWIND_TABLE_CHUNKS) steps over a table's chunk index, then
 * log2(SPANPROF_UNWIND_CHUNK_ROWS) steps inside one chunk. A chunk's unused rows have
 * pc = SPANPROF_UNWIND_PC_END. */
#define SPANPROF_UNWIND_CHUNK_ROWS 4096
#define SPANPROF_UNWIND_CHUNK_SHIFT 12
#define SPANPROF_UNWIND_TABLE_CHUNKS 128
#define SPANPROF_UNWIND_TABLE_SHIFT 7
#define SPANPROF_UNWIND_PC_END 0xffffffffu
#define SPANPROF_UNWIND_MAX_RULES 16384
#define SPANPROF_UNWIND_MAX_TABLES 4096

struct spanprof_unwind_chunk {
	struct spanprof_unwind_row rows[SPANPROF_UNWIND_CHUNK_ROWS];
};

/* A file's table: its chunks in PC order. gen changes whenever the slot is reused, so a mapping
 * still naming an evicted table is noticed. Unused index entries have first_pc = PC_END. */
struct spanprof_unwind_table {
	__u32 gen; /* 0: slot empty */
	__u32 nchunks;
	struct {
		__u32 first_pc;
		__u32 chunk; /* key in unwind_chunks */
	} index[SPANPROF_UNWIND_TABLE_CHUNKS];
};

/* Special values of spanprof_unwind_mapping.table. */
#define SPANPROF_UNWIND_TABLE_FP 0xffffffffu /* no CFI (JIT, Go, stripped of .eh_frame): FP */
#define SPANPROF_UNWIND_TABLE_PENDING \
	0xfffffffeu /* being built: this sample uses frame pointers (bpf_get_stack) */

/* One executable mapping: file vaddr = address - bias. Unused entries of a process's array
 * start at SPANPROF_UNWIND_ADDR_END (above every user address). */
#define SPANPROF_UNWIND_ADDR_END (1ull << 62)
struct spanprof_unwind_mapping {
	__u64 start;
	__u64 end;
	__u64 bias;
	__u32 table; /* index in unwind_tables, or SPANPROF_UNWIND_TABLE_FP/_PENDING */
	__u32 gen; /* the table's gen when this mapping was written */
};

/* Executable mappings of one process, sorted by start (binary search:
 * SPANPROF_UNWIND_MAPS_SHIFT steps). */
#define SPANPROF_UNWIND_MAX_MAPPINGS 256
#define SPANPROF_UNWIND_MAPS_SHIFT 8
struct spanprof_unwind_proc {
	__u32 nmaps;
	__u32 _pad;
	struct spanprof_unwind_mapping maps[SPANPROF_UNWIND_MAX_MAPPINGS];
};

/* struct spanprof_user_stack.taken is bpf_ktime_get_ns() >> this (about a second). */
#define SPANPROF_STACK_TAKEN_SHIFT 30

/* A stack as the window's stack maps store it (leaf first; ips[nframes..] are unset). */
struct spanprof_user_stack {
	__u32 nframes;
	/* In the off-CPU frame-pointer stacks both windows share: when the stack was last taken,
	 * in units of 2^30 ns of CLOCK_MONOTONIC (the agent deletes stacks not taken for long).
	 * Unset elsewhere. */
	__u32 taken;
	__u64 ips[SPANPROF_MAX_STACK_DEPTH];
};

/* Why a sample or span update was lost or degraded. Index into the drop_counts array. */
enum spanprof_drop {
	SPANPROF_DROP_COUNTS_FULL = 0, /* sample_counts map full: sample lost */
	SPANPROF_DROP_USER_STACK, /* user stack not recorded (the window's stack map full) */
	SPANPROF_DROP_KERN_STACK, /* kernel stack not recorded (the window's stack map full) */
	SPANPROF_DROP_SPAN_READ, /* hook's struct could not be read from user memory */
	SPANPROF_DROP_SPAN_STORAGE, /* task storage unavailable: span update lost */
	SPANPROF_DROP_SPAN_VERSION, /* hook passed an unknown ABI version */
	SPANPROF_DROP_PROC_EVENT, /* proc_events ring buffer full: a rescan was missed */
	SPANPROF_DROP_GOROUTINE_FULL, /* goroutine_spans full: a Go span update was lost */
	SPANPROF_DROP_GOROUTINE_READ, /* the current goroutine could not be read from TLS */
	SPANPROF_DROP_GO_LABELS_READ, /* a goroutine's pprof labels could not be read */
	SPANPROF_DROP_SPAN_NAME, /* a span's name could not be read or interned: no span_name */
	/* CFI unwinding stopped early (the stack is kept, truncated): */
	SPANPROF_DROP_UNWIND_NO_MAPPING, /* a PC in no known executable mapping */
	SPANPROF_DROP_UNWIND_NO_ROW, /* a PC no CFI row covers, or a rule it cannot follow */
	SPANPROF_DROP_UNWIND_BAD_READ, /* the stack could not be read (return address, rbp, regs) */
	SPANPROF_DROP_UNWIND_DEPTH, /* more than SPANPROF_MAX_STACK_DEPTH frames */
	SPANPROF_DROP_UNWIND_STALE, /* a table was evicted: fell back to frame pointers */
	SPANPROF_DROP_PY_STACK, /* interp_stacks map full: a sample's Python frames were lost */
	SPANPROF_DROP_RB_STACK, /* interp_stacks map full: a sample's Ruby frames were lost */
	SPANPROF_DROP_RB_EC, /* a Ruby thread's execution context could not be read */
	SPANPROF_DROP_OFF_CPU_STORAGE, /* task storage unavailable: a span's times not kept */
	SPANPROF_DROP_OFF_CPU_FULL, /* off-CPU count map full: blocked time lost */
	SPANPROF_DROP_SPAN_END_FULL, /* span_ends ring buffer full: an ended span's record lost */
	SPANPROF_DROP_SPAN_NAME_BUDGET, /* the user's new span names this second were spent */
	SPANPROF_DROP_SPAN_END_BUDGET, /* the user's span records this second were spent */
	/* Off-CPU stacks (taken when a thread runs again after a wait): */
	SPANPROF_DROP_OFF_CPU_USER_STACK, /* user stack not recorded (stack map full) */
	SPANPROF_DROP_OFF_CPU_KERN_STACK, /* kernel stack not recorded (stack map full) */
	SPANPROF_DROP_OFF_CPU_INTERP_STACK, /* off-CPU interpreter stacks full: frames lost */
	/* ... CFI unwinding stopped early, in the order of the SPANPROF_DROP_UNWIND_* above: */
	SPANPROF_DROP_OFF_CPU_UNWIND_NO_MAPPING,
	SPANPROF_DROP_OFF_CPU_UNWIND_NO_ROW,
	SPANPROF_DROP_OFF_CPU_UNWIND_BAD_READ,
	SPANPROF_DROP_OFF_CPU_UNWIND_DEPTH,
	SPANPROF_DROP_OFF_CPU_UNWIND_STALE,
	SPANPROF_DROP_TCTX_READ, /* a thread context (TLS slot or record) could not be read */
	SPANPROF_DROP_TCTX_ATTRS, /* a record's attributes were cut: torn, too long or unmapped */
	/* span changes the hook queued that were overwritten before they were read (or could not
	 * be read): their time went to the span before them */
	SPANPROF_DROP_SPAN_RING_LOST,
	SPANPROF_DROP__COUNT,
};

/* What a struct proc_event reports. Exec and exec-mmap both mean "rescan this process". */
enum spanprof_proc_event_type {
	SPANPROF_PROC_SCAN = 1, /* a file mapped executable (dlopen, new library) */
	SPANPROF_PROC_EXIT = 2, /* the last thread of the process exited */
	SPANPROF_PROC_EXEC = 3, /* exec: a struct spanprof_exec_event, and rescan */
	SPANPROF_PROC_FORK = 4, /* a new process (not thread): a struct spanprof_fork_event */
};

/* Record in the proc_events ring buffer. */
struct spanprof_proc_event {
	__u32 type; /* enum spanprof_proc_event_type */
	__u32 pid; /* tgid, in the agent's pid namespace */
};

/* A fork: the child runs its parent's program with its parent's environment until it execs, so it
 * has its parent's service (a child that exits without exec'ing is never named otherwise). */
struct spanprof_fork_event {
	struct spanprof_proc_event hdr; /* type SPANPROF_PROC_FORK, pid: the child */
	__u32 parent; /* the parent's tgid */
	__u32 _pad;
};

#define SPANPROF_EXEC_COMM_MAX 16
#define SPANPROF_EXEC_SERVICE_MAX 128
#define SPANPROF_EXEC_RESOURCE_MAX 256

/* An exec, with what names the process's service, read from the new program's environment at
 * exec time: a process that is gone before the agent reads /proc still gets its service. Each
 * string is NUL-terminated within its field ("" when not found), values cut at the field's size. */
struct spanprof_exec_event {
	struct spanprof_proc_event hdr; /* type SPANPROF_PROC_EXEC */
	char comm[SPANPROF_EXEC_COMM_MAX]; /* the new program's name (15 bytes at most) */
	char service[SPANPROF_EXEC_SERVICE_MAX]; /* OTEL_SERVICE_NAME's value */
	char resource[SPANPROF_EXEC_RESOURCE_MAX]; /* OTEL_RESOURCE_ATTRIBUTES' value */
	__u32 env_complete; /* 1 when the search covered the whole environment */
	__u32 _pad;
};

/* Counters the programs keep besides drops (index into event_counts). */
enum spanprof_event {
	SPANPROF_EVENT_SAMPLES = 0, /* samples counted */
	SPANPROF_EVENT_IDLE, /* samples of the idle task, not counted */
	SPANPROF_EVENT_SPAN_SET, /* hook hits that set a span */
	SPANPROF_EVENT_SPAN_CLEAR, /* hook hits that cleared the span */
	SPANPROF_EVENT_UNWIND_CFI, /* user stacks unwound from CFI tables */
	SPANPROF_EVENT_UNWIND_FP, /* user stacks from frame pointers: no tables (yet) */
	SPANPROF_EVENT_UNWIND_FP_FRAMES, /* frames in files without CFI, walked by frame pointer */
	SPANPROF_EVENT_OFF_CPU, /* off-CPU periods of span threads counted */
	SPANPROF_EVENT_OFF_CPU_SHORT, /* ... not counted: shorter than --off-cpu-min */
	SPANPROF_EVENT_OFF_CPU_UNWIND_CFI, /* off-CPU user stacks unwound from CFI tables */
	SPANPROF_EVENT_OFF_CPU_UNWIND_FP, /* ... from frame pointers (no tables, or --off-cpu-unwind) */
	SPANPROF_EVENT_TCTX_SPAN, /* samples whose span came from an OTel thread context */
	SPANPROF_EVENT_OBI_SPAN, /* samples whose span came from OBI's map */
	SPANPROF_EVENT_PENDING_SCANS_FULL, /* rescan requests sent unmarked: pending_scans full */
	SPANPROF_EVENT_HOOK_ENTRY, /* entries of an ABI 3 hook into the uprobe (not every call) */
	SPANPROF_EVENT_CAUGHT_UP_SPAN, /* span segments' switches in sched_switch missed */
	SPANPROF_EVENT_CAUGHT_UP_TCTX, /* thread context waits' switches in sched_switch missed */
	SPANPROF_EVENT__COUNT,
};

/* Every struct's size, checked wherever this header is compiled: by clang for BPF and by the C
 * compiler for the agent, so a field that changes size or padding on one side fails both builds
 * instead of being read at the wrong offset. */
#define SPANPROF_ABI_SIZE(type, size) _Static_assert(sizeof(struct type) == (size), #type " ABI")
SPANPROF_ABI_SIZE(span_ctx, 48);
SPANPROF_ABI_SIZE(span_name, SPANPROF_ABI_SPAN_NAME_MAX);
SPANPROF_ABI_SIZE(thread_span, 104);
SPANPROF_ABI_SIZE(go_proc, 24);
SPANPROF_ABI_SIZE(goroutine_key, 16);
SPANPROF_ABI_SIZE(goroutine_span, 120);
SPANPROF_ABI_SIZE(py_proc_info, 40);
SPANPROF_ABI_SIZE(interp_frame, 24);
SPANPROF_ABI_SIZE(interp_stack, 8 + 24 * SPANPROF_INTERP_MAX_FRAMES);
SPANPROF_ABI_SIZE(rb_proc_info, 40);
SPANPROF_ABI_SIZE(tctx_proc, 56);
SPANPROF_ABI_SIZE(obi_trace_ctx, 24);
/* The area lives in apps built separately from the agent: its layout is read by offset. */
SPANPROF_ABI_SIZE(spanprof_ring_entry, 40);
SPANPROF_ABI_SIZE(spanprof_thread_area,
		  SPANPROF_AREA_RECORD_SIZE + 16 + 40 * SPANPROF_RING_ENTRIES);
_Static_assert(__builtin_offsetof(struct spanprof_thread_area, head) == 304, "area ABI");
_Static_assert(__builtin_offsetof(struct spanprof_thread_area, ring) == 320, "area ABI");
SPANPROF_ABI_SIZE(span_area, 56 + 48);
SPANPROF_ABI_SIZE(sample_key, 80);
SPANPROF_ABI_SIZE(spanprof_span_end, 72);
SPANPROF_ABI_SIZE(spanprof_unwind_rule, 16);
SPANPROF_ABI_SIZE(spanprof_unwind_row, 8);
SPANPROF_ABI_SIZE(spanprof_unwind_chunk, 8 * SPANPROF_UNWIND_CHUNK_ROWS);
SPANPROF_ABI_SIZE(spanprof_unwind_table, 8 + 8 * SPANPROF_UNWIND_TABLE_CHUNKS);
SPANPROF_ABI_SIZE(spanprof_unwind_mapping, 32);
SPANPROF_ABI_SIZE(spanprof_unwind_proc, 8 + 32 * SPANPROF_UNWIND_MAX_MAPPINGS);
SPANPROF_ABI_SIZE(spanprof_user_stack, 8 + 8 * SPANPROF_MAX_STACK_DEPTH);
SPANPROF_ABI_SIZE(spanprof_proc_event, 8);
SPANPROF_ABI_SIZE(spanprof_fork_event, 16);
SPANPROF_ABI_SIZE(spanprof_exec_event, 8 + SPANPROF_EXEC_COMM_MAX + SPANPROF_EXEC_SERVICE_MAX +
					       SPANPROF_EXEC_RESOURCE_MAX + 8);

#endif /* SPANPROF_ABI_H */
