// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	harness "github.com/spanprof/spanprof/hooks/go/internal/testworkloads/go_harness"
	"github.com/spanprof/spanprof/hooks/go/otelspanprof"
)

//go:noinline
func goRPC(blocks int) { work(blocks) }

//go:noinline
func goAfterEnd(blocks int) { work(blocks) }

//go:noinline
func goFresh(blocks int) { work(blocks) }

//go:noinline
func goBoundWorker(blocks int) { work(blocks) }

//go:noinline
func goAfterUnbind(blocks int) { work(blocks) }

// work spins for a fixed amount of work, not for a wall-time slice: each function of the loop
// below then gets the same share of the CPU however often the runtime or a loaded machine
// preempts it (a wall-time slice gave a function that was often preempted too few samples).
func work(blocks int) {
	for b := 0; b < blocks && harness.CPUSeconds() < cpuEnd; b++ {
		harness.Block()
	}
}

// run starts f on a new goroutine and waits for it.
func run(f func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f()
	}()
	wg.Wait()
}

// churn loops, until the CPU budget is spent, over the ways a span can be left behind on a
// goroutine, each followed by a fresh goroutine (started by main, outside any span) that the
// runtime will often put on the same g:
//   - an RPC span ended through its context, as otelgrpc's stats handler does; the goroutine
//     goes on (goAfterEnd) in no span;
//   - a worker that binds a long-lived span and exits bound;
//   - a worker that binds it and unbinds, then goes on (goAfterUnbind) in no span.
func churn() {
	tr := otelspanprof.NewTracerProvider(sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample()))).Tracer("go_otel")
	var bindCtx context.Context
	var bindRoot trace.Span
	// Started on a goroutine that exits in it, so that main (which starts every other
	// goroutine) carries no span labels to pass on.
	run(func() { bindCtx, bindRoot = tr.Start(context.Background(), "bind-root") })
	fmt.Printf("goBoundWorker %s\n", bindRoot.SpanContext().SpanID())
	const slice = 200 // blocks of work: about 0.3 ms of CPU each on this project's VMs
	wallEnd := time.Now().Add(60 * time.Second)
	n := 0
	for harness.CPUSeconds() < cpuEnd && time.Now().Before(wallEnd) {
		run(func() {
			ctx, _ := tr.Start(context.Background(), "rpc")
			goRPC(slice)
			trace.SpanFromContext(ctx).End()
			goAfterEnd(slice)
		})
		run(func() { goFresh(slice) })
		run(func() {
			otelspanprof.Bind(bindCtx)
			goBoundWorker(slice)
		})
		run(func() { goFresh(slice) })
		run(func() {
			unbind := otelspanprof.Bind(bindCtx)
			goBoundWorker(slice)
			unbind()
			goAfterUnbind(slice)
		})
		run(func() { goFresh(slice) })
		n += 6
	}
	bindRoot.End()
	fmt.Printf("goroutines %d\n", n)
}
