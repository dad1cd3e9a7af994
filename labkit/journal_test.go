package labkit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"synclab/platforms"
)

// interruptAfter returns a run function that runs run n times, then
// cancels cancel and fails like an interrupted run, counting its calls.
func interruptAfter(n int32, cancel context.CancelFunc, calls *atomic.Int32, run platforms.RunFunc) platforms.RunFunc {
	return func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
		if calls.Add(1) > n {
			cancel()
			return platforms.RunResult{}, ctx.Err()
		}
		return run(ctx, spec)
	}
}

// counted returns fixtureRun counting its calls.
func counted(calls *atomic.Int32) platforms.RunFunc {
	return func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
		calls.Add(1)
		return fixtureRun(ctx, spec)
	}
}

// interrupted runs e through the store with its run function (fixtureRun
// when it has none) cancelled after n runs (one worker) and checks that the
// call reports the interruption.
func interrupted(t *testing.T, e platforms.Experiment, opts RunOptions, n int32) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	opts.Workers = 1
	run := e.Run
	if run == nil {
		run = fixtureRun
	}
	res, err := RunExperiment(ctx, withRun(e, interruptAfter(n, cancel, &calls, run)), opts)
	if !errors.Is(err, context.Canceled) || res == nil || len(res.Runs) != int(n) {
		t.Fatalf("interrupted run: %v, %+v", err, res)
	}
}

func TestResumeComputesOnlyTheMissingRuns(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	opts := RunOptions{Dir: dir, Progress: NoProgress, Log: &log}
	e := sweptFixture(t)
	whole, err := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	interrupted(t, e, opts, 12)
	path := CachePath(dir, e, Shard{})
	if _, err := os.Stat(journalPath(path)); err != nil {
		t.Fatalf("no journal after an interrupted run: %v", err)
	}
	var calls atomic.Int32
	res, err := RunExperiment(context.Background(), withRun(e, counted(&calls)), opts)
	if err != nil || res.Reused != 12 || calls.Load() != 18 || res.From != "" {
		t.Fatalf("resumed run: %v, reused %d, computed %d, want 12 and 18", err, res.Reused, calls.Load())
	}
	if !strings.Contains(log.String(), "reused 12 of 30 runs from an interrupted run") {
		t.Errorf("log does not say what was reused: %q", log.String())
	}
	if RunsDiff(res, whole) != "" {
		t.Fatal("the resumed result differs from an uninterrupted one")
	}
	saved, err := Load(path)
	if err != nil || RunsDiff(saved, whole) != "" || !saved.Complete {
		t.Fatalf("saved result: %v", err)
	}
	assertOnly(t, dir, filepath.Base(path))
	// The next call is a cache hit.
	if hit, err := RunExperiment(context.Background(), withRun(e, counted(&calls)), opts); err != nil || hit.From != path || calls.Load() != 18 {
		t.Fatalf("cache hit: %v, from %q, computed %d", err, hit.From, calls.Load())
	}
}

// assertOnly fails unless dir holds exactly the named files (no journal,
// no temporary file).
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !reflect.DeepEqual(got, names) {
		t.Fatalf("%s holds %v, want %v", dir, got, names)
	}
}

func TestJournalTornOrForeignRecords(t *testing.T) {
	e := sweptFixture(t)
	tests := []struct {
		name   string
		damage func(t *testing.T, journal string)
		reused int
	}{
		{"torn last record", func(t *testing.T, j string) { truncateBy(t, j, 5) }, 7},
		{"torn frame header", func(t *testing.T, j string) { appendBytes(t, j, []byte{9, 0, 0}) }, 8},
		{"garbage after the records", func(t *testing.T, j string) { appendBytes(t, j, bytes.Repeat([]byte{0xff}, 40)) }, 8},
		{"a flipped byte in the 4th record", func(t *testing.T, j string) { flipRecord(t, j, 3, 2) }, 3},
		// The last byte of a record is the low byte of a float: the
		// record still decodes to a well-formed run, with another
		// value, and only the CRC tells.
		{"a flipped bit in the 4th record's last byte", func(t *testing.T, j string) { flipRecord(t, j, 3, -1) }, 3},
		{"another code version", func(t *testing.T, j string) { rewriteHeader(t, j, e, "src:another") }, 0},
		{"not a journal", func(t *testing.T, j string) { writeFile(t, j, []byte("SYNCLABR")) }, 0},
	}
	whole, _ := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Progress: NoProgress})
	for _, tc := range tests {
		dir := t.TempDir()
		opts := RunOptions{Dir: dir, Progress: NoProgress, Log: &bytes.Buffer{}}
		interrupted(t, e, opts, 8)
		path := CachePath(dir, e, Shard{})
		tc.damage(t, journalPath(path))
		var calls atomic.Int32
		res, err := RunExperiment(context.Background(), withRun(e, counted(&calls)), opts)
		if err != nil || res.Reused != tc.reused || int(calls.Load()) != 30-tc.reused || RunsDiff(res, whole) != "" {
			t.Errorf("%s: %v, reused %d (want %d), computed %d", tc.name, err, res.Reused, tc.reused, calls.Load())
		}
		assertOnly(t, dir, filepath.Base(path))
	}
}

func TestJournalFreshAndLocked(t *testing.T) {
	e := sweptFixture(t)
	dir := t.TempDir()
	var log bytes.Buffer
	opts := RunOptions{Dir: dir, Progress: NoProgress, Log: &log}
	interrupted(t, e, opts, 5)
	path := CachePath(dir, e, Shard{})

	// Another holder of the journal: this call runs without it.
	f, err := os.OpenFile(journalPath(path), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockFile(f); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	if _, err := RunExperiment(context.Background(), withRun(e, counted(&calls)), RunOptions{Dir: dir, Progress: NoProgress, Log: &log, Fresh: true}); err != nil || calls.Load() != 30 {
		t.Fatalf("locked journal: %v, computed %d", err, calls.Load())
	}
	if !strings.Contains(log.String(), "another process is computing this result") {
		t.Errorf("log: %q", log.String())
	}
	f.Close()
	if _, err := os.Stat(journalPath(path)); err != nil {
		t.Fatalf("the other holder's journal was removed: %v", err)
	}
	// Fresh discards the journal's runs.
	interrupted(t, e, RunOptions{Dir: dir, Progress: NoProgress, Log: &log, Fresh: true}, 5)
	calls.Store(0)
	fresh := opts
	fresh.Fresh = true
	if res, err := RunExperiment(context.Background(), withRun(e, counted(&calls)), fresh); err != nil || res.Reused != 0 || calls.Load() != 30 {
		t.Fatalf("fresh: %v, computed %d", err, calls.Load())
	}
	assertOnly(t, dir, filepath.Base(path))
}

func TestShardResumesFromItsResultFile(t *testing.T) {
	e := sweptFixture(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "part-1.msgpack")
	opts := RunOptions{Shard: Shard{Index: 1, Count: 3}, File: file, Progress: NoProgress, Log: &bytes.Buffer{}}
	interrupted(t, e, opts, 4)
	var calls atomic.Int32
	res, err := RunExperiment(context.Background(), withRun(e, counted(&calls)), opts)
	if err != nil || res.Reused != 4 || calls.Load() != 6 || len(res.Runs) != 10 {
		t.Fatalf("shard: %v, reused %d, computed %d, runs %d", err, res.Reused, calls.Load(), len(res.Runs))
	}
	whole, _ := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Shard: opts.Shard, Progress: NoProgress})
	if saved, err := Load(file); err != nil || RunsDiff(saved, whole) != "" {
		t.Fatalf("shard file: %v", err)
	}
	assertOnly(t, dir, "part-1.msgpack")
}

func truncateBy(t *testing.T, path string, n int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()-n); err != nil {
		t.Fatal(err)
	}
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, append(old, b...))
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// flipRecord flips a bit of payload byte at (from the end when negative)
// of the journal's i-th run record.
func flipRecord(t *testing.T, path string, i, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, off := nextFrame(b, len(journalMagic)+4) // the header
	for range i {
		_, off = nextFrame(b, off)
	}
	p, _ := nextFrame(b, off)
	if at < 0 {
		at += len(p)
	}
	b[off+frameLen+at] ^= 0x40
	writeFile(t, path, b)
}

// rewriteHeader replaces the journal's header by one with code key code.
func rewriteHeader(t *testing.T, path string, e platforms.Experiment, code string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start := len(journalMagic) + 4
	_, end := nextFrame(b, start)
	head, _ := msgpack.Marshal(journalHeader{Experiment: e.Name, Hash: e.Hash(), Code: code})
	out := append(append(b[:start:start], frame(head)...), b[end:]...)
	writeFile(t, path, out)
}
