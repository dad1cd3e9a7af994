package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"synclab/labkit"
	"synclab/platforms"
)

// A CLI fixture: one parameter, two variants, a deterministic metric.
func init() {
	labkit.Register(labkit.Experiment{
		Name: "cli-fixture", Description: "CLI test fixture", Platform: "cli-bench", Repeats: 3, Seed: 7,
		Params:    platforms.Params{{Key: "n", Value: 10, Unit: "ops", Prov: platforms.MEAS, Source: "test", Min: 1, Max: 100}},
		Variants:  []labkit.Variant{{Name: "a"}, {Name: "b"}},
		Metrics:   []labkit.Metric{{Name: "cost", Unit: "ns", Better: labkit.Lower}},
		Reference: []labkit.Reference{{Article: "cli-article", Variant: "a", Metric: "cost", Value: 10, Unit: "ns", Quote: "a costs 10"}},
	}, func(ctx context.Context, spec labkit.RunSpec) (labkit.RunResult, error) {
		c := spec.Params["n"]
		if spec.Variant == "b" {
			c *= 2
		}
		c += float64(spec.Repeat)
		return labkit.RunResult{Metrics: map[string]float64{"cost": c}}, nil
	})
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunJSON(t *testing.T) {
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	code, out, stderr := runCLI(t, "run", "cli-fixture", "-json", "-set", "n=20", "-repeats", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Experiment string             `json:"experiment"`
		Seed       uint64             `json:"seed"`
		Params     map[string]float64 `json:"params"`
		Variants   []struct {
			Name    string              `json:"name"`
			Metrics map[string]float64  `json:"metrics"`
			CI95    map[string]*float64 `json:"ci95"`
		} `json:"variants"`
		Reference []map[string]any `json:"reference"`
		WallS     *float64         `json:"wall_s"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if dec.More() {
		t.Fatal("more than one JSON value on stdout")
	}
	if got.Experiment != "cli-fixture" || got.Seed != 7 || got.Params["n"] != 20 || len(got.Variants) != 2 || got.WallS == nil {
		t.Fatalf("unexpected output: %+v", got)
	}
	a, b := got.Variants[0], got.Variants[1]
	if a.Name != "a" || b.Name != "b" || a.Metrics["cost"] != 21.5 || b.Metrics["cost"] != 41.5 || a.CI95["cost"] == nil {
		t.Fatalf("variants: %+v", got.Variants)
	}
	if len(got.Reference) != 1 || got.Reference[0]["source"] != "cli-article" || got.Reference[0]["value"] != 10.0 {
		t.Fatalf("reference: %+v", got.Reference)
	}
}

func TestBadInputExitStatus2(t *testing.T) {
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	tests := []struct {
		args []string
		want string
	}{
		{nil, "usage"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run"}, "usage: lab run NAME"},
		{[]string{"run", "nope"}, "known: cli-fixture"},
		{[]string{"run", "cli-fixture", "-set", "n=1000"}, "parameter n: value 1000 out of range [1, 100]"},
		{[]string{"run", "cli-fixture", "-set", "zz=1"}, `unknown parameter "zz"; known: n`},
		{[]string{"run", "cli-fixture", "-set", "n=many"}, "not a number"},
		{[]string{"run", "cli-fixture", "-variant", "c"}, `unknown variant "c"; known: a, b`},
		{[]string{"run", "cli-fixture", "-shard", "4/2"}, "want i/n"},
		{[]string{"run", "cli-fixture", "-bogus"}, "flag provided but not defined"},
		{[]string{"platforms", "nowhere"}, "platforms: cli-bench"},
		{[]string{"merge", filepath.Join(t.TempDir(), "missing.msgpack")}, "missing.msgpack"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("lab %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestShardMergeAndReport(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SYNCLAB_RESULTS", dir)
	var parts []string
	for _, s := range []string{"0/2", "1/2"} {
		p := filepath.Join(dir, "part"+s[:1]+".msgpack")
		if code, _, stderr := runCLI(t, "run", "cli-fixture", "-shard", s, "-result", p); code != 0 {
			t.Fatalf("shard %s: %s", s, stderr)
		}
		parts = append(parts, p)
	}
	if code, _, stderr := runCLI(t, "merge", parts[0]); code != 2 || !strings.Contains(stderr, "shard 1/2 missing") {
		t.Fatalf("merge of one shard: %d %s", code, stderr)
	}
	merged := filepath.Join(dir, "merged.msgpack")
	code, out, stderr := runCLI(t, "merge", parts[0], parts[1], "-o", merged)
	if code != 0 || !strings.Contains(out, "merged 2 shards (6 runs)") || !strings.Contains(out, "Claims") {
		t.Fatalf("merge: %d %s %s", code, out, stderr)
	}
	report := filepath.Join(dir, "r.html")
	if code, out, stderr := runCLI(t, "run", "cli-fixture", "-o", report); code != 0 || !strings.Contains(out, "cost (ns)") {
		t.Fatalf("run -o: %d %s %s", code, out, stderr)
	}
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), "cli-fixture") {
		t.Fatalf("report: %v", err)
	}
	if code, out, _ := runCLI(t, "platforms", "cli-fixture"); code != 0 || !strings.Contains(out, "MEAS") {
		t.Fatalf("platforms: %s", out)
	}
	if code, out, _ := runCLI(t, "list"); code != 0 || !strings.Contains(out, "CLI test fixture") {
		t.Fatalf("list: %s", out)
	}
}
