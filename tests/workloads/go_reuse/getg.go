// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package main

// getg returns the running goroutine's g pointer (getg_amd64.s).
func getg() uintptr
