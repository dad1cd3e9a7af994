package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"synclab/labkit"
)

func TestValidateJSON(t *testing.T) {
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	code, out, stderr := runCLI(t, "validate", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Checks []struct {
			ID        string  `json:"id"`
			Published float64 `json:"published"`
			Model     float64 `json:"model"`
			Source    struct{ Title, Where, Date string }
			Tolerance struct{ Reason string }
			Verdict   string `json:"verdict"`
			Pass      bool   `json:"pass"`
		} `json:"checks"`
		Passed, Failed int
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Checks) != len(labkit.Checks()) || got.Passed+got.Failed != len(got.Checks) {
		t.Fatalf("%d checks (%d passed, %d failed), want %d", len(got.Checks), got.Passed, got.Failed, len(labkit.Checks()))
	}
	for _, c := range got.Checks {
		if c.Source.Title == "" || c.Source.Where == "" || c.Tolerance.Reason == "" || c.Published == 0 || c.Model == 0 ||
			c.Verdict != map[bool]string{true: "pass", false: "FAIL"}[c.Pass] {
			t.Errorf("check %s is incomplete: %+v", c.ID, c)
		}
	}
	code, _, stderr = runCLI(t, "validate", "-strict")
	if want := map[bool]int{true: 0, false: 1}[got.Failed == 0]; code != want {
		t.Errorf("-strict with %d failing checks: exit %d, want %d (%s)", got.Failed, code, want, stderr)
	}
	if code, _, _ := runCLI(t, "validate", "extra"); code != exitUsage {
		t.Errorf("validate extra: exit %d, want %d", code, exitUsage)
	}
}

func TestCalibrateRoundTrip(t *testing.T) {
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	dir := t.TempDir()
	// Measurements simulated at same_cluster_ns = 80, cross_cluster_ns =
	// 240 (the LSE CAS hop is one transfer plus a few ns) with ±1% noise.
	csv := "experiment,variant,settings,metric,value\n" +
		"rk3399-pingpong,cas,cpu_a=4;cpu_b=5,one_way_ns,81.9\n" +
		"rk3399-pingpong,cas,cpu_a=0;cpu_b=1,one_way_ns,80.3\n" +
		"rk3399-pingpong,cas,cpu_a=2;cpu_b=3,one_way_ns,81.5\n" +
		"rk3399-pingpong,cas,cpu_a=0;cpu_b=4,one_way_ns,243.5\n" +
		"rk3399-pingpong,cas,cpu_a=1;cpu_b=5,one_way_ns,239.2\n"
	in := filepath.Join(dir, "board.csv")
	if err := os.WriteFile(in, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(dir, "board.json")
	code, out, stderr := runCLI(t, "calibrate", in, "-fit", "same_cluster_ns,cross_cluster_ns", "-json", "-o", prof, "-set", "rounds=200")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var f struct {
		Params map[string]struct {
			Value, Low, High float64
		} `json:"params"`
		Residuals []json.RawMessage `json:"residuals"`
	}
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for key, truth := range map[string]float64{"same_cluster_ns": 80, "cross_cluster_ns": 240} {
		p := f.Params[key]
		if truth < p.Low || truth > p.High || p.High-p.Low > 20 {
			t.Errorf("%s = %g [%g, %g]: want an interval under 20 ns around %g", key, p.Value, p.Low, p.High, truth)
		}
	}
	if len(f.Residuals) != 5 {
		t.Errorf("%d residuals, want 5", len(f.Residuals))
	}
	p, err := labkit.LoadProfile(prof)
	if err != nil {
		t.Fatal(err)
	}
	e, err := lookup("rk3399-spinlock-wait")
	if err != nil {
		t.Fatal(err)
	}
	if e, err = p.Apply(e); err != nil || e.Params.Get("same_cluster_ns") != f.Params["same_cluster_ns"].Value {
		t.Errorf("the profile applies to the platform's other experiments: %v, %g", err, e.Params.Get("same_cluster_ns"))
	}
	// lab run -profile runs with the fitted values; -set still wins.
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	var doc struct {
		Params map[string]float64 `json:"params"`
	}
	if code, out, stderr := runCLI(t, "run", "rk3399-pingpong", "-profile", prof, "-set", "cross_cluster_ns=300", "-set", "rounds=50", "-repeats", "1", "-json"); code != 0 {
		t.Fatalf("lab run -profile: exit %d: %s", code, stderr)
	} else if err := json.Unmarshal([]byte(out), &doc); err != nil ||
		doc.Params["same_cluster_ns"] != f.Params["same_cluster_ns"].Value || doc.Params["cross_cluster_ns"] != 300 {
		t.Errorf("lab run -profile: params %v (%v), want same_cluster_ns %g from the profile and cross_cluster_ns 300 from -set",
			doc.Params, err, f.Params["same_cluster_ns"].Value)
	}
	// A parameter the measurements do not pin keeps its cited value, and
	// lab run says so rather than reproduce the fit only in part, silently.
	fp := p.Fit.Params["cross_cluster_ns"]
	fp.Identifiable = false
	p.Fit.Params["cross_cluster_ns"] = fp
	cited, err := lookup("rk3399-pingpong")
	if err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(dir, "partial.json")
	if err := p.Save(partial); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runCLI(t, "run", "rk3399-pingpong", "-profile", partial, "-set", "rounds=50", "-repeats", "1", "-json"); code != 0 {
		t.Fatalf("lab run -profile partial.json: exit %d: %s", code, stderr)
	} else if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Params["cross_cluster_ns"] != cited.Params.Get("cross_cluster_ns") ||
		!strings.Contains(stderr, "cited value kept for cross_cluster_ns") || strings.Contains(stderr, "same_cluster_ns") {
		t.Errorf("lab run -profile with cross_cluster_ns unpinned: params %v (%v), stderr %q: want its cited value, said once", doc.Params, err, stderr)
	}
	if code, _, stderr := runCLI(t, "run", "rk3399-pingpong", "-profile", filepath.Join(dir, "missing.json")); code != 2 {
		t.Errorf("lab run -profile missing.json: exit %d (%s), want 2", code, stderr)
	}
	for _, args := range [][]string{
		{"calibrate", in},
		{"calibrate", in, "-fit", "hz"},
		{"calibrate", in, "-fit", "same_cluster_ns", "-max-evals", "0"},
		{"calibrate", in, "-fit", "same_cluster_ns", "-metrics", "one_way_ns,one_way_sn"}, // a typo is not silently no row
		{"calibrate", filepath.Join(dir, "missing.csv"), "-fit", "same_cluster_ns"},
	} {
		if code, _, stderr := runCLI(t, args...); code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d (%s), want %d with a message", args, code, stderr, exitUsage)
		}
	}
}

// TestCalibrateArticleTable reads an article's reference table as
// measurements and says which parameters would have to leave their ranges.
func TestCalibrateArticleTable(t *testing.T) {
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	dir := t.TempDir()
	tsv := "article\texperiment\tvariant\tmetric\tvalue\tunit\tquote\n" +
		"a\trk3399-pingpong\tcas\tone_way_ns\t20\tns\tq\n"
	in := filepath.Join(dir, "article.tsv")
	if err := os.WriteFile(in, []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "calibrate", in, "-fit", "same_cluster_ns", "-set", "rounds=100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "same_cluster_ns = ") || !strings.Contains(out, "leaves its plausible range 60 – 120") {
		t.Errorf("a 20 ns hop needs same_cluster_ns below its plausible 60-120; output:\n%s", out)
	}
}
