// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Package spanprof tells the spanprof agent which OpenTelemetry span the running goroutine is
// in, so the agent's CPU samples of this goroutine carry that span's id. It is pure Go (no cgo):
// the agent finds the hook by its symbols inside the executable and attaches a uprobe to it.
// Without an agent a call costs one load and a branch.
package spanprof

// NameMax is the size of Span.Name, as in include/spanprof.h: names up to 255 bytes.
const NameMax = 256

// ABIVersion is what Span.ABIVersion must hold (version 1 had a 64-byte name; agents read both).
const ABIVersion = 2

// Span is the span context the agent reads; its layout is struct spanprof_span of
// include/spanprof.h (296 bytes). The agent reads the name only up to its NUL.
type Span struct {
	ABIVersion uint32
	reserved   uint32
	TraceID    [16]byte // big-endian bytes, as in the hex form
	SpanID     [8]byte  // the span now active on this goroutine
	RootSpanID [8]byte  // its local root; all zero: the span is its own local root
	Name       [NameMax]byte
}

// SetName copies name into s.Name, truncated and NUL-terminated.
func (s *Span) SetName(name string) {
	n := copy(s.Name[:NameMax-1], name)
	for i := n; i < NameMax; i++ {
		s.Name[i] = 0
	}
}

// goSemaphore is raised by the kernel while the agent is attached (uprobe ref_ctr_offset). The
// non-zero tag keeps the variable in initialized, file-backed data (the kernel can only raise a
// semaphore that lives in the file's mapping, never in .bss).
type goSemaphore struct {
	count uint16
	tag   uint16
}

var spanprofGoSemaphore = goSemaphore{count: 0, tag: 0x5350}

// Set makes s the span of the calling goroutine. The agent copies it during the call.
func Set(s *Span) {
	if spanprofGoSemaphore.count == 0 {
		return
	}
	s.ABIVersion = ABIVersion
	spanprofGoSpanSet(s)
}

// Clear says the calling goroutine is in no span any more.
func Clear() {
	if spanprofGoSemaphore.count == 0 {
		return
	}
	spanprofGoSpanSet(nil)
}

// Active reports whether an agent is attached to this process.
func Active() bool {
	return spanprofGoSemaphore.count != 0
}

// RootID is the id of s's local root: RootSpanID, or s's own id when it is its own root.
func (s *Span) RootID() [8]byte {
	if s.RootSpanID != [8]byte{} {
		return s.RootSpanID
	}
	return s.SpanID
}
