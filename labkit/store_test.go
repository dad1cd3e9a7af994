package labkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func fixtureResult(t *testing.T) *Result {
	t.Helper()
	res, err := Execute(context.Background(), withRun(sweptFixture(t), fixtureRun), RunOptions{Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestStoreRoundTrip(t *testing.T) {
	res := fixtureResult(t)
	path := filepath.Join(t.TempDir(), "r.msgpack")
	if err := Save(path, res); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tidy(got), tidy(res)) || got.Hash != res.Hash || got.Code != res.Code || !got.Created.Equal(res.Created) ||
		!reflect.DeepEqual(got.Experiment, res.Experiment) || !reflect.DeepEqual(got.Runs[0].Samples, res.Runs[0].Samples) {
		t.Fatal("round trip changed the result")
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp"))
	if len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o644 {
		t.Fatalf("result file mode %v (%v), want -rw-r--r--", info.Mode(), err)
	}
}

func TestWriteFileAtomicMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "f.txt")
	for _, perm := range []os.FileMode{0o644, 0o600, 0o664} { // each rewrite sets the mode asked for
		if err := WriteFileAtomic(path, []byte(perm.String()), perm); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil || info.Mode().Perm() != perm {
			t.Fatalf("mode %v (%v), want %v", info.Mode(), err, perm)
		}
		if b, _ := os.ReadFile(path); string(b) != perm.String() {
			t.Fatalf("content %q, want %q", b, perm.String())
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

func TestStoreRejectsBadFiles(t *testing.T) {
	good, err := Encode(fixtureResult(t))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)-10] ^= 0xff
	version := bytes.Clone(good)
	version[8] = 99
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"truncated payload", good[:len(good)-5], ErrTruncated},
		{"truncated header", good[:15], ErrTruncated},
		{"truncated magic", good[:3], ErrTruncated},
		{"empty", nil, ErrTruncated},
		{"corrupt", flipped, ErrCorrupt},
		{"trailing garbage", append(bytes.Clone(good), 1, 2), ErrCorrupt},
		{"foreign", []byte("article\texperiment\nnot a result\n"), ErrForeign},
		{"version", version, ErrVersion},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err %v, want %v naming %s", tc.name, err, tc.want, path)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestCacheHitMissAndCorruptRecompute(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	opts := RunOptions{Dir: dir, Progress: NoProgress, Log: &log}
	e := fixture()
	first, err := RunExperiment(context.Background(), e, opts)
	if err != nil {
		t.Fatal(err)
	}
	hit, err := RunExperiment(context.Background(), e, opts)
	if err != nil || !hit.Created.Equal(first.Created) {
		t.Fatalf("expected a cache hit: %v %v %v", err, hit.Created, first.Created)
	}
	e2, _ := e.With("work", 120)
	miss, _ := RunExperiment(context.Background(), e2, opts)
	if miss.Created.Equal(first.Created) || miss.Hash == first.Hash {
		t.Fatal("changed parameter must miss the cache")
	}
	fresh := opts
	fresh.Fresh = true
	if again, _ := RunExperiment(context.Background(), e, fresh); again.Created.Equal(first.Created) {
		t.Fatal("Fresh must recompute")
	}
	path := CachePath(dir, e, Shard{})
	if err := os.WriteFile(path, []byte("SYNCLABR garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	re, err := RunExperiment(context.Background(), e, opts)
	if err != nil || !reflect.DeepEqual(tidy(re), tidy(first)) {
		t.Fatalf("recompute after corruption: %v", err)
	}
	if !strings.Contains(log.String(), path) || !strings.Contains(log.String(), "recomputing") {
		t.Fatalf("log should name the corrupt file: %q", log.String())
	}
	if _, err := Load(path); err != nil {
		t.Fatalf("cache file not rewritten: %v", err)
	}
}

// Files written before Result lost its Format field (the header carries the
// version) still load.
func TestStoreReadsFilesWithFormatField(t *testing.T) {
	res := fixtureResult(t)
	b, err := Encode(res)
	if err != nil {
		t.Fatal(err)
	}
	type oldResult struct {
		Format int `msgpack:"format"`
		*Result
	}
	payload, err := msgpack.Marshal(oldResult{Format: FormatVersion, Result: res})
	if err != nil || !bytes.Contains(payload, []byte("format")) || !bytes.Contains(payload, []byte("runs")) {
		t.Fatalf("old-style payload: %v", err)
	}
	sum := sha256.Sum256(payload)
	old := append(bytes.Clone(b[:12]), binary.LittleEndian.AppendUint64(nil, uint64(len(payload)))...)
	old = append(append(old, sum[:]...), payload...)
	got, err := Decode(old)
	if err != nil || !reflect.DeepEqual(got.Runs, res.Runs) || got.Hash != res.Hash || !reflect.DeepEqual(got.Experiment, res.Experiment) {
		t.Fatalf("old file: %v", err)
	}
}
