// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// go_span_fill: fills the agent's goroutine span map in two steps, then runs one goroutine in a
// span set after both.
//
//	go_span_fill N1 FILE1 N2 FILE2 SECONDS FILE3
//
// Once the hook is active and FILE1 exists, N1 goroutines each set their own span and park; once
// FILE2 exists, N2 more do. Then goFilled runs in span 5a5a0000000000c1 (set again every few
// milliseconds) until the process used SECONDS of CPU, prints "filled done", and the process
// exits once FILE3 exists. Go files: the test creates each once the agent showed what it waits for.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	spanprof "github.com/spanprof/spanprof/hooks/go"
	harness "github.com/spanprof/spanprof/hooks/go/internal/testworkloads/go_harness"
)

//go:noinline
func goFilled(d time.Duration) { harness.Spin(d) }

func span(id uint64) *spanprof.Span {
	s := &spanprof.Span{}
	for i := range s.TraceID {
		s.TraceID[i] = 0x7f
	}
	for i := 0; i < 8; i++ {
		s.SpanID[7-i] = byte(id >> (8 * i))
	}
	s.SetName("fill")
	return s
}

// park starts n goroutines that each set their own span and block on hold; it returns once all
// have set theirs.
func park(n int, first uint64, hold chan struct{}) {
	var set sync.WaitGroup
	for i := 0; i < n; i++ {
		set.Add(1)
		go func(id uint64) {
			spanprof.Set(span(id))
			set.Done()
			<-hold
		}(first + uint64(i))
	}
	set.Wait()
}

func main() {
	if len(os.Args) != 7 {
		fmt.Fprintln(os.Stderr, "usage: go_span_fill N1 FILE1 N2 FILE2 SECONDS FILE3")
		os.Exit(2)
	}
	n1, _ := strconv.Atoi(os.Args[1])
	n2, _ := strconv.Atoi(os.Args[3])
	seconds, _ := strconv.ParseFloat(os.Args[5], 64)
	harness.WaitAttached(spanprof.Active, 20*time.Second)
	hold := make(chan struct{})
	harness.WaitFor(os.Args[2], 60*time.Second)
	park(n1, 0x5a5a000000100000, hold)
	fmt.Println("parked", n1)
	harness.WaitFor(os.Args[4], 60*time.Second)
	park(n2, 0x5a5a000000200000, hold)
	fmt.Println("parked", n2)
	done := make(chan struct{})
	go func() {
		s := span(0x5a5a0000000000c1)
		budget := harness.CPUSeconds() + seconds
		for harness.CPUSeconds() < budget {
			spanprof.Set(s)
			goFilled(3 * time.Millisecond)
		}
		spanprof.Clear()
		close(done)
	}()
	<-done
	fmt.Println("filled done")
	harness.WaitFor(os.Args[6], 60*time.Second)
	close(hold)
}
