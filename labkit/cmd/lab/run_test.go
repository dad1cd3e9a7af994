package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"synclab/labkit"
)

// storeFiles lists the store directory's entries.
func storeFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Output paths that are not regular files are refused before anything runs,
// and left as they were.
func TestOutputsMustBeRegularFiles(t *testing.T) {
	store := t.TempDir()
	t.Setenv("SYNCLAB_RESULTS", store)
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.html")
	fifo := filepath.Join(dir, "fifo")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-o", link}, "-o: " + link + " is a symbolic link"},
		{[]string{"-o", fifo}, "is a named pipe (FIFO)"},
		{[]string{"-o", dir}, "is a directory"},
		{[]string{"-csv", link}, "-csv: " + link + " is a symbolic link"},
		{[]string{"-trace", dir}, "-trace: " + dir + " is a directory"},
		{[]string{"-result", fifo}, "-result: " + fifo + " is a named pipe"},
		{[]string{"-result", target}, "exists and is not a SyncLab result file: refusing to overwrite it"},
	}
	for _, tc := range tests {
		code, out, stderr := runCLI(t, append([]string{"run", "cli-fixture"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || out != "" {
			t.Errorf("lab run %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the target was written: %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced")
	}
	if files := storeFiles(t, store); len(files) > 0 {
		t.Fatalf("runs happened before the refusal: %v", files)
	}
	// A regular file (or none) is written in place.
	report := filepath.Join(dir, "r.html")
	for range 2 {
		if code, _, stderr := runCLI(t, "run", "cli-fixture", "-o", report); code != 0 {
			t.Fatalf("-o %s: %s", report, stderr)
		}
	}
}

// -result refuses to replace another experiment's result or another shard
// of the same run (a mistyped path would lose it), and replaces a result of
// the same experiment at other settings.
func TestResultFileKeepsOtherResults(t *testing.T) {
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	dir := t.TempDir()
	shard := filepath.Join(dir, "shard0.msgpack")
	if code, _, stderr := runCLI(t, "run", "cli-fixture", "-shard", "0/2", "-result", shard); code != 0 {
		t.Fatalf("shard 0/2: %s", stderr)
	}
	keep, _ := os.ReadFile(shard)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cli-deadlock"}, "-result: " + shard + " holds a result of cli-fixture, not cli-deadlock: refusing to overwrite it"},
		{[]string{"cli-fixture", "-shard", "1/2"}, "holds shard 0/2 of this run, not 1/2: refusing to overwrite it"},
		{[]string{"cli-fixture"}, "holds shard 0/2 of this run: refusing to overwrite it with the whole result"},
	} {
		code, _, stderr := runCLI(t, append(append([]string{"run"}, tc.args...), "-result", shard)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("lab run %v -result: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if b, _ := os.ReadFile(shard); !bytes.Equal(b, keep) {
		t.Fatal("the shard's result file was replaced")
	}
	if code, _, stderr := runCLI(t, "run", "cli-fixture", "-set", "n=20", "-result", shard); code != 0 {
		t.Fatalf("the same experiment at other settings: %s", stderr)
	} else if want := shard + " holds shard 0/2 of cli-fixture at other settings (parameter n 10 vs 20): replacing it"; !strings.Contains(stderr, want) {
		t.Errorf("replacing a result at other settings: stderr %q, want %q", stderr, want)
	}
	if r, err := labkit.Load(shard); err != nil || r.Experiment.Params.Values()["n"] != 20 {
		t.Fatalf("the result file was not replaced: %v", err)
	}
}

// crafted writes a checksum-valid result file around a msgpack payload.
func crafted(t *testing.T, path string, payload []byte) {
	t.Helper()
	b := make([]byte, 52, 52+len(payload))
	copy(b, "SYNCLABR")
	binary.LittleEndian.PutUint32(b[8:], labkit.FormatVersion)
	binary.LittleEndian.PutUint64(b[12:], uint64(len(payload)))
	sum := sha256.Sum256(payload)
	copy(b[20:], sum[:])
	if err := os.WriteFile(path, append(b, payload...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The crafted files: a 63-byte file declaring 2^32-1 runs and a
// shard whose index is out of range make lab merge exit 2 with a message,
// and a cache file of the first kind is recomputed.
func TestCraftedResultFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SYNCLAB_RESULTS", dir)
	huge := filepath.Join(dir, "huge.msgpack")
	crafted(t, huge, []byte{0x81, 0xa4, 'r', 'u', 'n', 's', 0xdd, 0xff, 0xff, 0xff, 0xff})
	if fi, _ := os.Stat(huge); fi.Size() != 63 {
		t.Fatalf("crafted file of %d bytes", fi.Size())
	}
	part := filepath.Join(dir, "part0.msgpack")
	if code, _, stderr := runCLI(t, "run", "cli-fixture", "-shard", "0/2", "-result", part); code != 0 {
		t.Fatal(stderr)
	}
	r, err := labkit.Load(part)
	if err != nil {
		t.Fatal(err)
	}
	r.Shard.Index = 7
	bad := filepath.Join(dir, "index7.msgpack")
	b, _ := labkit.Encode(r)
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{huge: "declared length exceeds the data", bad: "shard 7/2: want 0 <= index < count"} {
		code, _, stderr := runCLI(t, "merge", part, file)
		if code != 2 || !strings.Contains(stderr, want) || !strings.Contains(stderr, file) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("lab merge %s: exit %d, %q; want 2 and one line with %q", filepath.Base(file), code, stderr, want)
		}
	}
	// The same bytes as a cache entry: reported and recomputed.
	e, _ := lookup("cli-fixture")
	entry := labkit.CachePath(dir, e, labkit.Shard{})
	crafted(t, entry, []byte{0x81, 0xa4, 'r', 'u', 'n', 's', 0xdd, 0xff, 0xff, 0xff, 0xff})
	code, out, stderr := runCLI(t, "run", "cli-fixture")
	if code != 0 || !containsAll(stderr, entry, "declared length exceeds", "recomputing") || strings.Contains(out, "from the store") {
		t.Fatalf("crafted cache entry: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := labkit.Load(entry); err != nil {
		t.Fatalf("the entry was not rewritten: %v", err)
	}
	if code, out, _ := runCLI(t, "run", "cli-fixture"); code != 0 || !strings.Contains(out, "from the store: "+entry) {
		t.Fatalf("a cached run does not say so:\n%s", out)
	}
}

// Outside the repository, without $SYNCLAB_RESULTS, results go to the user's
// cache directory, or to -results.
func TestResultsGoToTheUserCacheOutsideTheRepository(t *testing.T) {
	cache := t.TempDir()
	for k, v := range map[string]string{"SYNCLAB_RESULTS": "", "SYNCLAB_ROOT": "", "GONB_DIR": "", "XDG_CACHE_HOME": cache, "HOME": cache} {
		t.Setenv(k, v)
	}
	wd := t.TempDir()
	t.Chdir(wd)
	if code, _, stderr := runCLI(t, "run", "cli-fixture"); code != 0 {
		t.Fatal(stderr)
	}
	if files := storeFiles(t, wd); len(files) > 0 {
		t.Fatalf("lab run created %v in the working directory", files)
	}
	if files := storeFiles(t, filepath.Join(cache, "synclab", "results")); len(files) != 1 || !strings.HasPrefix(files[0], "cli-fixture-") {
		t.Fatalf("user cache holds %v", files)
	}
	own := filepath.Join(t.TempDir(), "store")
	if code, _, stderr := runCLI(t, "run", "cli-fixture", "-results", own); code != 0 || len(storeFiles(t, own)) != 1 {
		t.Fatalf("-results: %s", stderr)
	}
}

func TestMergeJSON(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SYNCLAB_RESULTS", dir)
	var parts []string
	for _, s := range []string{"0/2", "1/2"} {
		p := filepath.Join(dir, "part"+s[:1]+".msgpack")
		if code, _, stderr := runCLI(t, "run", "cli-deadlock", "-variant", "a", "-shard", s, "-result", p); code != 0 {
			t.Fatalf("shard %s: %s", s, stderr)
		}
		parts = append(parts, p)
	}
	code, out, stderr := runCLI(t, "merge", parts[0], parts[1], "-json", "-runs")
	var doc labkit.RunDoc
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil {
		t.Fatalf("merge -json: exit %d, %v\n%s", code, err, stderr)
	}
	if doc.Schema != labkit.RunSchema || doc.Shard != "all" || len(doc.Cells) != 2 || len(doc.Runs) != 4 || !strings.Contains(stderr, "merged 2 shards (4 runs)") {
		t.Fatalf("merge -json: %+v", doc)
	}
	if _, err := os.Stat(filepath.Join(dir, "part0.msgpack.journal")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a finished shard left its journal: %v", err)
	}
	validate(t, "merge", []byte(out))
}

// TestRunTrace: lab run -trace writes the timelines of repeat 0 of each
// variant as a Trace Event Format file, computes the runs afresh and stores
// nothing (a result in the store has no trace); an experiment that draws no
// timeline is refused before any run, with the ones that do.
func TestRunTrace(t *testing.T) {
	store := t.TempDir()
	t.Setenv("SYNCLAB_RESULTS", store)
	path := filepath.Join(t.TempDir(), "wait.json")
	code, out, stderr := runCLI(t, "run", "rk3399-spinlock-wait", "-variant", "wfe", "-variant", "wfi", "-repeats", "2", "-trace", path)
	if code != 0 || !strings.Contains(stderr, "trace written to "+path) || !strings.Contains(out, "avg_lock_wait_ms") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OtherData   map[string]any `json:"otherData"`
		TraceEvents []struct {
			Name, Ph string
			Pid      int
			Args     map[string]any
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the trace is not JSON: %v", err)
	}
	spans := map[int]int{}
	var procs []string
	for _, ev := range doc.TraceEvents {
		switch {
		case ev.Ph == "X":
			spans[ev.Pid]++
		case ev.Name == "process_name":
			procs = append(procs, ev.Args["name"].(string))
		}
	}
	if doc.OtherData["experiment"] != "rk3399-spinlock-wait" || len(procs) != 2 ||
		!strings.HasPrefix(procs[0], "wfe, seed ") || !strings.HasPrefix(procs[1], "wfi, seed ") || spans[1] == 0 || spans[2] == 0 {
		t.Errorf("experiment %v, processes %q (want repeat 0 of wfe and of wfi), spans per process %v", doc.OtherData["experiment"], procs, spans)
	}
	if files := storeFiles(t, store); len(files) != 0 {
		t.Errorf("a traced run wrote the store: %v", files)
	}

	gz := filepath.Join(t.TempDir(), "wait.json.gz")
	if code, _, stderr := runCLI(t, "run", "rk3399-spinlock-wait", "-variant", "wfe", "-variant", "wfi", "-repeats", "2", "-trace", gz); code != 0 {
		t.Fatalf("-trace %s: exit %d: %s", gz, code, stderr)
	}
	zf, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	defer zf.Close()
	zr, err := gzip.NewReader(zf)
	if err != nil {
		t.Fatalf("%s is not gzipped: %v", gz, err)
	}
	if unzipped, err := io.ReadAll(zr); err != nil || !bytes.Equal(unzipped, b) {
		t.Errorf("%s: gunzipped (error %v) differs from the plain trace of the same runs", gz, err)
	}

	code, out, stderr = runCLI(t, "run", "rk3399-spinlock-wait", "-variant", "wfe", "-variant", "wfi", "-repeats", "2", "-trace", "-")
	if code != 0 || out != string(b) {
		t.Errorf("-trace -: exit %d, stdout %d bytes, want the %d of the file alone\nstderr: %s", code, len(out), len(b), stderr)
	}
	for _, other := range [][]string{{"-json"}, {"-csv", "-"}} {
		code, out, stderr = runCLI(t, append([]string{"run", "rk3399-spinlock-wait", "-trace", "-"}, other...)...)
		if code != 2 || out != "" || !strings.Contains(stderr, "-trace - writes the trace to stdout") {
			t.Errorf("-trace - %v: exit %d, stdout %q, stderr %s; want it refused", other, code, out, stderr)
		}
	}

	none := filepath.Join(t.TempDir(), "none.json")
	code, out, stderr = runCLI(t, "run", "rk3399-pingpong", "-trace", none)
	if code != 2 || out != "" || !strings.Contains(stderr, "rk3399-pingpong records no trace") || !strings.Contains(stderr, "rk3399-spinlock-wait") {
		t.Errorf("untraceable experiment: exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	if _, err := os.Stat(none); err == nil {
		t.Error("a refused -trace wrote its file")
	}
}

// A result store that is a file is refused before any work, whether
// -results or SYNCLAB_RESULTS names it (the variable used to be only
// warned about, run after run, and nothing was kept).
func TestResultStoreNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "store")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SYNCLAB_RESULTS", file)
	code, _, stderr := runCLI(t, "run", "cli-fixture")
	if want := "SYNCLAB_RESULTS=" + file + ": not a directory"; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("SYNCLAB_RESULTS naming a file: exit %d, %q; want 2 and %q", code, stderr, want)
	}
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	code, _, stderr = runCLI(t, "run", "cli-fixture", "-results", file)
	if want := "-results " + file + ": not a directory"; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("-results naming a file: exit %d, %q; want 2 and %q", code, stderr, want)
	}
}
