package labkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"synclab/platforms"
	"synclab/sim"
)

// fakeECharts makes a file with the given text the local ECharts copy for
// the test.
func fakeECharts(t *testing.T, text string) {
	t.Helper()
	lib := filepath.Join(t.TempDir(), "echarts.min.js")
	if err := os.WriteFile(lib, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SYNCLAB_ECHARTS", lib)
}

func TestReportSelfContained(t *testing.T) {
	fakeECharts(t, `/*FAKE-ECHARTS*/window.echarts={init:function(){return {setOption:function(){}}}};var s="</script>";`)
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	res, err := Execute(context.Background(), withRun(sweptFixture(t), fixtureRun), RunOptions{Trace: true, Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	sweep, err := SweepLines(res, "time_ms", "work")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SweepLines(res, "time_ms", "noise"); err == nil {
		t.Error("SweepLines over an unswept parameter should fail")
	}
	hist, cdf := SampleCharts(res, "latency_us", "us")
	sens, err := RunSensitivity(context.Background(), fixture(), nil, RunOptions{NoCache: true, Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	chartsIn := []*Chart{sweep, hist, cdf, Timeline("trace", res.Runs[0].Trace), MetricStack(res, "stack", "ms", "time_ms"), sens.Tornado("slow", "time_ms")}
	rep := ResultReport(res).Markdown("Some *notes* with `code`.").Chart(chartsIn...).Table(sens.Table())
	path := filepath.Join(t.TempDir(), "report.html")
	if err := rep.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("report mode %v (%v), want -rw-r--r--", info.Mode(), err)
	}
	b, _ := os.ReadFile(path)
	page := string(b)
	if !strings.Contains(page, "FAKE-ECHARTS") || strings.Count(page, "FAKE-ECHARTS") != 1 {
		t.Error("the ECharts library must be inlined exactly once")
	}
	if strings.Contains(page, `var s="</script>"`) {
		t.Error("</script inside the library must be escaped")
	}
	if m := regexp.MustCompile(`(?i)<script[^>]*\ssrc=`).FindString(page); m != "" {
		t.Errorf("external script: %s", m)
	}
	for _, c := range append(rep.charts, chartsIn...) {
		if !strings.Contains(page, c.Option) || !strings.Contains(page, `id="`+c.ID+`"`) {
			t.Errorf("chart %q missing from the page", c.Title)
		}
	}
	// The data itself: a mean of the summary and the trace's spans.
	s := res.Summary("slow", 0, "time_ms")
	for _, want := range []string{fmt.Sprint(s.Mean), `"name":"core 1 lock"`, "renderItem", "Claims: article vs simulated", "definition hash", res.Hash, "<em>notes</em>", "FAILS"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	t.Setenv("SYNCLAB_ECHARTS", filepath.Join(t.TempDir(), "none.js"))
	if _, err := ChartLibrary(); err == nil || !strings.Contains(err.Error(), "SYNCLAB_ECHARTS="+os.Getenv("SYNCLAB_ECHARTS")) {
		t.Errorf("ChartLibrary with SYNCLAB_ECHARTS naming no file: %v, want an error naming it", err)
	}
	if h := NewReport("x").Chart(hist).HTML(); !strings.Contains(h, "charts cannot be drawn") || strings.Contains(h, "fetch(") || strings.Contains(h, "https:") {
		t.Error("missing local copy must show a visible error and load no script")
	}
	// WriteFile writes such a page and tells its caller; a page without
	// charts needs no library.
	out := filepath.Join(t.TempDir(), "r.html")
	if err := NewReport("x").Chart(hist).WriteFile(out); !errors.Is(err, ErrNoCharts) || !strings.Contains(err.Error(), "SYNCLAB_ECHARTS=") {
		t.Errorf("WriteFile without the library: %v, want ErrNoCharts saying why", err)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "charts cannot be drawn") {
		t.Errorf("the page without its library was not written (%v)", err)
	}
	if err := NewReport("x").Markdown("text").WriteFile(out); err != nil {
		t.Errorf("WriteFile of a page without charts: %v", err)
	}
}

func TestClaims(t *testing.T) {
	res := fixtureResult(t)
	claims := res.Claims()
	if len(claims) != 2 {
		t.Fatalf("claims = %d, want 2", len(claims))
	}
	// time_ms: article fast 0.02 < slow 0.03; the model (slowdown 1.5) agrees within noise 10%.
	if c := claims[0]; c.Metric != "time_ms" || c.Direction != "agrees" || !strings.HasPrefix(c.Verdict, "reproduced") {
		t.Errorf("time_ms claim: %+v", c)
	}
	// ops_s: the article claims fast 5000 < slow 9000, the model the opposite.
	if c := claims[1]; c.Metric != "ops_s" || c.Direction != "disagrees" || !strings.Contains(c.Verdict, "contradicted") {
		t.Errorf("ops_s claim: %+v", c)
	}
	if d := claims[0].Sides[1].DeviationPct; !near(d, 100*(claims[0].Sides[1].Sim.Mean-0.03)/0.03, 1e-9) {
		t.Errorf("deviation %g", d)
	}
	// An article gap of 1.05x in the model's direction, far from its size:
	// the verdict gives both gaps, not agreement alone.
	res.Experiment = res.Experiment.Clone()
	res.Experiment.Reference[1].Value = 0.021
	c := res.Claims()[0]
	want := fmt.Sprintf("the model's gap is %sx, the article's 1.05x", sigDigits(c.Sides[1].Sim.Mean/c.Sides[0].Sim.Mean, 3))
	if c.Direction != "agrees" || !strings.HasPrefix(c.Verdict, "same direction (fast < slow)") || !strings.Contains(c.Verdict, want) {
		t.Errorf("a gap of another size: %s: %s, want %q", c.Direction, c.Verdict, want)
	}
	// A reference that measures something else (its scope): the direction
	// is judged, the sizes are not, and the table says so.
	for i := range res.Experiment.Reference {
		res.Experiment.Reference[i].Scope = "the article's board, the model's cores"
	}
	cs := res.Claims()
	if c := cs[0]; c.Direction != "agrees" || c.Verdict != "same direction (fast < slow); sizes not comparable: the article's board, the model's cores" {
		t.Errorf("a claim with a scope: %s: %s", c.Direction, c.Verdict)
	}
	if c := cs[1]; c.Direction != "disagrees" || !strings.HasSuffix(c.Verdict, "; sizes not comparable: the article's board, the model's cores") {
		t.Errorf("a contradicted claim with a scope: %s: %s", c.Direction, c.Verdict)
	}
	if row := ClaimsTable(cs).Rows[0]; row[4] != "not comparable (verdict)" {
		t.Errorf("model vs article for a claim with a scope: %q", row[4])
	}
}

// TestClaimsFromOneSeed: one run per variant has no spread to test a
// difference against, so no direction is called, however far apart the
// two values are.
func TestClaimsFromOneSeed(t *testing.T) {
	e := fixture()
	e.Repeats = 1
	res, err := Execute(context.Background(), e, RunOptions{Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Claims() {
		if c.Direction != "unresolved" || !strings.Contains(c.Verdict, "in one seed, which cannot tell a difference from noise") {
			t.Errorf("%s from one seed: %s: %s", c.Metric, c.Direction, c.Verdict)
		}
	}
}

// The claims say where the simulated side comes from: the run's
// parameters, at its sweep point when it has one, or at the sweep's first
// point when the sweep leaves the parameters' own values out.
func TestClaimsSayWhere(t *testing.T) {
	at := func(e platforms.Experiment) string {
		res, err := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Progress: NoProgress})
		if err != nil {
			t.Fatal(err)
		}
		return ClaimsTable(res.Claims()).Title
	}
	other, err := fixture().WithSweep("work", 50, 200)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		e    platforms.Experiment
		want string
	}{
		{fixture(), "Claims: article vs simulated, at this run's parameters"},
		{sweptFixture(t), "Claims: article vs simulated, at work=100 (this run's parameters)"},
		{other, "Claims: article vs simulated, at work=50: the sweep's first point, since it leaves out the parameters' own values"},
	} {
		if got := at(tc.e); got != tc.want {
			t.Errorf("title %q, want %q", got, tc.want)
		}
	}
}

func TestEmbeddedReferences(t *testing.T) {
	all, err := AllReferences()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"esp32-critical-section": {"total_ms", "ns_per_op", "cpu_core0_pct", "cpu_core1_pct", "max_irq_latency_us"},
		"rk3399-spinlock-wait":   {"avg_lock_wait_ms", "throughput_ops_s", "power_mw"},
	}
	count := map[string]int{}
	scope := map[string]string{} // one per claim: its rows measure the same thing
	for _, r := range all {
		k := r.Experiment + "/" + r.Metric
		if s, ok := scope[k]; ok && s != r.Scope {
			t.Errorf("%s: rows of one claim with different scopes, %q and %q", k, s, r.Scope)
		}
		scope[k] = r.Scope
		count[r.Experiment+"/"+r.Metric]++
	}
	for exp, metrics := range want {
		for _, m := range metrics {
			if count[exp+"/"+m] != 2 {
				t.Errorf("%s %s: %d rows, want one per variant", exp, m, count[exp+"/"+m])
			}
		}
	}
	if refs := ReferencesFor("rk3399-spinlock-wait"); len(refs) != 6 || refs[0].Variant != "wfe" || refs[0].Value != 0.12 {
		t.Errorf("ReferencesFor rk3399: %+v", refs)
	}
	for _, bad := range []struct{ text, want string }{
		{"a\tb\tc\n", "x.tsv:1: 3 columns, want 7 or 8"},
		{"a\te\tv\tm\t5\tms\tq\ts\textra\n", "x.tsv:1: 9 columns, want 7 or 8"},
		{"# c\na\te\tv\tm\tnope\tms\tq\n", `x.tsv:2: value "nope" is not a number`},
		// A stray carriage return (the scanner drops one before the newline) is corruption.
		{"a\te\tv\tm\t5\tms\tq\r\r\n", `x.tsv:1: quote "q\r" holds the control character '\r'`},
		{"a\x00\te\tv\tm\t5\tms\tq\n", `x.tsv:1: article "a\x00" holds the control character '\x00'`},
	} {
		if _, err := ParseReferences("x.tsv", bad.text); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseReferences(%q) = %v, want an error containing %q", bad.text, err, bad.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"# Title", "<h1>Title</h1>\n"},
		{"a **b** *c* `<d>`", "<p>a <strong>b</strong> <em>c</em> <code>&lt;d&gt;</code></p>\n"},
		{"- x\n- y", "<ul>\n<li>x</li>\n<li>y</li>\n</ul>\n"},
		{"1. x\n2. y", "<ol>\n<li>x</li>\n<li>y</li>\n</ol>\n"},
		{"```\n<b>\n```", "<pre><code>&lt;b&gt;\n</code></pre>\n"},
		{"[go](https://go.dev) <script>", `<p><a href="https://go.dev">go</a> &lt;script&gt;</p>` + "\n"},
		{"[x](javascript:void)", "<p>x</p>\n"},
	}
	for _, tc := range tests {
		if got := Markdown(tc.in); got != tc.want {
			t.Errorf("Markdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func ExampleMarkdown() {
	fmt.Print(Markdown("## Result\nnotify is **21%** faster"))
	// Output:
	// <h2>Result</h2>
	// <p>notify is <strong>21%</strong> faster</p>
}

func ExampleExperiment_With() {
	_, err := fixture().With("hz", 300)
	fmt.Println(err)
	// Output: experiment fixture-queue: parameter hz: value 300 not allowed; choose one of 100, 250, 1000
}

// A claim's magnitude reads as a factor once the model is off by 2x or
// more either way: as a percentage, 36x lower would read "off by 97%".
func TestClaimMagnitude(t *testing.T) {
	for _, tc := range []struct {
		article, sim float64
		want         string
	}{
		{100, 105, "one variant only: within 10%"},
		{100, 150, "one variant only: off by up to 50%"},
		{100, 543, "one variant only: off by up to 5.4x"},
		{36, 1, "one variant only: off by up to 36x"},
		{100, -50, "one variant only: off by up to 150%"},
	} {
		c := Claim{Sides: []ClaimSide{{Variant: "a", Article: tc.article, Sim: Summarize([]float64{tc.sim}),
			DeviationPct: 100 * (tc.sim - tc.article) / tc.article}}}
		c.judge(nil, 0)
		if c.Verdict != tc.want {
			t.Errorf("article %g, model %g: %q, want %q", tc.article, tc.sim, c.Verdict, tc.want)
		}
	}
}

// A timeline's subtitle names the lane kinds its trace has, no others.
func TestTimelineNamesItsLanes(t *testing.T) {
	tr := &sim.Trace{Spans: []sim.Span{{Core: 1, Lane: "state", Label: "wfe", End: sim.Microsecond}, {Core: 0, Lane: "lock", Label: "l", End: 2 * sim.Microsecond}}}
	h := Timeline("t", tr).HTML()
	if !strings.Contains(h, "one lane per core and kind (lock, state);") || strings.Contains(h, "task") {
		t.Error("the subtitle does not name exactly the trace's lanes, lock and state")
	}
}

// A timeline's time axis spans its trace exactly (echarts would round a
// 200-215 us window out to 198-216), in µs.
func TestTimelineAxisSpansTheTrace(t *testing.T) {
	tr := &sim.Trace{Spans: []sim.Span{
		{Core: 0, Lane: "state", Label: "exec", Start: 201 * sim.Microsecond, End: 215 * sim.Microsecond},
		{Core: 1, Lane: "state", Label: "wfe", Start: 200*sim.Microsecond + 500*sim.Nanosecond, End: 214 * sim.Microsecond},
	}}
	h := Timeline("t", tr).HTML()
	if !strings.Contains(h, `"max":215,"min":200.5,"name":"time (µs)"`) {
		t.Errorf("the time axis is not named in µs from 200.5 to 215:\n%s", h)
	}
}

// An experiment's description is plain text in a report: its asterisks
// and markup characters are shown, not read as Markdown.
func TestReportShowsTheDescriptionAsText(t *testing.T) {
	res := fixtureResult(t)
	res.Experiment = res.Experiment.Clone()
	res.Experiment.Description = "power is C*V^2*f plus *leakage* <b>"
	page := ResultReport(res).HTML()
	if !strings.Contains(page, "<p>power is C*V^2*f plus *leakage* &lt;b&gt;</p>") || strings.Contains(page, "<em>") {
		t.Errorf("the description is not shown as written:\n%s", page[:min(len(page), 3000)])
	}
}
