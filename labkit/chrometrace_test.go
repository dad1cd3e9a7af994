package labkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"synclab/platforms"
	"synclab/sim"
)

// traceResult is a result of two variants at two sweep points, repeat 0 of
// each traced except wfi's at point 1 (a run with no trace is left out).
func traceResult() *Result {
	e := platforms.Experiment{Name: "demo", Seed: 9,
		Variants: []platforms.Variant{{Name: "wfe"}, {Name: "wfi"}},
		Sweep:    []platforms.Axis{{Param: "hz", Values: []float64{100, 250}}}, Repeats: 1}
	tr := func(spans ...sim.Span) *sim.Trace {
		t := sim.NewTrace(0, 10*sim.Microsecond, 100)
		for _, s := range spans {
			t.Add(s)
		}
		return t
	}
	return &Result{Experiment: e, Hash: "h", Runs: []Run{
		{Variant: "wfe", Point: 0, Seed: 1, Trace: tr(
			sim.Span{Core: 1, Lane: "state", Label: "wfe", Start: 1234567, End: 2000499},
			sim.Span{Core: 1, Lane: "state", Label: "run", Start: 2000499, End: 3 * sim.Microsecond},
			sim.Span{Core: 0, Lane: "state", Label: "run", Start: 0, End: 3*sim.Microsecond + 1},
			sim.Span{Core: 0, Lane: "lock", Label: "held", Start: 500 * sim.Nanosecond, End: 700 * sim.Nanosecond})},
		{Variant: "wfe", Point: 1, Seed: 2, Trace: tr(sim.Span{Core: 3, Lane: "state", Label: "wfi", Start: 0, End: sim.Microsecond})},
		{Variant: "wfi", Point: 0, Seed: 3, Trace: tr()},
		{Variant: "wfi", Point: 1, Seed: 4},
	}}
}

// TestWriteChromeTrace: every span of every traced run becomes one complete
// event on its run's process and its core and lane's thread, at exact
// microseconds; processes and threads are named; the file says what ran.
func TestWriteChromeTrace(t *testing.T) {
	var b bytes.Buffer
	if err := WriteChromeTrace(&b, traceResult()); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("displayTimeUnit")) {
		t.Error(`the file sets displayTimeUnit, which older Perfetto versions take as the unit of "ts" and "dur"`)
	}
	var doc struct {
		OtherData   map[string]any `json:"otherData"`
		TraceEvents []struct {
			Name, Cat, Ph string
			Pid, Tid      int
			Ts, Dur       json.Number
			Args          map[string]any
		} `json:"traceEvents"`
	}
	dec := json.NewDecoder(&b)
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if doc.OtherData["experiment"] != "demo" || doc.OtherData["hash"] != "h" || doc.OtherData["clock"] != "simulated" {
		t.Errorf("header: otherData %v", doc.OtherData)
	}
	var spans, names []string
	for _, ev := range doc.TraceEvents {
		switch ev.Ph {
		case "X":
			spans = append(spans, fmt.Sprintf("%s %s %s %s @%d/%d", ev.Name, ev.Cat, ev.Ts, ev.Dur, ev.Pid, ev.Tid))
		case "M":
			if n, ok := ev.Args["name"].(string); ok {
				names = append(names, fmt.Sprintf("%s %d/%d %s", ev.Name, ev.Pid, ev.Tid, n))
			}
		default:
			t.Errorf("event of phase %q", ev.Ph)
		}
	}
	wantSpans := []string{
		// 1,234,567 to 2,000,499 ps on the nanosecond grid: ending where the
		// next span begins (765.932 ns rounded alone would overlap it by 1 ns).
		"wfe state 1.235 0.765 @1/3",
		"run state 2 1 @1/3",
		"run state 0 3 @1/2", // 3 µs and 1 ps
		"held lock 0.5 0.2 @1/1",
		"wfi state 0 1 @2/4",
	}
	wantNames := []string{
		"process_name 1/0 wfe, hz=100, seed 1",
		"thread_name 1/1 core 0 lock", // by core, then lane
		"thread_name 1/2 core 0 state",
		"thread_name 1/3 core 1 state",
		"process_name 2/0 wfe, hz=250, seed 2",
		"thread_name 2/4 core 3 state",         // thread ids unique across processes
		"process_name 3/0 wfi, hz=100, seed 3", // traced, no span in the window
	}
	if strings.Join(spans, "\n") != strings.Join(wantSpans, "\n") {
		t.Errorf("spans:\n%s\nwant:\n%s", strings.Join(spans, "\n"), strings.Join(wantSpans, "\n"))
	}
	if strings.Join(names, "\n") != strings.Join(wantNames, "\n") {
		t.Errorf("names:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(wantNames, "\n"))
	}
}

// TestWriteChromeTraceNone: a result without a traced run is an error that
// says how to record one, and nothing is written.
func TestWriteChromeTraceNone(t *testing.T) {
	res := traceResult()
	for i := range res.Runs {
		res.Runs[i].Trace = nil
	}
	var b bytes.Buffer
	err := WriteChromeTrace(&b, res)
	if err == nil || !strings.Contains(err.Error(), "demo") || !strings.Contains(err.Error(), "lab run -trace") {
		t.Errorf("error %v, want one naming the experiment and how to trace it", err)
	}
	if b.Len() != 0 {
		t.Errorf("wrote %d bytes", b.Len())
	}
}

// ExampleWriteChromeTrace writes the timeline of one traced run: open the
// file in ui.perfetto.dev.
func ExampleWriteChromeTrace() {
	tr := sim.NewTrace(0, sim.Millisecond, 10)
	tr.Add(sim.Span{Core: 0, Lane: "state", Label: "wfe", Start: 1500 * sim.Nanosecond, End: 4 * sim.Microsecond})
	res := &Result{Experiment: platforms.Experiment{Name: "demo", Seed: 1}, Hash: "h",
		Runs: []Run{{Variant: "wfe", Seed: 7, Trace: tr}}}
	if err := WriteChromeTrace(os.Stdout, res); err != nil {
		panic(err)
	}
	// Output:
	// {"otherData":{"experiment":"demo","hash":"h","seed":1,"clock":"simulated"},"traceEvents":[
	// {"name":"process_name","ph":"M","pid":1,"args":{"name":"wfe, seed 7"}},
	// {"name":"process_sort_index","ph":"M","pid":1,"args":{"sort_index":1}},
	// {"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"core 0 state"}},
	// {"name":"thread_sort_index","ph":"M","pid":1,"tid":1,"args":{"sort_index":1}},
	// {"name":"wfe","cat":"state","ph":"X","pid":1,"tid":1,"ts":1.5,"dur":2.5}
	// ]}
}

// BenchmarkWriteChromeTrace writes a run of 200,000 spans (a full trace) on
// 16 cores' state and lock lanes.
func BenchmarkWriteChromeTrace(b *testing.B) {
	tr := sim.NewTrace(0, sim.Second, 200_000)
	labels := []string{"exec", "wfe", "spin", "irq", "hold lock 0", "wait"}
	for i := range 200_000 {
		t := sim.Time(i) * 4123 * sim.Picosecond
		tr.Add(sim.Span{Core: i % 16, Lane: []string{"state", "lock"}[i/16%2], Label: labels[i%len(labels)], Start: t, End: t + 3999})
	}
	res := &Result{Experiment: platforms.Experiment{Name: "demo", Seed: 1}, Hash: "h", Runs: []Run{{Variant: "wfe", Seed: 7, Trace: tr}}}
	b.ReportAllocs()
	for b.Loop() {
		var buf bytes.Buffer
		if err := WriteChromeTrace(&buf, res); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(buf.Len()))
	}
}
