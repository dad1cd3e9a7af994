//go:build unix

package main

import (
	"syscall"
	"time"
)

// childrenCPU returns the CPU time (user and system) of this process's
// children and their descendants that have ended and been waited for: what
// the notebooks' nbconvert, kernels and cell builds used.
func childrenCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
