// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// go_reuse: goroutine churn where the runtime reuses a dead goroutine's g. In a loop:
//   - a goroutine sets a span with the hook (spanprof.Set) and exits without clearing it, as a
//     worker that called otelspanprof.Bind, or whose span a library ended, does;
//   - a fresh goroutine, started outside any span, spins: it must carry no span;
//   - a goroutine labelled span_id 5a5a0000000000b2 with pprof starts a child: the child must
//     carry that label's span, not a dead goroutine's hook span on the same g.
//
// Prints "goBound 5a5a0000000000b1", "goInheritChild 5a5a0000000000b2", and at the end
// "reuse N M": of M fresh or child goroutines, N ran on a g a span-setting goroutine had used.
package main

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"time"

	spanprof "github.com/spanprof/spanprof/hooks/go"
	harness "github.com/spanprof/spanprof/hooks/go/internal/testworkloads/go_harness"
)

//go:noinline
func goBound(d time.Duration) { harness.Spin(d) }

//go:noinline
func goFresh(d time.Duration) { harness.Spin(d) }

//go:noinline
func goInheritChild(d time.Duration) { harness.Spin(d) }

// The set of g addresses goroutines with a hook span died on.
type gset struct {
	mu   sync.Mutex
	seen map[uintptr]bool
}

func (s *gset) add(g uintptr) { s.mu.Lock(); s.seen[g] = true; s.mu.Unlock() }
func (s *gset) has(g uintptr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[g]
}

// timed runs f on a goroutine of its own, waits for it, and returns the CPU seconds the process
// used meanwhile.
func timed(f func()) float64 {
	var wg sync.WaitGroup
	t := harness.CPUSeconds()
	wg.Add(1)
	go func() {
		defer wg.Done()
		f()
	}()
	wg.Wait()
	return harness.CPUSeconds() - t
}

func main() {
	seconds := harness.Start()
	harness.WaitAttached(spanprof.Active, 10*time.Second)
	bound := &spanprof.Span{}
	bound.TraceID[0], bound.SpanID[0], bound.SpanID[1], bound.SpanID[7] = 0x7e, 0x5a, 0x5a, 0xb1
	bound.SetName("bound-then-exit")
	labelled := pprof.WithLabels(context.Background(),
		pprof.Labels("span_id", "5a5a0000000000b2", "span_name", "labelled-parent"))
	fmt.Printf("goBound 5a5a0000000000b1\ngoInheritChild 5a5a0000000000b2\n")

	dead := &gset{seen: map[uintptr]bool{}}
	reused, fresh := 0, 0
	// Each kind of goroutine runs until it has had its own share of CPU (the phases run one at
	// a time), so that a loaded machine's scheduling cannot starve one kind of samples.
	need := seconds / 8
	var cpuBound, cpuFresh, cpuChild float64
	wallEnd := time.Now().Add(60 * time.Second)
	const slice = 300 * time.Microsecond
	dieInSpan := func() { // sets a span and exits in it
		spanprof.Set(bound)
		goBound(slice)
		dead.add(getg())
	}
	for (cpuBound < need || cpuFresh < need || cpuChild < need) && time.Now().Before(wallEnd) {
		var onDead bool
		cpuBound += timed(dieInSpan)
		cpuFresh += timed(func() { // fresh, outside any span
			onDead = dead.has(getg())
			goFresh(slice)
		})
		fresh++
		if onDead {
			reused++
		}
		// Another span-setting goroutine dies, then a labelled parent's child runs.
		cpuBound += timed(dieInSpan)
		cpuChild += timed(func() {
			pprof.SetGoroutineLabels(labelled)
			var child sync.WaitGroup
			child.Add(1)
			go func() {
				defer child.Done()
				onDead = dead.has(getg())
				goInheritChild(slice)
			}()
			child.Wait()
		})
		fresh++
		if onDead {
			reused++
		}
	}
	fmt.Printf("reuse %d %d\n", reused, fresh)
}
