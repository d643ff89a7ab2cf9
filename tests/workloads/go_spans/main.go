// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// go_spans: many goroutines, each in its own span, running a distinct function per span across
// GOMAXPROCS threads. The agent must attribute samples to the goroutine's span, not the thread's.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	spanprof "github.com/spanprof/spanprof/hooks/go"
)

var sink uint64

func spin(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 2000; i++ {
			sink += uint64(i)
		}
	}
}

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

// cpuSeconds is the CPU time the whole process used (user + system).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// worker runs until the process has used cpuBudget CPU seconds (so a starved run still gives
// every function its samples) or maxWall passed.
func worker(n int, cpuBudget float64, maxWall time.Duration, wg *sync.WaitGroup) {
	defer wg.Done()
	s := span(n)
	end := time.Now().Add(maxWall)
	for cpuSeconds() < cpuBudget && time.Now().Before(end) {
		spanprof.Set(s)
		works[n-1](3 * time.Millisecond)
		spanprof.Clear()
		goWorkOutside(time.Millisecond)
		runtime.Gosched()
	}
}

// waitFor polls for path, which the test creates once its agent is profiling us: another
// agent on the machine may raise the hook's semaphore before ours has attached.
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
	fmt.Printf("attached after %.3f s\n", time.Since(start).Seconds())
	// SECONDS/2 CPU seconds in all (about SECONDS/4 of wall time on an idle 2-CPU machine), at
	// most 30 s of wall time.
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go worker(g%4+1, cpuSeconds()+seconds/2, 30*time.Second, &wg)
	}
	wg.Wait()
	fmt.Printf("cpu_s=%.3f\n", cpuSeconds())
}
