// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Pattern-matches the CFA, return-address and rbp rules libdw computed for one CFI row (libdw
 * does not evaluate expressions, so the few shapes the unwinder follows are recognized here). */
#include <dwarf.h>
#include <stdint.h>
#include <string.h>

#include "unwind/cfi_rule.h"

/* DWARF register numbers on x86-64. */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RIP 16

/* A register plus offset, as libdw reports DW_CFA_def_cfa (DW_OP_bregx reg off) or an
 * expression DW_OP_bregN off. Returns the register or -1. */
static int breg(const Dwarf_Op *op, int64_t *off)
{
	if (op->atom == DW_OP_bregx) {
		*off = (int64_t)op->number2;
		return (int)op->number;
	}
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*off = (int64_t)op->number;
		return op->atom - DW_OP_breg0;
	}
	return -1;
}

/* The expression GCC and binutils emit for the whole .plt:
 * breg7 N; breg16 0; lit15; and; lit11|lit10; ge; lit3; shl; plus. Returns the PLT kind or 0. */
static int plt_kind(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	static const uint8_t tail[] = { DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	int64_t rip_off;
	size_t i;

	if (n != 9 || breg(&ops[0], off) != REG_RSP || breg(&ops[1], &rip_off) != REG_RIP ||
	    rip_off != 0 || ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and)
		return 0;
	for (i = 0; i < sizeof(tail); i++)
		if (ops[5 + i].atom != tail[i])
			return 0;
	if (ops[4].atom == DW_OP_lit11)
		return SPANPROF_CFA_PLT1;
	if (ops[4].atom == DW_OP_lit10)
		return SPANPROF_CFA_PLT2;
	return 0;
}

static int fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void decode_cfa(Dwarf_Frame *fr, struct spanprof_unwind_rule *r)
{
	Dwarf_Op *ops = NULL;
	size_t n = 0;
	int64_t off = 0;
	int reg, kind;

	r->cfa_kind = SPANPROF_CFA_INVALID;
	if (dwarf_frame_cfa(fr, &ops, &n) || n == 0)
		return;
	if (n == 1) {
		reg = breg(&ops[0], &off);
		if ((reg != REG_RSP && reg != REG_RBP) || !fits_s32(off))
			return;
		r->cfa_kind = reg == REG_RSP ? SPANPROF_CFA_RSP : SPANPROF_CFA_RBP;
		r->cfa_off = (int32_t)off;
		return;
	}
	kind = plt_kind(ops, n, &off);
	if (kind && fits_s32(off)) {
		r->cfa_kind = kind;
		r->cfa_off = (int32_t)off;
	}
}

enum saved_at {
	SAVED_SAME,
	SAVED_UNDEFINED,
	SAVED_CFA_OFFSET,
	SAVED_OTHER,
};

/* Where the caller's value of regno is: unchanged, undefined, at CFA + *off, or elsewhere. */
static enum saved_at saved_where(Dwarf_Frame *fr, int regno, int64_t *off)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 0;

	if (dwarf_frame_register(fr, regno, mem, &ops, &n))
		return SAVED_OTHER;
	if (n == 0)
		return ops ? SAVED_UNDEFINED : SAVED_SAME;
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return SAVED_OTHER;
	if (n == 1) {
		*off = 0;
		return SAVED_CFA_OFFSET;
	}
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number; /* negative offsets come wrapped */
		return fits_s32(*off) ? SAVED_CFA_OFFSET : SAVED_OTHER;
	}
	return SAVED_OTHER;
}

void cfi_rule_decode(Dwarf_Frame *fr, bool signalp, int ra_reg, struct spanprof_unwind_rule *r)
{
	int64_t off = 0;

	memset(r, 0, sizeof(*r));
	if (signalp) {
		r->cfa_kind = SPANPROF_CFA_SIGNAL;
		return;
	}
	switch (saved_where(fr, ra_reg, &off)) {
	case SAVED_UNDEFINED:
		r->cfa_kind = SPANPROF_CFA_STOP;
		return;
	case SAVED_CFA_OFFSET:
		if (off == -8)
			break;
		/* fall through */
	default:
		r->cfa_kind = SPANPROF_CFA_INVALID;
		return;
	}
	decode_cfa(fr, r);
	if (r->cfa_kind == SPANPROF_CFA_INVALID)
		return;
	switch (saved_where(fr, REG_RBP, &off)) {
	case SAVED_SAME:
		r->rbp_kind = SPANPROF_RBP_SAME;
		break;
	case SAVED_CFA_OFFSET:
		r->rbp_kind = SPANPROF_RBP_AT_CFA;
		r->rbp_off = (int32_t)off;
		break;
	default:
		r->rbp_kind = SPANPROF_RBP_LOST;
		break;
	}
}

bool cfi_rule_equal(const struct spanprof_unwind_rule *a, const struct spanprof_unwind_rule *b)
{
	return a->cfa_kind == b->cfa_kind && a->rbp_kind == b->rbp_kind &&
	       a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off;
}
