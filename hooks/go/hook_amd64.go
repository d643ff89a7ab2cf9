// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package spanprof

// spanprofGoSpanSet is the probe site (hook_amd64.s): the agent finds it by this name.
//
//go:noescape
func spanprofGoSpanSet(span *Span)
