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
	"strconv"
	"sync"
	"syscall"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	spanprof "github.com/spanprof/spanprof/hooks/go"
	"github.com/spanprof/spanprof/hooks/go/otelspanprof"
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
func goInheritParent(d time.Duration) { spin(d) }

//go:noinline
func goInheritChild(d time.Duration) { spin(d) }

//go:noinline
func goUnsampled(d time.Duration) { spin(d) }

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
	// SECONDS/4 of process CPU in all (about SECONDS/8 of wall time on an idle 2-CPU machine).
	cpuEnd = cpuSeconds() + seconds/4
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
