//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package labkit

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f without waiting; it fails
// with errLocked when another process holds it. The lock goes with f's
// descriptor (closing f, or the process dying, releases it).
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}
