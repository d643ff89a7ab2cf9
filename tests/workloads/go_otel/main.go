// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// go_otel: the OpenTelemetry integration. A sampled root span starts a worker goroutine that
// never calls Bind (it must inherit the span), and an unsampled root span runs alongside.
// With a third argument "churn" instead: spans ended the way otelgrpc ends them
// (trace.SpanFromContext(ctx).End()), workers that Bind a span and exit in it, or unbind, and
// fresh goroutines after each (see churn.go). Prints "<function> <span id>" for the functions
// whose span the test checks.
package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	spanprof "github.com/spanprof/spanprof/hooks/go"
	harness "github.com/spanprof/spanprof/hooks/go/internal/testworkloads/go_harness"
	"github.com/spanprof/spanprof/hooks/go/otelspanprof"
)

// cpuEnd: the process CPU time (seconds) at which every spin stops, so a starved run still gives
// each function its samples; the wall-clock limit only bounds a run that gets no CPU at all.
var cpuEnd float64

//go:noinline
func goInheritParent(d time.Duration) { harness.SpinUntilCPU(cpuEnd, d) }

//go:noinline
func goInheritChild(d time.Duration) { harness.SpinUntilCPU(cpuEnd, d) }

//go:noinline
func goUnsampled(d time.Duration) { harness.SpinUntilCPU(cpuEnd, d) }

func sampled(d time.Duration, wg *sync.WaitGroup) {
	defer wg.Done()
	tp := otelspanprof.NewTracerProvider(sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample())))
	ctx, root := tp.Tracer("go_otel").Start(context.Background(), "inherit-root")
	id := root.SpanContext().SpanID()
	fmt.Printf("goInheritParent %s\ngoInheritChild %s\n", id, id)
	var child sync.WaitGroup
	child.Add(1)
	go func() { // started inside the span; no Bind
		defer child.Done()
		goInheritChild(d)
	}()
	goInheritParent(d)
	child.Wait()
	root.End()
	_ = ctx
}

func unsampled(d time.Duration, wg *sync.WaitGroup) {
	defer wg.Done()
	tp := otelspanprof.NewTracerProvider(sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.NeverSample())))
	_, root := tp.Tracer("go_otel").Start(context.Background(), "unsampled-root")
	goUnsampled(d)
	root.End()
}

func main() {
	seconds := harness.Start()
	harness.WaitAttached(spanprof.Active, 10*time.Second)
	// SECONDS/4 of process CPU in all (about SECONDS/8 of wall time on an idle 2-CPU machine).
	cpuEnd = harness.CPUSeconds() + seconds/4
	if len(os.Args) > 3 && os.Args[3] == "churn" {
		churn()
		return
	}
	d := 30 * time.Second
	var wg sync.WaitGroup
	wg.Add(2)
	go sampled(d, &wg)
	go unsampled(d, &wg)
	wg.Wait()
}
