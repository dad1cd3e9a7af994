package labkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
	// A changed metric value still decodes into a consistent result: only
	// the checksum can tell.
	metric := bytes.Clone(good)
	if !flipFloat(metric, fixtureResult(t).Runs[0].Metrics) {
		t.Fatal("no metric value found in the encoded result")
	}
	tests := []struct {
		name string
		data []byte
		want error
		says string // in the message, if set
	}{
		{"truncated payload", good[:len(good)-5], ErrTruncated, ""},
		{"truncated header", good[:15], ErrTruncated, ""},
		{"truncated magic", good[:3], ErrTruncated, ""},
		{"empty", nil, ErrTruncated, ""},
		{"corrupt", flipped, ErrCorrupt, ""},
		{"changed metric value", metric, ErrCorrupt, ""},
		{"trailing garbage", append(bytes.Clone(good), 1, 2), ErrCorrupt, "2 trailing bytes"},
		{"foreign", []byte("article\texperiment\nnot a result\n"), ErrForeign, ""},
		{"version", version, ErrVersion, ""},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err %v, want %v naming %s and saying %q", tc.name, err, tc.want, path, tc.says)
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

// hugeRunsFile is a 63-byte result file with a valid checksum whose payload,
// {"runs": array32}, declares 2^32-1 runs.
func hugeRunsFile() []byte {
	return encodePayload([]byte{0x81, 0xa4, 'r', 'u', 'n', 's', 0xdd, 0xff, 0xff, 0xff, 0xff})
}

func TestDecodeRejectsDeclaredLengthsBeyondTheData(t *testing.T) {
	b := hugeRunsFile()
	if len(b) != 63 {
		t.Fatalf("crafted file has %d bytes, want 63", len(b))
	}
	if _, err := Decode(b); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "declared length exceeds") {
		t.Fatalf("Decode(63-byte file declaring 2^32-1 runs) = %v, want ErrCorrupt naming the length", err)
	}
}

// Checksum-valid files whose content does not add up are corrupt.
func TestDecodeValidatesTheResult(t *testing.T) {
	res := fixtureResult(t)
	tests := []struct {
		name   string
		change func(r *Result)
		want   string
	}{
		{"no runs", func(r *Result) { r.Runs = nil }, "0 runs, shard all of the experiment has 30"},
		{"one run missing", func(r *Result) { r.Runs = r.Runs[1:] }, "29 runs"},
		{"a run without metrics", func(r *Result) { r.Runs[3].Metrics = map[string]float64{"time_ms": 1} }, "lacks metric ops_s"},
		{"a duplicated run", func(r *Result) { r.Runs[4] = r.Runs[3] }, "repeated or out of job order"},
		{"runs out of order", func(r *Result) { r.Runs[3], r.Runs[4] = r.Runs[4], r.Runs[3] }, "repeated or out of job order"},
		{"unknown variant", func(r *Result) { r.Runs[0].Variant = "medium" }, `unknown variant "medium"`},
		{"point out of range", func(r *Result) { r.Runs[29].Point = 3 }, "sweep point 3, the experiment has 3"},
		{"repeat out of range", func(r *Result) { r.Runs[29].Repeat = -1 }, "repeat -1"},
		{"foreign seed", func(r *Result) { r.Runs[7].Seed++ }, "has seed"},
		{"shard index out of range", func(r *Result) { r.Shard = Shard{Index: 5, Count: 2} }, "shard 5/2"},
		{"negative shard count", func(r *Result) { r.Shard = Shard{Index: 0, Count: -3} }, "shard 0/-3"},
		{"hash of another definition", func(r *Result) { r.Experiment.Seed++ }, "does not match its definition"},
		{"invalid definition", func(r *Result) { r.Experiment.Repeats = 0 }, "repeats 0"},
		{"infinite parameter", func(r *Result) { r.Experiment.Params[0].Max, r.Experiment.Params[0].Value = math.Inf(1), math.Inf(1) }, "parameter work: value +Inf is not finite"},
		{"infinite sweep value", func(r *Result) {
			r.Experiment.Params[0].Max, r.Experiment.Sweep[0].Values[2] = math.Inf(1), math.Inf(1)
		}, "sweep over work: value +Inf"},
		{"too many runs", func(r *Result) { r.Experiment.Repeats = MaxRuns; r.Hash = r.Experiment.Hash() }, "more than the 1,000,000"},
		{"failed run with metrics", func(r *Result) { r.Runs[2].Err = "boom" }, "run 2 failed (boom) but has metrics"},
	}
	for _, tc := range tests {
		r := *res
		r.Experiment = res.Experiment.Clone()
		r.Runs = slices.Clone(res.Runs)
		tc.change(&r)
		b, err := Encode(&r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Decode = %v, want ErrCorrupt with %q", tc.name, err, tc.want)
		}
	}
	// A result may hold failed runs (complete or not); an incomplete one
	// (an interrupted run's) may lack runs.
	for _, n := range []int{len(res.Runs), 10} {
		r := *res
		r.Runs = slices.Clone(res.Runs[:n])
		r.Runs[2].Err, r.Runs[2].Metrics, r.Runs[2].Samples = "boom", nil, nil
		r.Complete = n == len(res.Runs)
		b, _ := Encode(&r)
		if got, err := Decode(b); err != nil || len(got.Runs) != n || len(got.Failures()) != 1 {
			t.Fatalf("result of %d runs, one failed: %v", n, err)
		}
	}
}

func TestCheckLengths(t *testing.T) {
	valid, err := msgpack.Marshal(map[string]any{"a": []any{1, "xyz", 2.5, nil, true, []byte{1, 2}}, "b": map[string]int{"c": -70000}})
	if err != nil || checkLengths(valid) != nil {
		t.Fatalf("valid msgpack rejected: %v", checkLengths(valid))
	}
	for _, bad := range [][]byte{
		nil,
		{0x92, 0x01},                               // array of 2 with 1 element
		{0xdd, 0xff, 0xff, 0xff, 0xff},             // array32 of 2^32-1, empty
		{0xdf, 0x00, 0x00, 0x00, 0x01, 0x01},       // map32 of 1 pair, one value
		{0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'},        // str32 of 2^31-1 bytes
		{0xc6, 0xff, 0xff},                         // bin32 length cut short
		{0xc9, 0x00, 0x00, 0x00, 0x02, 0x05, 0x01}, // ext32 of 2 bytes, 1 given
		{0xcb, 0x00},                               // float64 cut short
		{0xc1},                                     // reserved
		{0x01, 0x02},                               // two values
		{0xd8, 0x01, 2},                            // fixext16 cut short
	} {
		if err := checkLengths(bad); !errors.Is(err, errLength) {
			t.Errorf("checkLengths(% x) = %v, want errLength", bad, err)
		}
	}
}

func TestMergeRejectsBadShards(t *testing.T) {
	e := sweptFixture(t)
	var parts []*Result
	for i := range 2 {
		p, err := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Shard: Shard{Index: i, Count: 2}, Progress: NoProgress})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	out := *parts[1]
	out.Shard.Index = 5 // out of range: an error, not a panic
	if _, err := Merge(parts[0], &out); err == nil || !strings.Contains(err.Error(), "shard 5/2") {
		t.Fatalf("Merge with shard 5/2: %v", err)
	}
	unknown := *parts[1]
	unknown.Code.Source = ""
	if _, err := Merge(parts[0], &unknown); err == nil || !strings.Contains(err.Error(), "unknown version") {
		t.Fatalf("Merge with code of unknown version: %v", err)
	}
	if m, err := Merge(parts...); err != nil || len(m.Runs) != 30 || !m.Complete || m.check(context.Background()) != nil {
		t.Fatalf("Merge: %v", err)
	}
}

// flipFloat flips the lowest bit of the first of ms's values found in b as
// a MessagePack float64, and says whether it found one.
func flipFloat(b []byte, ms map[string]float64) bool {
	for _, v := range ms {
		enc := binary.BigEndian.AppendUint64([]byte{0xcb}, math.Float64bits(v))
		if i := bytes.Index(b, enc); i >= 0 {
			b[i+len(enc)-1] ^= 1
			return true
		}
	}
	return false
}

// The []float64 decoder registered for results (decodeFloats) keeps what
// msgpack's generic one gives: nil stays nil, empty stays empty, every bit
// of every value round-trips (NaN payloads, -0, infinities).
func TestDecodeFloatsRoundTrip(t *testing.T) {
	type samples struct{ S map[string][]float64 }
	in := samples{map[string][]float64{
		"nil": nil, "empty": {},
		"values": {0, math.Copysign(0, -1), 1.5, -3e300, math.Inf(1), math.Inf(-1), math.NaN(), math.Float64frombits(0x7ff8000000000abc), 5e-324},
	}}
	b, err := msgpack.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out samples
	if err := unmarshal(context.Background(), b, &out); err != nil {
		t.Fatal(err)
	}
	if out.S["nil"] != nil || out.S["empty"] == nil || len(out.S["empty"]) != 0 {
		t.Errorf("nil and empty: got %#v and %#v, want nil and an empty slice", out.S["nil"], out.S["empty"])
	}
	got, want := out.S["values"], in.S["values"]
	if len(got) != len(want) {
		t.Fatalf("values: %d decoded, want %d", len(got), len(want))
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Errorf("value %d: bits %#x, want %#x", i, math.Float64bits(got[i]), math.Float64bits(want[i]))
		}
	}
}

// BenchmarkLoad loads a result whose runs hold 65,536 samples each, as
// notebook 01's main run does (12 such runs, 7 MB), and as every notebook
// cell that uses a result loads it.
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	res, err := Execute(ctx, withRun(sweptFixture(b), fixtureRun), RunOptions{Progress: NoProgress})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range res.Runs {
		s := make([]float64, 1<<16)
		for j := range s {
			s[j] = rng.ExpFloat64()
		}
		res.Runs[i].Samples = map[string][]float64{"latency": s}
	}
	path := filepath.Join(b.TempDir(), "r.msgpack")
	if err := Save(path, res); err != nil {
		b.Fatal(err)
	}
	info, _ := os.Stat(path)
	b.SetBytes(info.Size())
	for b.Loop() {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}
