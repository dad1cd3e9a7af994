// Package atomicfile writes files so that a reader, or a run interrupted
// while writing, never leaves a partial one: a temporary file in the same
// directory, synced, then renamed over the target. Result files, reports
// and tables all go through it.
package atomicfile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// CheckOutput reports whether path may be written by Write: it does not
// exist or is a regular file, and its directory (or the nearest one that
// exists, under which Write creates the rest) takes new files. A symbolic
// link, directory, device, named pipe or socket is an error naming what it
// is. Commands call it before they start working, so that a bad output
// path fails at once, not after the work.
func CheckOutput(path string) error {
	if err := checkDir(filepath.Dir(path)); err != nil {
		return err
	}
	return checkTarget(path)
}

// checkTarget is CheckOutput's test of path itself.
func checkTarget(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode().IsRegular():
		return nil
	}
	return fmt.Errorf("%s is %s, not a regular file: refusing to replace it (give the path of a file to write)", path, fileKind(fi.Mode()))
}

// checkDir finds the nearest existing directory of dir and its parents and
// creates and removes a file in it: permissions, a read-only file system and
// a full quota all show, where a test of the mode bits would miss the last
// two and be wrong for root.
func checkDir(dir string) error {
	for {
		fi, err := os.Stat(dir)
		if err == nil && !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		if err == nil {
			break
		}
		// A missing directory, or a path through a file (ENOTDIR): the
		// nearest existing part decides.
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) || filepath.Dir(dir) == dir {
			return err
		}
		dir = filepath.Dir(dir)
	}
	// Named as Write's temporary files are, so that one left by a process
	// killed in between is cleaned up like theirs.
	f, err := os.OpenFile(tempName(filepath.Join(dir, "probe")), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// writeChunk is how much Write writes between checks of its context.
const writeChunk = 4 << 20

// Write writes b to a temporary file in path's directory (created if
// missing), gives it mode perm (not narrowed by the umask), syncs it and
// renames it over path, so a reader sees the old or the new content, never
// a partial file. Only a regular file is replaced (see CheckOutput). When
// ctx is cancelled it gives up, leaving path as it was. On the way it
// removes the temporary files that processes killed while writing left in
// the directory.
func Write(ctx context.Context, path string, b []byte, perm os.FileMode) error {
	return WriteFunc(ctx, path, perm, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// WriteFunc is Write with the content written by fill, through a buffer,
// straight to the temporary file: for content too large to build in memory
// first. An error from fill leaves path as it was.
func WriteFunc(ctx context.Context, path string, perm os.FileMode, fill func(w io.Writer) error) error {
	if err := checkTarget(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cleanStaleTemps(dir)
	f, err := os.OpenFile(tempName(path), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the temporary file's name means nothing to the caller
		}
		return fmt.Errorf("write %s: create a file in %s: %w", path, dir, err)
	}
	defer os.Remove(f.Name()) // no-op after a successful rename
	bw := bufio.NewWriterSize(ctxWriter{ctx, f}, 1<<20)
	if err = ctx.Err(); err == nil {
		err = fill(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(perm) // the file was created 0600
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = checkTarget(path) // it may have changed while we wrote
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return err
	}
	SyncDir(dir) // make the rename durable
	return nil
}

// ctxWriter writes to w in pieces of at most writeChunk bytes, and stops
// with ctx's error once ctx is cancelled.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		if err := c.ctx.Err(); err != nil {
			return n, err
		}
		m, err := c.w.Write(b[:min(len(b), writeChunk)])
		n += m
		if err != nil {
			return n, err
		}
		b = b[m:]
	}
	return n, nil
}

// SyncDir syncs a directory so that entries created, renamed or removed in
// it survive a crash (best effort).
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Temporary files are named .BASE.HOST-PID-N.tmp: the writing process's
// host and pid tell whether the process that left one is dead.
var (
	tempSeq  atomic.Uint64
	tempRe   = regexp.MustCompile(`^\..+\.([A-Za-z0-9-]+)-([0-9]+)-[0-9]+\.tmp$`)
	hostname = sync.OnceValue(func() string {
		h, _ := os.Hostname()
		h = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
				return r
			}
			return '-'
		}, h)
		if h == "" {
			h = "host"
		}
		return h
	})
)

// tempName returns a new temporary file name for path, in its directory.
func tempName(path string) string {
	return filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%s-%d-%d.tmp", filepath.Base(path), hostname(), os.Getpid(), tempSeq.Add(1)))
}

// cleanStaleTemps removes the temporary files in dir that a process of this
// host that is no longer running left (it was killed while writing).
// Processes of other hosts sharing the directory are left alone.
func cleanStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		m := tempRe.FindStringSubmatch(e.Name())
		if m == nil || m[1] != hostname() || !e.Type().IsRegular() {
			continue
		}
		if pid, err := strconv.Atoi(m[2]); err == nil && pid != os.Getpid() && !processAlive(pid) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
