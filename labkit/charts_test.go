package labkit

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"synclab/labkit/nbexport"
	"synclab/platforms"
)

func TestLines(t *testing.T) {
	tests := []struct {
		name   string
		x      []float64
		series []Series
		want   map[string][][2]any // per series, its [x, y] points (nil = gap)
	}{
		{"analytic beside simulated", []float64{1, 2, 4},
			[]Series{{Name: "model", Values: []float64{10, 5, 2.5}}, {Name: "simulated", Values: []float64{11, 4.5, 2.4}}},
			map[string][][2]any{"model": {{1.0, 10.0}, {2.0, 5.0}, {4.0, 2.5}}, "simulated": {{1.0, 11.0}, {2.0, 4.5}, {4.0, 2.4}}}},
		{"gaps for NaN, Inf and a short series; extra values ignored", []float64{0.5, 1, 3},
			[]Series{{Name: "energy", Values: []float64{math.NaN(), 2, math.Inf(1)}}, {Name: "short", Values: []float64{1}}, {Name: "long", Values: []float64{1, 2, 3, 4}}},
			map[string][][2]any{"energy": {{0.5, nil}, {1.0, 2.0}, {3.0, nil}}, "short": {{0.5, 1.0}, {1.0, nil}, {3.0, nil}}, "long": {{0.5, 1.0}, {1.0, 2.0}, {3.0, 3.0}}}},
	}
	for _, tc := range tests {
		c := Lines("energy per op", "cores", "nJ", tc.x, tc.series...)
		var opt struct {
			XAxis  []struct{ Name, Type string } `json:"xAxis"`
			YAxis  []struct{ Name string }       `json:"yAxis"`
			Series []struct {
				Name, Type string
				Data       []struct{ Value [2]any }
			} `json:"series"`
		}
		if err := json.Unmarshal([]byte(c.Option), &opt); err != nil {
			t.Fatalf("%s: option is not JSON: %v\n%s", tc.name, err, c.Option)
		}
		if len(opt.XAxis) != 1 || opt.XAxis[0].Type != "value" || opt.XAxis[0].Name != "cores" || len(opt.YAxis) != 1 || opt.YAxis[0].Name != "nJ" {
			t.Errorf("%s: axes %+v %+v", tc.name, opt.XAxis, opt.YAxis)
		}
		got := map[string][][2]any{}
		for _, s := range opt.Series {
			if s.Type != "line" {
				t.Errorf("%s: series %s has type %q", tc.name, s.Name, s.Type)
			}
			for _, d := range s.Data {
				got[s.Name] = append(got[s.Name], d.Value)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: series data\n got %v\nwant %v", tc.name, got, tc.want)
		}
		if c.Title != "energy per op" || c.ID == "" {
			t.Errorf("%s: chart %q id %q", tc.name, c.Title, c.ID)
		}
	}
}

// chartOption is the part of an ECharts option the chart tests read.
type chartOption struct {
	Title  struct{ Text, Subtext string } `json:"title"`
	Legend struct{ Data []string }        `json:"legend"`
	XAxis  []struct {
		Type    string
		Name    string
		LogBase float64
		Data    []string
	} `json:"xAxis"`
	YAxis []struct {
		Type, Name string
	} `json:"yAxis"`
	Toolbox struct {
		Feature map[string]json.RawMessage
	} `json:"toolbox"`
	Series []struct {
		ID, Name, Type string
		RenderItem     string
		ItemStyle      struct{ Color string }
		Data           []struct {
			Value     []any
			ItemStyle struct{ Color string }
		}
	} `json:"series"`
}

func parseOption(t *testing.T, c *Chart) chartOption {
	t.Helper()
	var o chartOption
	if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
		t.Fatalf("%s: option is not JSON: %v", c.Title, err)
	}
	return o
}

// handResult is a result of e with the given metric values per variant and
// point (repeats = len of each list).
func handResult(e platforms.Experiment, metric string, values map[string][][]float64) *Result {
	r := &Result{Experiment: e, Complete: true}
	for _, v := range e.Variants {
		for p, xs := range values[v.Name] {
			for i, x := range xs {
				r.Runs = append(r.Runs, Run{Variant: v.Name, Point: p, Repeat: i, Metrics: map[string]float64{metric: x}})
			}
		}
	}
	return r
}

// resetColors forgets the colour assignment (a fresh notebook session).
func resetColors(t *testing.T) {
	t.Helper()
	t.Setenv("GONB_TMP_DIR", "")
	colors.Lock()
	colors.loaded, colors.Variants, colors.Others = false, nil, nil
	colors.Unlock()
}

// TestVariantColoursStable: a variant has the same colour in every chart,
// whatever the order or subset of variants of each; every chart has a
// legend entry per variant, and no two variants share a colour.
func TestVariantColoursStable(t *testing.T) {
	resetColors(t)
	e := fixture()
	e.Variants = append(e.Variants, platforms.Variant{Name: "medium"})
	five := []float64{1, 2, 3, 4, 5}
	all := handResult(e, "time_ms", map[string][][]float64{"fast": {five}, "slow": {five}, "medium": {five}})
	reversed := e.Clone()
	slices.Reverse(reversed.Variants)
	rev := handResult(reversed, "time_ms", map[string][][]float64{"fast": {five}, "slow": {five}, "medium": {five}})
	sweep, err := e.WithSweep("work", 10, 20)
	if err != nil {
		t.Fatal(err)
	}
	sw := handResult(sweep, "time_ms", map[string][][]float64{"fast": {five, five}, "slow": {five, five}, "medium": {five, five}})
	line, err := SweepLines(sw, "time_ms", "work")
	if err != nil {
		t.Fatal(err)
	}
	charts := []*Chart{BarsCI(all, "time_ms"), BarsCI(rev, "time_ms"), line, BarsCI(sw, "time_ms"),
		Lines("plain", "x", "y", []float64{1, 2}, Series{Name: "slow", Values: []float64{1, 2}}),
		Bars("plain bars", "y", []string{"medium", "fast"}, Series{Name: "v", Values: []float64{1, 2}})}
	seen := map[string]string{}
	for _, c := range charts {
		o := parseOption(t, c)
		for _, s := range o.Series {
			color := s.ItemStyle.Color
			if s.Name == "v" { // one series: coloured by category
				for i, d := range s.Data {
					if cat := []string{"medium", "fast"}[i]; d.ItemStyle.Color != seen[cat] {
						t.Errorf("%s: bar %s is %s, elsewhere %s", c.Title, cat, d.ItemStyle.Color, seen[cat])
					}
				}
				continue
			}
			if prev, ok := seen[s.Name]; ok && prev != color {
				t.Errorf("%s: %s is %s here, %s in an earlier chart", c.Title, s.Name, color, prev)
			}
			seen[s.Name] = color
		}
		if len(o.Legend.Data) > 0 && len(o.Legend.Data) != len(slices.Compact(slices.Sorted(slices.Values(o.Legend.Data)))) {
			t.Errorf("%s: legend %v repeats an entry", c.Title, o.Legend.Data)
		}
		if _, ok := o.Toolbox.Feature["saveAsImage"]; !ok {
			t.Errorf("%s: no save-as-image tool", c.Title)
		}
		if _, ok := o.Toolbox.Feature["dataView"]; !ok {
			t.Errorf("%s: no data-view tool", c.Title)
		}
	}
	if o := parseOption(t, line); !slices.Equal(o.Legend.Data, []string{"fast", "slow", "medium"}) {
		t.Errorf("sweep legend %v, want one entry per variant", o.Legend.Data)
	}
	if len(seen) < 3 || seen["fast"] == seen["slow"] || seen["slow"] == seen["medium"] || seen["fast"] == seen["medium"] {
		t.Errorf("variant colours %v: want three distinct ones", seen)
	}
	if len(palette) < 12 {
		t.Errorf("palette of %d colours, want at least 12", len(palette))
	}
}

// TestColoursKeptAcrossCells: in a notebook every cell is a new program; the
// assignment lives in the kernel session's directory.
func TestColoursKeptAcrossCells(t *testing.T) {
	resetColors(t)
	t.Setenv("GONB_TMP_DIR", t.TempDir())
	first := []string{colorOf("zeta"), colorOf("alpha")}
	colors.Lock()
	colors.loaded, colors.Variants, colors.Others = false, nil, nil // the next cell's program
	colors.Unlock()
	if got := []string{colorOf("alpha"), colorOf("zeta")}; got[0] != first[1] || got[1] != first[0] {
		t.Errorf("colours after a new cell %v, before %v", got, first)
	}
}

// intervals returns the [lo, hi] of the error bars (custom series drawing
// bars: items [cat, mean, lo, hi, ...]) and bands ([x, lo, hi]) of a chart.
func intervals(t *testing.T, c *Chart) (out [][2]float64, dots int) {
	t.Helper()
	for _, s := range parseOption(t, c).Series {
		for _, d := range s.Data {
			switch {
			case s.RenderItem == fnPrefix+"bar" && d.Value[2] != nil:
				out = append(out, [2]float64{d.Value[2].(float64), d.Value[3].(float64)})
			case s.RenderItem == fnPrefix+"band":
				out = append(out, [2]float64{d.Value[1].(float64), d.Value[2].(float64)})
			case s.RenderItem == fnPrefix+"dot" || s.Type == "scatter":
				dots++
			}
		}
	}
	return out, dots
}

// TestIntervalsClippedAndRepeats: an interval never leaves the metric's
// physical range (a time is not negative, a share not above 100%), and
// fewer than MinRepeatsForCI runs draw the runs instead.
func TestIntervalsClippedAndRepeats(t *testing.T) {
	resetColors(t)
	e := fixture()
	e.Metrics = append(e.Metrics, platforms.Metric{Name: "busy_pct", Unit: "%"}, platforms.Metric{Name: "delta", Unit: "x", Min: -10, Max: 10})
	e, err := e.WithSweep("work", 10, 20)
	if err != nil {
		t.Fatal(err)
	}
	noisy := []float64{0.01, 9, 0.02, 12, 0.05} // 95% interval far below 0
	full := []float64{99.9, 60, 100, 99.8, 30}  // above 100
	wide := []float64{-9, 9.5, -8, 9.9, 0}
	tests := []struct {
		metric string
		values []float64
		lo, hi float64
	}{{"time_ms", noisy, 0, math.Inf(1)}, {"busy_pct", full, 0, 100}, {"delta", wide, -10, 10}}
	for _, tc := range tests {
		vals := map[string][][]float64{"fast": {tc.values, tc.values}, "slow": {tc.values, tc.values}}
		r := handResult(e, tc.metric, vals)
		if s := r.Summary("fast", 0, tc.metric); s.Lo >= tc.lo && s.Hi <= tc.hi {
			t.Fatalf("%s: the test data's interval [%g, %g] is inside the range", tc.metric, s.Lo, s.Hi)
		}
		line, err := SweepLines(r, tc.metric, "work")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []*Chart{BarsCI(r, tc.metric), line} {
			iv, dots := intervals(t, c)
			if len(iv) != 4 || dots != 0 {
				t.Errorf("%s: %d intervals and %d dots, want 4 and none", c.Title, len(iv), dots)
			}
			for _, b := range iv {
				if b[0] < tc.lo || b[1] > tc.hi {
					t.Errorf("%s: interval [%g, %g] outside [%g, %g]", c.Title, b[0], b[1], tc.lo, tc.hi)
				}
			}
		}
		few := handResult(e, tc.metric, map[string][][]float64{"fast": {tc.values[:2], tc.values[:2]}, "slow": {tc.values[:2], tc.values[:2]}})
		line, _ = SweepLines(few, tc.metric, "work")
		for _, c := range []*Chart{BarsCI(few, tc.metric), line} {
			if iv, dots := intervals(t, c); len(iv) != 0 || dots != 8 {
				t.Errorf("%s with 2 repeats: %d intervals and %d dots, want none and one dot per run (8)", c.Title, len(iv), dots)
			}
			// The interval's threshold is not the number of runs drawn.
			const want = "mean of 2 runs; dots: each run (a 95% interval is drawn from 5 runs up)"
			if o := parseOption(t, c); !strings.Contains(o.Title.Subtext, want) {
				t.Errorf("%s: subtitle %q, want it to say %q", c.Title, o.Title.Subtext, want)
			}
		}
	}
}

// TestAxisTypes: numeric sweeps sit on value axes, logarithmic beyond a 30x
// span (base 2 over powers of two), evenly spaced when they include 0 and
// span decades; values spanning more than 30x get a log y axis.
func TestAxisTypes(t *testing.T) {
	resetColors(t)
	tests := []struct {
		name    string
		x, y    []float64
		xType   string
		logBase float64
		yType   string
	}{
		{"cores", []float64{1, 2, 4, 8, 16, 32, 64}, []float64{5, 6, 7, 8, 9, 10, 11}, "log", 2, "value"},
		{"hz", []float64{100, 250, 300, 1000}, []float64{2e-3, 5, 4, 1}, "value", 0, "log"},
		{"spin_limit", []float64{0, 10, 100, 1000, 10000}, []float64{1, 2, 3, 4, 5}, "category", 0, "value"},
		{"lose_wake", []float64{0, 0.01, 0.1, 0.5}, []float64{1, 2, 3, 0}, "category", 0, "value"},
		{"cs", []float64{3, 30, 300}, []float64{1, 2, 3}, "log", 0, "value"},
		// The switch is beyond a 30x span, not at it.
		{"span-30x", []float64{2, 60}, []float64{0.5, 15}, "value", 0, "value"},
		{"span-31x", []float64{2, 62}, []float64{0.5, 15.5}, "log", 0, "log"},
	}
	for _, tc := range tests {
		o := parseOption(t, Lines(tc.name, tc.name, "ms", tc.x, Series{Name: "a", Values: tc.y}))
		if o.XAxis[0].Type != tc.xType || o.XAxis[0].LogBase != tc.logBase || o.YAxis[0].Type != tc.yType {
			t.Errorf("%s: x %s (base %g), y %s; want x %s (base %g), y %s", tc.name, o.XAxis[0].Type, o.XAxis[0].LogBase,
				o.YAxis[0].Type, tc.xType, tc.logBase, tc.yType)
		}
		if tc.xType == "category" && len(o.XAxis[0].Data) != len(tc.x) {
			t.Errorf("%s: categories %v", tc.name, o.XAxis[0].Data)
		}
	}
	// Bars over 3 us and 2.4 ms: a linear axis would hide the first.
	o := parseOption(t, Bars("wait", "ms", []string{"wfe", "wfi"}, Series{Name: "wait", Values: []float64{0.0033, 2.4}}))
	if o.YAxis[0].Type != "log" {
		t.Errorf("bars spanning 700x: y axis %s, want log", o.YAxis[0].Type)
	}
}

// TestResultChartsLinkTheirRuns: a chart of a result carries its runs as
// CSV, one row per run, which its HTML links.
func TestResultChartsLinkTheirRuns(t *testing.T) {
	resetColors(t)
	e, err := fixture().WithSweep("work", 10, 20)
	if err != nil {
		t.Fatal(err)
	}
	r := handResult(e, "time_ms", map[string][][]float64{"fast": {{1, 2, 3}, {4, 5, 6}}, "slow": {{1, 2}, {3}}})
	line, err := SweepLines(r, "time_ms", "work")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Chart{BarsCI(r, "time_ms"), line} {
		h := c.HTML()
		_, link, ok := strings.Cut(h, `href="data:text/csv;base64,`)
		if !ok {
			t.Fatalf("%s: no CSV link", c.Title)
		}
		link, _, _ = strings.Cut(link, `"`)
		b, err := base64.StdEncoding.DecodeString(link)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil || len(rows) != 1+len(r.Runs) {
			t.Errorf("%s: %d CSV rows (%v), want a header and %d runs", c.Title, len(rows), err, len(r.Runs))
		}
		if !strings.Contains(h, fmt.Sprintf("(CSV, %d rows)", len(r.Runs))) {
			t.Errorf("%s: the link does not say how many rows", c.Title)
		}
	}
}

// TestOtherSeriesTakeColoursFromThePaletteEnd: variants take the palette
// from its start in the order they first appear; any other series (an
// analytic curve, a stack component) from its end, so that it never wears
// a variant's colour.
func TestOtherSeriesTakeColoursFromThePaletteEnd(t *testing.T) {
	resetColors(t)
	registerVariants(platforms.Experiment{Variants: []platforms.Variant{{Name: "wfe"}, {Name: "wfi"}}})
	n := len(palette)
	for _, tc := range []struct{ name, want string }{
		{"model", palette[n-1]}, {"wfe", palette[0]}, {"idle", palette[n-2]}, {"wfi", palette[1]}, {"model", palette[n-1]},
	} {
		if got := colorOf(tc.name); got != tc.want {
			t.Errorf("colorOf(%s) = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestChartNumbersInChromium runs the charts' number format (numJS) in
// Chromium: it writes what Num writes from 0.001 up, and below it decimals
// instead of scientific notation, so that a log axis reads 0.0001 and a tiny
// bar's label 0.0005575.
func TestChartNumbersInChromium(t *testing.T) {
	if nbexport.ChromiumPath() == "" {
		if os.Getenv("SYNCLAB_E2E") != "" {
			t.Fatal("SYNCLAB_E2E=1 but no chromium (scripts/setup.sh --test installs it)")
		}
		t.Skip("no chromium (scripts/setup.sh --test installs it)")
	}
	cases := []struct {
		x    float64
		want string
	}{
		{5.575e-4, "0.0005575"}, {-8.628e-4, "-0.0008628"}, {1e-4, "0.0001"}, {1e-6, "0.000001"},
		{1.23456e-9, "0.000000001235"}, {5e-10, "5e-10"}, {0.001, "0.001"}, {0.003331, "0.003331"},
		{2.304, "2.304"}, {19490, "19,490"}, {2e15, "2e15"}, {0, "0"},
	}
	xs := make([]string, len(cases))
	for i, c := range cases {
		xs[i] = strconv.FormatFloat(c.x, 'g', -1, 64)
	}
	page := filepath.Join(t.TempDir(), "num.html")
	html := "<!DOCTYPE html><html><body><pre id=out></pre><script>var fns = {}; fns.num = " + numJS +
		";\ndocument.getElementById('out').textContent = [" + strings.Join(xs, ",") + "].map(fns.num).join('|');</script></body></html>"
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, err := nbexport.RenderedDOM(context.Background(), page, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, out, _ := strings.Cut(string(dom), `<pre id="out">`)
	out, _, _ = strings.Cut(out, "</pre>")
	got := strings.Split(out, "|")
	if len(got) != len(cases) {
		t.Fatalf("Chromium wrote %q, want %d numbers", out, len(cases))
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("numJS(%g) = %q, want %q", c.x, got[i], c.want)
		}
		if a := math.Abs(c.x); (a >= 1e-3 || a == 0) && got[i] != Num(c.x) {
			t.Errorf("numJS(%g) = %q, Num writes %q", c.x, got[i], Num(c.x))
		}
	}
}

// A line chart's linear y axis ends at round values around its data, from
// 0 when 0 is within one span, and names the cut when it leaves 0 out.
func TestLineAxis(t *testing.T) {
	tests := []struct {
		values   []float64
		min, max float64 // NaN: not set
		name     string
	}{
		{[]float64{3.25, 3.33, math.NaN()}, 3.24, 3.34, "µs (not from 0)"}, // seed noise, zoomed and labelled
		{[]float64{2269, 2326}, 2260, 2340, "µs (not from 0)"},
		{[]float64{2.4, 11}, 0, 15, "µs"}, // 0 is near: shown
		{[]float64{-1, 3}, -1, 3, "µs"},
		{[]float64{-5, -4.9}, -5, -4.9, "µs (not from 0)"},
		{[]float64{5, 5}, math.NaN(), math.NaN(), "µs"}, // flat: against 0, as ECharts draws it
		{[]float64{1, 1000}, math.NaN(), math.NaN(), "µs (log scale)"},
	}
	for _, tc := range tests {
		ya := lineAxis("us", tc.values)
		if ya.Name != tc.name {
			t.Errorf("%v: name %q, want %q", tc.values, ya.Name, tc.name)
		}
		for _, c := range []struct {
			got  any
			want float64
		}{{ya.Min, tc.min}, {ya.Max, tc.max}} {
			v, set := c.got.(float64)
			if math.IsNaN(c.want) != !set || set && math.Abs(v-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
				t.Errorf("%v: axis from %v to %v, want %g to %g", tc.values, ya.Min, ya.Max, tc.min, tc.max)
				break
			}
		}
	}
}

// An x axis says when it is not linear, in Lines as in SweepLines.
func TestXAxisNamesItsScale(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want string
	}{
		{[]float64{1, 2, 4, 8}, "cores"},
		{[]float64{1, 10, 100, 1000}, "cores (log scale)"},
		{[]float64{0, 1, 10, 100, 1000}, "cores (not to scale)"},
	} {
		if got := xAxis("cores", tc.xs).Name; got != tc.want {
			t.Errorf("xAxis(%v) named %q, want %q", tc.xs, got, tc.want)
		}
	}
}

// A series with Lo and Hi gets its 95% interval as a band of its own
// colour, and the chart's data (CSV) carries the bounds.
func TestLinesBand(t *testing.T) {
	c := Lines("wait vs HZ", "hz", "ms", []float64{100, 250}, Series{Name: "wfi", Values: []float64{4.4, 2}, Lo: []float64{0, 1.6}, Hi: []float64{12.5, 2.4}},
		Series{Name: "half tick", Values: []float64{5, 2}})
	var opt struct {
		Series []struct {
			Name, Type string
			Data       []struct{ Value []any }
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(c.Option), &opt); err != nil {
		t.Fatalf("option is not JSON: %v\n%s", err, c.Option)
	}
	bands := 0
	for _, s := range opt.Series {
		if s.Type == "custom" {
			bands++
			if s.Name != "wfi" || len(s.Data) != 2 || s.Data[0].Value[2] != 12.5 {
				t.Errorf("band %s %v, want wfi's [x, lo, hi]", s.Name, s.Data)
			}
		}
	}
	if bands != 1 || !strings.Contains(c.csv, "wfi 95% low") {
		t.Errorf("%d bands, CSV %q; want one, and the bounds in the CSV", bands, c.csv)
	}
}

// TestChartsRefuseUnknownMetric: every chart of a metric refuses a name the
// experiment does not report (SweepLines with its error, the others with a
// panic, as Must) and names it and the metrics there are, rather than draw
// zeros.
func TestChartsRefuseUnknownMetric(t *testing.T) {
	e, err := fixture().WithSweep("work", 10, 20)
	if err != nil {
		t.Fatal(err)
	}
	r := handResult(e, "time_ms", map[string][][]float64{"fast": {{1, 2}, {3, 4}}, "slow": {{2, 3}, {4, 5}}})
	sens := &Sensitivity{Experiment: e.Name, Baseline: r}
	charts := []struct {
		name  string
		chart func(metric string) (*Chart, error)
	}{
		{"SweepLines", func(m string) (*Chart, error) { return SweepLines(r, m, "work") }},
		{"BarsCI", func(m string) (*Chart, error) { return BarsCI(r, m), nil }},
		{"MetricStack", func(m string) (*Chart, error) { return MetricStack(r, "stack", "ms", "time_ms", m), nil }},
		{"Tornado", func(m string) (*Chart, error) { return sens.Tornado("fast", m), nil }},
	}
	for _, tc := range charts {
		t.Run(tc.name, func(t *testing.T) {
			if c, err := tc.chart("time_ms"); err != nil || c == nil {
				t.Fatalf("known metric: %v", err)
			}
			err := func() (err error) {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
					}
				}()
				_, err = tc.chart("tiem_ms")
				return err
			}()
			if err == nil || !containsAll(err.Error(), `"tiem_ms"`, "metrics: time_ms, ops_s") {
				t.Errorf("unknown metric: %v; want an error naming it and the metrics", err)
			}
		})
	}
}
