// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// go_spans: many goroutines, each in its own span, running a distinct function per span across
// GOMAXPROCS threads. The agent must attribute samples to the goroutine's span, not the thread's.
package main

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	spanprof "github.com/spanprof/spanprof/hooks/go"
	harness "github.com/spanprof/spanprof/hooks/go/internal/testworkloads/go_harness"
)

// spin stays a frame of its own: the test looks for it between the work functions and the
// harness.
//
//go:noinline
func spin(d time.Duration) { harness.Spin(d) }

//go:noinline
func goWorkA(d time.Duration) { spin(d) }

//go:noinline
func goWorkB(d time.Duration) { spin(d) }

//go:noinline
func goWorkC(d time.Duration) { spin(d) }

//go:noinline
func goWorkD(d time.Duration) { spin(d) }

//go:noinline
func goWorkOutside(d time.Duration) { spin(d) }

var works = []func(time.Duration){goWorkA, goWorkB, goWorkC, goWorkD}

// Span ids the test expects: goWorkA runs in span 5a5a000000000011, goWorkB in ...12, and so on.
func span(n int) *spanprof.Span {
	s := &spanprof.Span{}
	for i := range s.TraceID {
		s.TraceID[i] = 0x7e
	}
	s.SpanID[0], s.SpanID[1], s.SpanID[7] = 0x5a, 0x5a, byte(0x10+n)
	s.SetName("go-work-" + strconv.Itoa(n))
	return s
}

// worker runs until the process has used cpuBudget CPU seconds (so a starved run still gives
// every function its samples) or maxWall passed.
func worker(n int, cpuBudget float64, maxWall time.Duration, wg *sync.WaitGroup) {
	defer wg.Done()
	s := span(n)
	end := time.Now().Add(maxWall)
	for harness.CPUSeconds() < cpuBudget && time.Now().Before(end) {
		spanprof.Set(s)
		works[n-1](3 * time.Millisecond)
		spanprof.Clear()
		goWorkOutside(time.Millisecond)
		runtime.Gosched()
	}
}

func main() {
	seconds := harness.Start()
	attached := harness.WaitAttached(spanprof.Active, 10*time.Second)
	fmt.Printf("attached after %.3f s\n", attached.Seconds())
	// SECONDS/2 CPU seconds in all (about SECONDS/4 of wall time on an idle 2-CPU machine), at
	// most 30 s of wall time.
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go worker(g%4+1, harness.CPUSeconds()+seconds/2, 30*time.Second, &wg)
	}
	wg.Wait()
	fmt.Printf("cpu_s=%.3f\n", harness.CPUSeconds())
}
