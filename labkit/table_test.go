package labkit

import (
	"fmt"
	"html"
	"reflect"
	"slices"
	"strings"
	"testing"

	"synclab/platforms"
)

// A long word in a table cell may break after its separators; short words,
// numbers and the escaping stay as they were.
func TestCellHTMLBreaksLongWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"no (set from it: same_cluster_ns)", "no (set from it: same_cluster_<wbr>ns)"},
		{"components/idf_test/include/idf_performance.h", "components/idf_<wbr>test/<wbr>include/<wbr>idf_<wbr>performance.<wbr>h"},
		{"a <b> & c.d", "a &lt;b&gt; &amp; c.d"},
		{"1,234,567.5", "1,234,567.5"},
	} {
		if got := cellHTML(tc.in); got != tc.want {
			t.Errorf("cellHTML(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestClaimsTableScalesTinyValues(t *testing.T) {
	c := Claim{Metric: "max_lock_wait_ms", Unit: "ms", Sides: []ClaimSide{
		{Variant: "global", Article: 3.2, Sim: Summary{N: 3, Mean: 4.314, Half: 1.431}},
		{Variant: "percpu", Article: 0.4, Sim: Summary{N: 3, Mean: 1.228e-4}},
	}}
	row := ClaimsTable([]Claim{c}).Rows[0]
	want := []string{"max_lock_wait_ms", "µs, not ms", "global 3,200 / percpu 400", "global 4,314 ± 1,431 / percpu 0.1228 ± 0", "global 35% higher / percpu 3,257x lower"}
	if !slices.Equal(row[:5], want) {
		t.Errorf("row = %q\nwant %q", row[:5], want)
	}
}

// TestClaimsTableUnitFitsTheArticleToo: the row's unit is chosen over the
// article's numbers as well as the simulated ones, so a tiny article value
// (1.2e-4 ms) is not written in scientific notation beside a simulated 2 ms.
func TestClaimsTableUnitFitsTheArticleToo(t *testing.T) {
	c := Claim{Metric: "wait_ms", Unit: "ms", Sides: []ClaimSide{
		{Variant: "wfe", Article: 1.2e-4, Sim: Summary{N: 3, Mean: 2, Half: 0.5}},
		{Variant: "wfi", Article: 3, Sim: Summary{N: 3, Mean: 3, Half: 0}},
	}}
	row := ClaimsTable([]Claim{c}).Rows[0]
	want := []string{"wait_ms", "µs, not ms", "wfe 0.12 / wfi 3,000", "wfe 2,000 ± 500 / wfi 3,000 ± 0", "wfe 16,667x higher / wfi same"}
	if !slices.Equal(row[:5], want) {
		t.Errorf("row = %q\nwant %q", row[:5], want)
	}
}

// TestSummaryTableCells pins SummaryTable's title and cells: one run per
// variant says there is no interval; a row in tiny values moves to a
// smaller unit and scales the half-width with the mean (0.2 ± 0.25 µs, not
// 0.2 µs ± 0.00025 ms); a variant without runs leaves its cell empty.
func TestSummaryTableCells(t *testing.T) {
	e := fixture()
	e.Repeats = 1
	one := handResult(e, "time_ms", map[string][][]float64{"fast": {{2}}, "slow": {{3}}})
	tab := SummaryTable(one)
	if want := fixtureName + ": one run per variant and point (no interval)"; tab.Title != want {
		t.Errorf("title %q, want %q", tab.Title, want)
	}
	if want := []string{"time_ms (ms)", "2", "3"}; !slices.Equal(tab.Rows[0], want) {
		t.Errorf("row %q, want %q", tab.Rows[0], want)
	}
	e.Repeats = 3
	// Both the interval and the runs' range (where the interval would cross
	// zero and no run does) are shown in the row's unit.
	tiny := handResult(e, "time_ms", map[string][][]float64{"fast": {{1e-4, 2e-4, 3e-4}}, "slow": {{3e-4, 3.1e-4, 3.2e-4}}})
	tab = SummaryTable(tiny)
	if want := fixtureName + ": mean ± 95% CI over 3 repeats" + rangeNote; tab.Title != want {
		t.Errorf("title %q, want %q", tab.Title, want)
	}
	if want := []string{"time_ms (µs, not ms)", "0.2 (runs 0.1 to 0.3)", "0.31 ± 0.025"}; !slices.Equal(tab.Rows[0], want) {
		t.Errorf("row %q, want %q", tab.Rows[0], want)
	}
	// An interrupted run's table says how many runs it stands on.
	half := handResult(e, "time_ms", map[string][][]float64{"fast": {{3e-4, 3.1e-4, 3.2e-4}}})
	half.Complete = false
	if got, want := SummaryTable(half).Title, fixtureName+": mean ± 95% CI over the runs finished before the interruption, 3 of 6"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
}

// A metric keeps one unit down a sweep: its rows compare at a glance.
func TestSummaryTableOneUnitPerMetric(t *testing.T) {
	e := fixture()
	e.Repeats = 1
	e.Sweep = []platforms.Axis{{Param: "work", Values: []float64{10, 1000}}}
	r := handResult(e, "time_ms", map[string][][]float64{"fast": {{4.5e-6}, {2.5}}})
	var got [][]string
	for _, row := range SummaryTable(r).Rows {
		if strings.HasPrefix(row[1], "time_ms") {
			got = append(got, row[:3])
		}
	}
	want := [][]string{{"10", "time_ms (µs, not ms)", "0.0045"}, {"1,000", "time_ms (µs, not ms)", "2,500"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("time_ms rows %q, want %q", got, want)
	}
}

// TestFailuresTableNamesThePoint: a failed run's row gives the swept value
// of its own point, its repeat, seed and error.
func TestFailuresTableNamesThePoint(t *testing.T) {
	res := failingFixture(t, func(s platforms.RunSpec) bool { return s.Variant == "slow" && s.Params["work"] == 200 && s.Repeat == 2 })
	tab := FailuresTable(res)
	seed := RunSeed(res.Experiment.Seed, "slow", 2)
	want := [][]string{{"slow", "200", "2", fmt.Sprint(seed), "deadlock at 1ms: worker/1 (core 1) waits on lock"}}
	if !reflect.DeepEqual(tab.Rows, want) || !slices.Equal(tab.Header, []string{"variant", "work", "repeat", "seed", "error"}) {
		t.Errorf("header %q rows %q, want rows %q", tab.Header, tab.Rows, want)
	}
	if want := fixtureName + ": 1 of 30 runs failed (left out of the statistics)"; tab.Title != want {
		t.Errorf("title %q, want %q", tab.Title, want)
	}
}

// A label says a unit changed only where the metric's name gives its own.
func TestScaledLabel(t *testing.T) {
	tests := []struct{ name, unit, shown, want string }{
		{"counter", "", "", "counter"},
		{"ns_per_op", "ns", "ns", "ns_per_op (ns)"},
		{"wait_ms", "ms", "ms", "wait_ms (ms)"},
		{"wait_ms", "ms", "us", "wait_ms (µs, not ms)"},
		{"latency", "ms", "us", "latency (µs)"},
		{"max_irq_latency_us", "us", "ns", "max_irq_latency_us (ns, not µs)"},
	}
	for _, tc := range tests {
		if got := scaledLabel(tc.name, tc.unit, tc.shown); got != tc.want {
			t.Errorf("scaledLabel(%q, %q, %q) = %q, want %q", tc.name, tc.unit, tc.shown, got, tc.want)
		}
	}
}

// Terminal tables align by display width: a wide East Asian character takes
// two columns (lab claims' Chinese section names pushed the next column
// right), and wrapping never splits a line wider than its column.
func TestWriteTextAlignsWideCharacters(t *testing.T) {
	tab := Table{Header: []string{"id", "§", "claim"}, Rows: [][]string{{"a", "性能对比结果", "x"}, {"b", "arm 6", "y"}}}
	var b strings.Builder
	tab.WriteTextWidth(&b, 0)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	for _, l := range lines {
		if at := displayWidth(l[:strings.LastIndex(l, "  ")+2]); at != 18 {
			t.Errorf("line %q: last column at %d, want 18 (1 + 2 + 12 + 2 + 1)", l, at)
		}
	}
	if got, want := wrapText("性能对比结果 ok", 5), []string{"性能", "对比", "结果", "ok"}; !slices.Equal(got, want) {
		t.Errorf("wrapText = %q, want %q", got, want)
	}
	if got := displayWidth("e\u0301µ"); got != 2 {
		t.Errorf("displayWidth of e, a combining accent and µ = %d, want 2", got)
	}
}

// A parameters table, in a report or on the command line, shows the values
// that ran, every digit (Num would round 12.345 to 12.35), sorted by key.
func TestParamsTableExactValues(t *testing.T) {
	tb := ParamsTable("p", platforms.Params{
		{Key: "wfet_us", Value: 12.345, Unit: "us", Prov: platforms.ASSUME, Min: 0.1, Max: 100000, Low: 10, High: 1000.5},
		{Key: "a_mhz", Value: 1416, Unit: "MHz", Prov: platforms.CODE, Choices: []float64{408, 1416}},
	})
	want := [][]string{
		{"a_mhz", "1,416", "MHz", "CODE", "one of 408, 1416", ""},
		{"wfet_us", "12.345", "µs", "ASSUME", "[0.1, 100,000]", "10 – 1,000.5"},
	}
	for i, w := range want {
		if got := tb.Rows[i][:6]; !slices.Equal(got, w) {
			t.Errorf("row %d = %q, want %q", i, got, w)
		}
	}
}

// TestSummaryTableExplainsItsMetrics: a summary table's HTML says what
// each metric row is, its unit, which way is better and when it has no
// value, from the metric's definition.
func TestSummaryTableExplainsItsMetrics(t *testing.T) {
	e := fixture()
	e.Repeats = 1
	e.Metrics[0].None = "nothing ran"
	tab := SummaryTable(handResult(e, "time_ms", map[string][][]float64{"fast": {{2}}, "slow": {{3}}}))
	if len(tab.Terms) != len(e.Metrics) {
		t.Fatalf("%d terms for %d metrics", len(tab.Terms), len(e.Metrics))
	}
	m := e.Metrics[0]
	want := fmt.Sprintf("<dt>%s</dt><dd>%s (%s; %s is better; &#34;-&#34; when nothing ran)</dd>", m.Name, html.EscapeString(m.Doc), ShowUnit(m.Unit), m.Better)
	if got := tab.HTML(); !strings.Contains(got, want) {
		t.Errorf("HTML lacks %q:\n%s", want, got)
	}
	if got := (Table{Rows: [][]string{{"a"}}}).HTML(); strings.Contains(got, "<details") {
		t.Errorf("a table without terms lists some: %s", got)
	}
}
