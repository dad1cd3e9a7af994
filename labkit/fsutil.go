package labkit

import (
	"context"
	"os"

	"synclab/labkit/internal/atomicfile"
)

// CheckOutput reports whether path may be written by WriteFileAtomic: it
// does not exist or is a regular file. A symbolic link, directory, device,
// named pipe or socket is an error naming what it is. Commands call it
// before they start working, so that a bad output path fails at once.
func CheckOutput(path string) error { return atomicfile.CheckOutput(path) }

// WriteFileAtomic writes b to a temporary file in path's directory (created
// if missing), gives it mode perm (not narrowed by the umask), syncs it and
// renames it over path, so a reader sees the old or the new content, never
// a partial file. Only a regular file is replaced (see CheckOutput). On the
// way it removes the temporary files that processes killed while writing
// left in the directory.
func WriteFileAtomic(path string, b []byte, perm os.FileMode) error {
	return atomicfile.Write(context.Background(), path, b, perm)
}
