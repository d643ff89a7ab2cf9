// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The Go hook's probe site: semaphore check, the span pointer in DI (the register the agent's
// uprobe reads), then the `nop; nop5` pair. 6.18+ kernels optimize a uprobe on the 5-byte nop.

#include "textflag.h"

// func spanprofGoSpanSet(span *Span)
TEXT ·spanprofGoSpanSet(SB), NOSPLIT, $0-8
	MOVWLZX ·spanprofGoSemaphore(SB), AX
	TESTW AX, AX
	JEQ done
	MOVQ span+0(FP), DI
	BYTE $0x90
	BYTE $0x0f; BYTE $0x1f; BYTE $0x44; BYTE $0x00; BYTE $0x00
done:
	RET
