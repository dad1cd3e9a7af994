package atomicfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestOnlyRegularFilesAreReplaced(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	writeFile(t, target, []byte("keep me"))
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{link: "a symbolic link", fifo: "a named pipe", sub: "a directory", os.DevNull: "a device"} {
		if err := CheckOutput(path); err == nil || !strings.Contains(err.Error(), kind) {
			t.Errorf("CheckOutput(%s) = %v, want %q", path, err, kind)
		}
		if err := Write(context.Background(), path, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), kind) {
			t.Errorf("Write(%s) = %v, want a refusal naming %q", path, err, kind)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced")
	}
	for _, ok := range []string{target, filepath.Join(dir, "new")} {
		if err := Write(context.Background(), ok, []byte("new"), 0o644); err != nil {
			t.Errorf("Write(%s): %v", ok, err)
		}
	}
	if got, want := names(t, dir), []string{"fifo", "link", "new", "sub", "target"}; !slices.Equal(got, want) {
		t.Errorf("%s holds %v, want %v (no temporary file left)", dir, got, want)
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot start a process:", err)
	}
	if processAlive(cmd.Process.Pid) {
		t.Skip("the pid was reused")
	}
	return cmd.Process.Pid
}

func TestStaleTempFilesAreCleaned(t *testing.T) {
	dir := t.TempDir()
	name := func(host string, pid int) string {
		return fmt.Sprintf(".r.msgpack.%s-%d-1.tmp", host, pid)
	}
	dead := name(hostname(), deadPID(t))
	live := name(hostname(), os.Getppid())
	otherHost := name("elsewhere", deadPID(t))
	mine := name(hostname(), os.Getpid())
	for _, n := range []string{dead, live, otherHost, mine, ".notours.tmp"} {
		writeFile(t, filepath.Join(dir, n), nil)
	}
	if err := Write(context.Background(), filepath.Join(dir, "r.msgpack"), []byte("r"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, dead)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file of a dead process was left: %v", err)
	}
	for _, n := range []string{live, otherHost, mine, ".notours.tmp", "r.msgpack"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v (only dead processes' files of this host go)", n, err)
		}
	}
	if !tempRe.MatchString(filepath.Base(tempName(filepath.Join(dir, "a.b-c.msgpack")))) {
		t.Error("tempName does not match the pattern cleanStaleTemps looks for")
	}
}

// A file that cannot be created is an error naming the path asked for and
// its directory, not the temporary file written first (/proc takes no new
// files, even from root).
func TestWriteErrorNamesThePath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	err := Write(context.Background(), "/proc/synclab-test.csv", []byte("x"), 0o644)
	if err == nil || err.Error() != "write /proc/synclab-test.csv: create a file in /proc: no such file or directory" {
		t.Fatalf("error %v", err)
	}
}

// CheckOutput finds, before any work, what Write would fail on in the
// directory: no directory there, or one that takes no new files. It leaves
// nothing behind and creates no directory; a missing one is Write's to make.
func TestCheckOutputTriesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, file, []byte("x"))
	cases := []struct{ path, want string }{
		{filepath.Join(dir, "new", "deeper", "r.html"), ""},
		{filepath.Join(dir, "r.html"), ""},
		{filepath.Join(file, "r.html"), file + " is not a directory"},
		{filepath.Join(file, "sub", "r.html"), file + " is not a directory"},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases, struct{ path, want string }{"/proc/synclab-test.html", "cannot create a file in /proc: no such file or directory"})
	}
	for _, c := range cases {
		err := CheckOutput(c.path)
		if got := fmt.Sprint(err); c.want == "" && err != nil || c.want != "" && got != c.want {
			t.Errorf("CheckOutput(%s) = %v, want %q", c.path, err, c.want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("CheckOutput left %v in %s, want only the file", entries, dir)
	}
}

// A write cancelled before it starts leaves the file as it was and no
// temporary file behind.
func TestCancelledWriteLeavesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	writeFile(t, path, []byte("old"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Write(ctx, path, []byte("new"), 0o644); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write with a cancelled context: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the file reads %q, want the old content", b)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"report.html"}) {
		t.Errorf("%s holds %v, want report.html only", dir, got)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// names lists what dir holds, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// WriteFunc streams what fill writes to the file; a fill that fails, or a
// context cancelled while it writes, leaves the file as it was and no
// temporary file behind.
func TestWriteFunc(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.json")
	big := bytes.Repeat([]byte("0123456789abcdef"), 3*writeChunk/16+5) // past the buffer and a chunk
	if err := WriteFunc(context.Background(), path, 0o644, func(w io.Writer) error {
		for i := 0; i < len(big); i += 1000 {
			if _, err := w.Write(big[i:min(i+1000, len(big))]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, big) {
		t.Fatalf("the file holds %d bytes, want the %d written", len(b), len(big))
	}
	boom := errors.New("boom")
	ctx, cancel := context.WithCancel(context.Background())
	for _, c := range []struct {
		name string
		ctx  context.Context
		fill func(w io.Writer) error
		want error
	}{
		{"fill fails", context.Background(), func(w io.Writer) error { w.Write([]byte("partial")); return boom }, boom},
		{"cancelled while writing", ctx, func(w io.Writer) error {
			w.Write([]byte("partial"))
			cancel()
			_, err := w.Write(big) // larger than the buffer: reaches the file
			return err
		}, context.Canceled},
	} {
		if err := WriteFunc(c.ctx, path, 0o644, c.fill); !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, big) {
			t.Errorf("%s: the file changed (%d bytes)", c.name, len(b))
		}
		if got := names(t, dir); !slices.Equal(got, []string{"trace.json"}) {
			t.Errorf("%s: %s holds %v, want trace.json only", c.name, dir, got)
		}
	}
}
