package labkit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A cached result stands for a run only when the code that computed it is
// the code running now, and it covers the same shard: a result of other
// code, of unknown code or of one shard is recomputed, and the store then
// holds the new result. Kills matches ignoring the code version or the
// shard.
func TestCacheKeysOnCodeAndShard(t *testing.T) {
	e := sweptFixture(t)
	whole, err := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		stale func(r *Result) // edits the stored result
	}{
		{"other code", func(r *Result) { r.Code.Source = "0000000000000000" }},
		{"unknown code", func(r *Result) { r.Code.Source = "" }},
		{"one shard", func(r *Result) {
			part, err := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Shard: Shard{Index: 0, Count: 2}, Progress: NoProgress})
			if err != nil {
				t.Fatal(err)
			}
			*r = *part
		}},
	} {
		path := filepath.Join(t.TempDir(), "r.msgpack")
		opts := RunOptions{File: path, Progress: NoProgress, Log: &bytes.Buffer{}}
		var calls atomic.Int32
		if _, err := RunExperiment(context.Background(), withRun(e, counted(&calls)), opts); err != nil {
			t.Fatal(err)
		}
		stored, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		tc.stale(stored)
		if err := Save(path, stored); err != nil {
			t.Fatal(err)
		}
		res, err := RunExperiment(context.Background(), withRun(e, counted(&calls)), opts)
		if err != nil || res.From != "" || calls.Load() != 60 || RunsDiff(res, whole) != "" || res.Code != CurrentCode() {
			t.Fatalf("%s: %v, from %q, computed %d runs in all (want 30 twice), code %s", tc.name, err, res.From, calls.Load(), res.Code)
		}
		if again, err := Load(path); err != nil || again.Code != CurrentCode() || again.Shard != (Shard{}) || RunsDiff(again, whole) != "" {
			t.Fatalf("%s: the store holds %v (%v), want the new result", tc.name, again, err)
		}
	}
}

// A process killed between saving a complete result and removing its
// journal leaves the journal behind; the next call, a cache hit, removes
// it, unless another process holds it (found by TestChaos in
// labkit/cmd/lab, which failed now and then with the journal left).
func TestCacheHitRemovesAStaleJournal(t *testing.T) {
	e := sweptFixture(t)
	dir := t.TempDir()
	opts := RunOptions{Dir: dir, Progress: NoProgress, Log: &bytes.Buffer{}}
	interrupted(t, e, opts, 8)
	path := CachePath(dir, e, Shard{})
	stale, err := os.ReadFile(journalPath(path))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	if _, err := RunExperiment(context.Background(), withRun(e, counted(&calls)), opts); err != nil {
		t.Fatal(err)
	}
	assertOnly(t, dir, filepath.Base(path))
	writeFile(t, journalPath(path), stale) // killed before the journal went

	// Held by another process: left alone.
	f, err := os.OpenFile(journalPath(path), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockFile(f); err != nil {
		t.Fatal(err)
	}
	if hit, err := RunExperiment(context.Background(), withRun(e, counted(&calls)), opts); err != nil || hit.From != path {
		t.Fatalf("cache hit: %v, from %q", err, hit.From)
	}
	f.Close()
	assertOnly(t, dir, filepath.Base(path), filepath.Base(journalPath(path)))

	// Left by a dead process: removed.
	if hit, err := RunExperiment(context.Background(), withRun(e, counted(&calls)), opts); err != nil || hit.From != path || calls.Load() != 22 {
		t.Fatalf("cache hit: %v, from %q, computed %d runs in all (want 22)", err, hit.From, calls.Load())
	}
	assertOnly(t, dir, filepath.Base(path))
}

// A store it cannot write in still gives the result, and says that nothing
// is kept: no journal could be opened, so none keeps the runs.
func TestUnwritableStoreSaysNothingIsKept(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	writeFile(t, file, []byte("x"))
	var log bytes.Buffer
	res, err := RunExperiment(context.Background(), sweptFixture(t), RunOptions{Dir: filepath.Join(file, "store"), Progress: NoProgress, Log: &log})
	if err != nil || !res.Complete {
		t.Fatalf("RunExperiment: %v", err)
	}
	if got := log.String(); !strings.Contains(got, "cannot keep a journal") || !strings.Contains(got, "cannot write the result to the store: ") || strings.Contains(got, "stay in the journal") {
		t.Errorf("log %q: want both failures said, and no journal claimed", got)
	}
}
