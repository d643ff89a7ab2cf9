// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// go_hook bench: the cost of one span start+end through the OpenTelemetry SDK, with and without
// the spanprof integration. Run once with no agent and once with the agent attached. It prints
// "go <attached|none> <plain ns> <wrapped ns>": attached when an agent's uprobe was on its hook at
// the start or at the end of the run.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	spanprof "github.com/spanprof/spanprof/hooks/go"
	"github.com/spanprof/spanprof/hooks/go/otelspanprof"
)

func perSpan(tp trace.TracerProvider, n int) float64 {
	tr := tp.Tracer("bench")
	ctx := context.Background()
	best := 1e18
	for run := 0; run < 5; run++ {
		start := time.Now()
		for i := 0; i < n; i++ {
			_, s := tr.Start(ctx, "op")
			s.End()
		}
		if ns := float64(time.Since(start).Nanoseconds()) / float64(n); ns < best {
			best = ns
		}
	}
	return best
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "wait-agent" {
		for deadline := time.Now().Add(10 * time.Second); !spanprof.Active(); {
			if time.Now().After(deadline) {
				fmt.Fprintln(os.Stderr, "agent did not attach")
				os.Exit(3)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// An agent attached at the start or at the end was there for part of the run at least
	// (any agent counts, another spanprof agent on the machine too).
	attached := spanprof.Active()
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	perSpan(sdk, 20000) // warm up the SDK's allocations and the CPU's caches
	plain := perSpan(sdk, 200000)
	wrapped := perSpan(otelspanprof.NewTracerProvider(sdk), 200000)
	attached = attached || spanprof.Active()
	fmt.Printf("go %s %.0f %.0f\n", map[bool]string{true: "attached", false: "none"}[attached],
		plain, wrapped)
}
