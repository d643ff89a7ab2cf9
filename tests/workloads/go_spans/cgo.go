// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

//go:build cgo && spanprof_cgo

// With -tags spanprof_cgo (and cgo on), go_spans calls C: a package of its own with cgo makes
// Go's linker link externally, so the runtime keeps g in the TLS variable runtime.tlsg. The C
// side's own thread-local variables share the executable's TLS block and move runtime.tlsg
// away from FS base - 8, where an internally linked Go program keeps it.
package main

/*
static __thread long spanprof_cgo_calls = 1;
static __thread char spanprof_cgo_scratch[200] __attribute__((aligned(64)));

static long spanprof_cgo_call(void)
{
	spanprof_cgo_scratch[0]++;
	return spanprof_cgo_calls++ + spanprof_cgo_scratch[0] - 1;
}
*/
import "C"

func init() {
	if C.spanprof_cgo_call() != 1 {
		panic("cgo: wrong thread-local value")
	}
}
