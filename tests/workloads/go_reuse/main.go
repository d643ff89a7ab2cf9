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
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"

	spanprof "github.com/spanprof/spanprof/hooks/go"
)

var sink uint64

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// spin burns about d of CPU.
func spin(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 2000; i++ {
			sink += uint64(i)
		}
	}
}

//go:noinline
func goBound(d time.Duration) { spin(d) }

//go:noinline
func goFresh(d time.Duration) { spin(d) }

//go:noinline
func goInheritChild(d time.Duration) { spin(d) }

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

func waitFor(path string) {
	start := time.Now()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Since(start) > 20*time.Second {
			fmt.Fprintln(os.Stderr, "no go-ahead file", path, "within 20 s")
			os.Exit(3)
		}
		time.Sleep(time.Millisecond)
	}
}

func main() {
	seconds := 3.0
	if len(os.Args) > 1 {
		seconds, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	if len(os.Args) > 2 {
		waitFor(os.Args[2])
	}
	start := time.Now()
	for !spanprof.Active() {
		if time.Since(start) > 10*time.Second {
			fmt.Fprintln(os.Stderr, "agent did not attach within 10 s")
			os.Exit(3)
		}
		time.Sleep(time.Millisecond)
	}
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
	for (cpuBound < need || cpuFresh < need || cpuChild < need) && time.Now().Before(wallEnd) {
		var wg sync.WaitGroup
		t := cpuSeconds()
		wg.Add(1)
		go func() { // sets a span and exits in it
			defer wg.Done()
			spanprof.Set(bound)
			goBound(slice)
			dead.add(getg())
		}()
		wg.Wait()
		cpuBound += cpuSeconds() - t
		var onDead bool
		t = cpuSeconds()
		wg.Add(1)
		go func() { // fresh, outside any span
			defer wg.Done()
			onDead = dead.has(getg())
			goFresh(slice)
		}()
		wg.Wait()
		cpuFresh += cpuSeconds() - t
		fresh++
		if onDead {
			reused++
		}
		t = cpuSeconds()
		wg.Add(1)
		go func() { // another span-setting goroutine dies, then a labelled parent's child runs
			defer wg.Done()
			spanprof.Set(bound)
			goBound(slice)
			dead.add(getg())
		}()
		wg.Wait()
		cpuBound += cpuSeconds() - t
		t = cpuSeconds()
		wg.Add(1)
		go func() {
			defer wg.Done()
			pprof.SetGoroutineLabels(labelled)
			var child sync.WaitGroup
			child.Add(1)
			go func() {
				defer child.Done()
				onDead = dead.has(getg())
				goInheritChild(slice)
			}()
			child.Wait()
		}()
		wg.Wait()
		cpuChild += cpuSeconds() - t
		fresh++
		if onDead {
			reused++
		}
	}
	fmt.Printf("reuse %d %d\n", reused, fresh)
}
