// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The span-set hook compiled into libspanprof.so/.a: a semaphore-guarded USDT-style probe site
 * (see include/spanprof.h for why it is built this way). */
#include <stddef.h>
#ifdef SPANPROF_HOOK_TEST_PREEMPTED
#include <time.h>
#endif

#include "hook_owner.h"
#include "spanprof.h"
#include "thread_record.h"

#define SPANPROF_EXPORT __attribute__((visibility("default")))

/* Raised by the kernel (uprobe ref_ctr_offset) while the agent is attached. It must sit in
 * file-backed, writable data, never .bss, so it goes in .probes as USDT semaphores do. */
__attribute__((section(".probes"), used)) volatile unsigned short spanprof_span_set_semaphore;

/* The note descriptor: site address, .stapsdt.base address (for prelink adjustment), semaphore
 * address, then provider, probe name and the argument spec, as the stapsdt format defines. */
#define SPANPROF_NOTE(arg_spec)                                                 \
	".pushsection .note.stapsdt,\"\",\"note\"\n"                            \
	".balign 4\n"                                                           \
	".4byte 992f-991f, 994f-993f, 3\n"                                      \
	"991: .asciz \"stapsdt\"\n"                                             \
	"992: .balign 4\n"                                                      \
	"993: .8byte 990b\n"                                                    \
	".8byte _.stapsdt.base\n"                                               \
	".8byte spanprof_span_set_semaphore\n"                                  \
	".asciz \"spanprof\"\n"                                                 \
	".asciz \"span_set\"\n"                                                 \
	".asciz \"" arg_spec "\"\n"                                             \
	"994: .balign 4\n"                                                      \
	".popsection\n"                                                         \
	".ifndef _.stapsdt.base\n"                                              \
	".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
	".weak _.stapsdt.base\n"                                                \
	".hidden _.stapsdt.base\n"                                              \
	"_.stapsdt.base: .space 1\n"                                            \
	".size _.stapsdt.base, 1\n"                                             \
	".popsection\n"                                                         \
	".endif\n"

SPANPROF_EXPORT void spanprof_span_set(const struct spanprof_span *span)
{
	/* Another copy of the hook loaded first: the thread's span lives in that copy's state
	 * (hook_owner.c). */
	if (__builtin_expect(hook_owner.span_set != NULL, 0)) {
		hook_owner.span_set(span);
		return;
	}
#ifdef SPANPROF_HOOK_ABI_V2
	/* Test and benchmark builds only: the library as built for hook ABI version 2, which
	 * enters the uprobe at every call (as programs linked with an older libspanprof do). */
	const void *arg = span;

	if (__builtin_expect(spanprof_span_set_semaphore == 0, 1))
		return;
#elif !defined(__x86_64__)
	/* Other architectures: the record for every thread-context reader, and the uprobe at every
	 * call as with hook ABI version 2, because the agent's BPF side reads a registered record
	 * on x86-64 only so far (docs/thread-context.md, "spanprof's hook as a writer"). */
	const void *arg = span;

	thread_record_set(span, 0);
	if (__builtin_expect(spanprof_span_set_semaphore == 0, 1))
		return;
#else
	/* Every thread-context reader sees the span through the record, agent or not; the uprobe
	 * is entered only when the record asks for it (hook ABI version 3). */
	const void *arg = thread_record_set(span, spanprof_span_set_semaphore);

	if (__builtin_expect(!arg, 1))
		return;
#ifdef SPANPROF_HOOK_TEST_PREEMPTED
	/* Test builds only: the thread leaves the CPU between queueing its change and entering the
	 * uprobe, every time, as a preemption there does now and then. */
	nanosleep(&(struct timespec){ .tv_nsec = 50000 }, NULL);
#endif
#endif
#if defined(__x86_64__)
	/* "D" pins the pointer in %rdi, the register the uprobe program reads. The 1-byte nop is the
	 * classic USDT site; the 5-byte nop right after it is the one 6.18+ kernels optimize. */
	__asm__ __volatile__("990: nop\n"
			     ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n" SPANPROF_NOTE("8@%%rdi")
			     :
			     : "D"(arg)
			     : "memory");
#elif defined(__aarch64__)
	register const void *x0 __asm__("x0") = arg;

	__asm__ __volatile__("990: nop\n" SPANPROF_NOTE("8@x0") : : "r"(x0) : "memory");
#else
#error "spanprof_span_set: add the probe site for this architecture"
#endif
}

SPANPROF_EXPORT int spanprof_active(void)
{
	if (hook_owner.active)
		return hook_owner.active();
	return spanprof_span_set_semaphore != 0;
}

#ifndef SPANPROF_HOOK_TEST_BEFORE_OWNER
/* The owner note (hook_owner.h): loaded with the object, so the other copies find this one's
 * functions whether or not its dynamic symbol table exports them (an executable that links
 * libspanprof.a, a plugin linked with a version script). Each entry is the function's distance
 * from the descriptor, resolved at link time through hidden aliases: no relocation at load. */
void hook_span_set_entry(const struct spanprof_span *span)
	__attribute__((alias("spanprof_span_set"), visibility("hidden")));
int hook_active_entry(void) __attribute__((alias("spanprof_active"), visibility("hidden")));

#define SPANPROF_STR2(x) #x
#define SPANPROF_STR(x) SPANPROF_STR2(x)
__asm__(".pushsection .note.spanprof.owner,\"a\",\"note\"\n"
	".balign 4\n"
	".4byte 2f-1f, 4f-3f, " SPANPROF_STR(
		HOOK_OWNER_NOTE_TYPE) "\n"
				      "1: .asciz \"" HOOK_OWNER_NOTE_NAME "\"\n"
				      "2: .balign 4\n"
				      "3: .8byte hook_span_set_entry - 3b\n"
				      ".8byte hook_active_entry - 3b\n"
				      ".8byte hook_publish_entry - 3b\n"
				      "4: .balign 4\n"
				      ".popsection\n");
#endif
