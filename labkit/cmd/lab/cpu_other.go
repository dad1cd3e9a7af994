//go:build !unix

package main

import "time"

// childrenCPU is not measured here (no getrusage).
func childrenCPU() (time.Duration, bool) { return 0, false }
