// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Package harness is what the Go test workloads do around their work: burn CPU, count the
// process's CPU time, wait for the test's go-ahead file and for the agent. It links no spanprof
// hook (go_pprof_labels must carry none): a workload with the hook passes its Active.
package harness

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

var sink uint64

// Block is one unit of CPU work (a few microseconds).
func Block() {
	for i := 0; i < 2000; i++ {
		sink += uint64(i)
	}
}

// CPUSeconds is the CPU time the whole process used (user + system).
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// Spin burns CPU for about d of wall time.
func Spin(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		Block()
	}
}

// SpinUntilCPU burns CPU until the process used cpuEnd seconds of it (so a starved run still
// gives each function its samples), or wallLimit passed (a run that gets no CPU at all).
func SpinUntilCPU(cpuEnd float64, wallLimit time.Duration) {
	end := time.Now().Add(wallLimit)
	for CPUSeconds() < cpuEnd && time.Now().Before(end) {
		Block()
	}
}

// WaitFor polls for path, which the test creates once its own agent profiles the process
// (another agent on the machine may raise the hook's semaphore first); exits 3 when it did not
// come within limit.
func WaitFor(path string, limit time.Duration) {
	start := time.Now()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Since(start) > limit {
			fmt.Fprintln(os.Stderr, "no go-ahead file", path, "within", limit)
			os.Exit(3)
		}
		time.Sleep(time.Millisecond)
	}
}

// WaitAttached polls active (the hook's spanprof.Active) until an agent attached; exits 3 when
// none did within limit. Returns how long it took.
func WaitAttached(active func() bool, limit time.Duration) time.Duration {
	start := time.Now()
	for !active() {
		if time.Since(start) > limit {
			fmt.Fprintln(os.Stderr, "agent did not attach within", limit)
			os.Exit(3)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(start)
}

// Start reads the arguments most workloads share, "[SECONDS [FILE]]": SECONDS of work (3 when
// not given), and the go-ahead file, which it waits up to 20 s for.
func Start() float64 {
	seconds := 3.0
	if len(os.Args) > 1 {
		seconds, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	if len(os.Args) > 2 {
		WaitFor(os.Args[2], 20*time.Second)
	}
	return seconds
}
