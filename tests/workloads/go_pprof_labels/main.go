// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// go_pprof_labels: an app instrumented the way Grafana's otel-profiling-go does it, with no
// spanprof hook linked: goroutines carry the pprof labels span_id / span_name only.
package main

import (
	"context"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	harness "github.com/spanprof/spanprof/hooks/go/internal/testworkloads/go_harness"
)

// cpuEnd: the process CPU time (seconds) at which every spin stops, so a starved run still gives
// each function its samples; the wall-clock limit only bounds a run that gets no CPU at all.
var cpuEnd float64

//go:noinline
func goLabelled(d time.Duration) { harness.SpinUntilCPU(cpuEnd, d) }

//go:noinline
func goNameOnly(d time.Duration) { harness.SpinUntilCPU(cpuEnd, d) }

//go:noinline
func goUnlabelled(d time.Duration) { harness.SpinUntilCPU(cpuEnd, d) }

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

func main() {
	// The go-ahead file: with no hook in the binary there is no semaphore to watch.
	seconds := harness.Start()
	// SECONDS/4 of process CPU in all (about SECONDS/8 of wall time on an idle 2-CPU machine).
	cpuEnd = harness.CPUSeconds() + seconds/4
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
