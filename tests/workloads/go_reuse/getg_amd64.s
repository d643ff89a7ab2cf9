// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The running goroutine's runtime.g address (the TLS slot the agent reads), so the workload can
// count how often the runtime gave a fresh goroutine a g that a dead one used.

#include "textflag.h"

// func getg() uintptr
TEXT ·getg(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
