// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package spanprof

import (
	"testing"
	"unsafe"
)

func TestSpanLayoutMatchesTheCHeader(t *testing.T) {
	var s Span
	if unsafe.Sizeof(s) != 296 {
		t.Fatalf("Span is %d bytes, struct spanprof_span is 296", unsafe.Sizeof(s))
	}
	if unsafe.Offsetof(s.TraceID) != 8 || unsafe.Offsetof(s.SpanID) != 24 ||
		unsafe.Offsetof(s.RootSpanID) != 32 || unsafe.Offsetof(s.Name) != 40 {
		t.Fatalf("field offsets differ from include/spanprof.h")
	}
}

func TestSetNameTruncatesAndTerminates(t *testing.T) {
	var s Span
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'x'
	}
	s.SetName(string(long))
	if s.Name[NameMax-1] != 0 || s.Name[NameMax-2] != 'x' {
		t.Fatalf("name not truncated to %d bytes plus NUL", NameMax-1)
	}
	s.SetName("ab")
	if s.Name[0] != 'a' || s.Name[1] != 'b' || s.Name[2] != 0 || s.Name[3] != 0 {
		t.Fatalf("shorter name left old bytes behind: %q", s.Name[:4])
	}
}

func TestRootIDFallsBackToOwnID(t *testing.T) {
	s := Span{SpanID: [8]byte{1}}
	if s.RootID() != s.SpanID {
		t.Fatalf("own root: got %x", s.RootID())
	}
	s.RootSpanID = [8]byte{9}
	if s.RootID() != s.RootSpanID {
		t.Fatalf("child: got %x", s.RootID())
	}
}
