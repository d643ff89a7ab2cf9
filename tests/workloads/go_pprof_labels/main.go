// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// go_pprof_labels: an app instrumented the way Grafana's otel-profiling-go does it, with no
// spanprof hook linked: goroutines carry the pprof labels span_id / span_name only.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var sink uint64

// cpuEnd: the process CPU time (seconds) at which every spin stops, so a starved run still gives
// each function its samples; the wall-clock limit only bounds a run that gets no CPU at all.
var cpuEnd float64

// cpuSeconds is the CPU time the whole process used (user + system).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func spin(wallLimit time.Duration) {
	end := time.Now().Add(wallLimit)
	for cpuSeconds() < cpuEnd && time.Now().Before(end) {
		for i := 0; i < 2000; i++ {
			sink += uint64(i)
		}
	}
}

//go:noinline
func goLabelled(d time.Duration) { spin(d) }

//go:noinline
func goNameOnly(d time.Duration) { spin(d) }

//go:noinline
func goUnlabelled(d time.Duration) { spin(d) }

func run(wg *sync.WaitGroup, d time.Duration, labels []string, work func(time.Duration)) {
	go func() {
		defer wg.Done()
		if labels != nil {
			ctx := pprof.WithLabels(context.Background(), pprof.Labels(labels...))
			pprof.SetGoroutineLabels(ctx)
		}
		work(d)
	}()
}

// waitFor polls for path (created by the test once the agent profiles us): with no hook in the
// binary there is no semaphore to watch.
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
	// SECONDS/4 of process CPU in all (about SECONDS/8 of wall time on an idle 2-CPU machine).
	cpuEnd = cpuSeconds() + seconds/4
	d := 30 * time.Second
	var wg sync.WaitGroup
	wg.Add(3)
	// Extra labels make the map realistic: the span keys are not alone in it.
	run(&wg, d, []string{"span_id", "5a5a0000000000a1", "span_name", "labelled-root",
		"route", "/cart", "tenant", "t1"}, goLabelled)
	// A name longer than the agent keeps (255 bytes): cut there, past the old 63-byte limit.
	run(&wg, d, []string{"span_name", "name-only-root/" + strings.Repeat("n", 285)}, goNameOnly)
	run(&wg, d, nil, goUnlabelled)
	wg.Wait()
}
