package sim

import (
	"cmp"
	"slices"
	"strings"
	"testing"
)

// The trace records core states inside its window only.
func TestTrace(t *testing.T) {
	r := newRig(t, 1, false, nil)
	r.e.Trace = NewTrace(500*Nanosecond, 2*Microsecond, 100)
	r.e.Spawn(r.e.Cores()[0], "t", func(p *Proc) { p.Compute(1000); p.Sleep(3 * Microsecond) })
	r.run(t)
	var total Time
	for _, s := range r.e.Trace.Spans {
		if s.Start < 500*Nanosecond || s.End > 2*Microsecond {
			t.Fatalf("span %+v outside the window", s)
		}
		total += s.End - s.Start
	}
	if total != 1500*Nanosecond {
		t.Fatalf("spans cover %v, want the 1.5us window", total)
	}
}

// A window of a trace keeps the spans inside it, clipped; an empty window or
// one reaching outside the recorded one is an error naming both.
func TestTraceWindow(t *testing.T) {
	tr := NewTrace(0, 10*Microsecond, 10)
	tr.Add(Span{Lane: "state", Label: "exec", Start: 0, End: 4 * Microsecond})
	tr.Add(Span{Lane: "state", Label: "wfe", Start: 4 * Microsecond, End: 9 * Microsecond})
	w, err := tr.Window(3*Microsecond, 5*Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	want := []Span{{Lane: "state", Label: "exec", Start: 3 * Microsecond, End: 4 * Microsecond},
		{Lane: "state", Label: "wfe", Start: 4 * Microsecond, End: 5 * Microsecond}}
	if len(w.Spans) != 2 || w.Spans[0] != want[0] || w.Spans[1] != want[1] || len(tr.Spans) != 2 || tr.Spans[0].Start != 0 {
		t.Fatalf("window %+v (trace %+v), want %+v and the trace unchanged", w.Spans, tr.Spans, want)
	}
	for _, c := range []struct{ from, to Time }{{5 * Microsecond, 3 * Microsecond}, {2 * Microsecond, 2 * Microsecond}, {8 * Microsecond, 11 * Microsecond}} {
		_, err := tr.Window(c.from, c.to)
		if err == nil || !strings.Contains(err.Error(), c.from.String()+"-"+c.to.String()) || !strings.Contains(err.Error(), "recorded 0ns-10us") {
			t.Errorf("window %v-%v: error %v, want one naming it and the recorded window", c.from, c.to, err)
		}
	}
}

// Trace.Add keeps a span exactly when it overlaps the half-open window
// [From, To), clipped to it: a span ending at From or starting at To
// touches the window without overlapping it and would draw as a
// zero-length sliver at its edge. Max bounds the spans kept, exactly.
func TestTraceAddClipsToTheHalfOpenWindow(t *testing.T) {
	const from, to = 100, 200
	for _, tc := range []struct {
		name       string
		start, end Time
		keep       bool
		want       Span // when kept
	}{
		{"before", 10, 50, false, Span{}},
		{"ends at From", 50, from, false, Span{}},
		{"ends just after From", 50, from + 1, true, Span{Start: from, End: from + 1}},
		{"inside", 120, 150, true, Span{Start: 120, End: 150}},
		{"across both ends", 0, 300, true, Span{Start: from, End: to}},
		{"starts just before To", to - 1, 250, true, Span{Start: to - 1, End: to}},
		{"starts at To", to, 250, false, Span{}},
		{"after", 250, 300, false, Span{}},
	} {
		tr := NewTrace(from, to, 10)
		tr.Add(Span{Core: 1, Lane: "state", Label: "exec", Start: tc.start, End: tc.end})
		if !tc.keep {
			if len(tr.Spans) != 0 {
				t.Errorf("%s: [%d, %d) kept as %+v, want it dropped", tc.name, tc.start, tc.end, tr.Spans)
			}
			continue
		}
		tc.want.Core, tc.want.Lane, tc.want.Label = 1, "state", "exec"
		if len(tr.Spans) != 1 || tr.Spans[0] != tc.want {
			t.Errorf("%s: [%d, %d) recorded as %+v, want %+v", tc.name, tc.start, tc.end, tr.Spans, tc.want)
		}
	}
	tr := NewTrace(0, 1000, 3)
	for i := range Time(5) {
		tr.Add(Span{Lane: "task", Label: "t", Start: 10 * i, End: 10*i + 5})
	}
	if starts := []Time{tr.Spans[0].Start, tr.Spans[len(tr.Spans)-1].Start}; len(tr.Spans) != 3 || !slices.Equal(starts, []Time{0, 20}) {
		t.Errorf("Max 3: kept %+v, want the first three spans", tr.Spans)
	}
}

// lockModel adds a span of its own for each hold of a lock, as an OS model
// does, and reports the one open (TraceSpanner).
type lockModel struct {
	e     *Engine
	name  string
	since Time
	open  bool
}

func (m *lockModel) take(p *Proc) { m.since, m.open = p.Now(), true }

func (m *lockModel) give(p *Proc) {
	m.e.Trace.Add(Span{Core: p.Core().ID, Lane: "lock", Label: m.name, Start: m.since, End: p.Now()})
	m.open = false
}

func (m *lockModel) OpenSpans(now Time, add func(Span)) {
	if m.open {
		add(Span{Core: 0, Lane: "lock", Label: m.name, Start: m.since, End: now})
	}
}

// SealTrace records at the window's end the spans still open then (a
// core's state, a model's lock), clipped: the spans of a trace that records
// each when it ends (in another order), and also the one still open when
// the run ends, which such a trace never records. Nothing is added after
// the seal.
func TestSealTrace(t *testing.T) {
	run := func(seal bool) []Span {
		r := newRig(t, 2, false, nil)
		r.e.Trace = NewTrace(0, 3*Microsecond, 100)
		a, b := &lockModel{e: r.e, name: "a"}, &lockModel{e: r.e, name: "b"}
		if seal {
			r.e.SealTrace(a, b)
		}
		r.e.Spawn(r.e.Cores()[0], "holder", func(p *Proc) {
			p.Sleep(Microsecond)
			a.take(p)
			p.Sleep(Microsecond)
			b.take(p) // held to the end of the run
			p.Sleep(3 * Microsecond)
			a.give(p) // at 5 µs: its span [1, 3) µs
			p.Sleep(Microsecond)
			a.take(p) // after the window
			a.give(p)
		})
		r.e.Spawn(r.e.Cores()[1], "ticker", func(p *Proc) {
			for range 8 {
				p.Sleep(Microsecond)
			}
		})
		r.run(t)
		return r.e.Trace.Spans
	}
	key := func(a, b Span) int {
		return cmp.Or(cmp.Compare(a.Core, b.Core), strings.Compare(a.Lane, b.Lane), cmp.Compare(a.Start, b.Start))
	}
	sealed, unsealed := run(true), run(false)
	lockA := Span{Core: 0, Lane: "lock", Label: "a", Start: Microsecond, End: 3 * Microsecond}
	lockB := Span{Core: 0, Lane: "lock", Label: "b", Start: 2 * Microsecond, End: 3 * Microsecond}
	if !slices.Contains(unsealed, lockA) || slices.Contains(unsealed, lockB) {
		t.Fatalf("unsealed trace %+v: want lock a clipped at the window's end, and no b (never released)", unsealed)
	}
	want := append(slices.Clone(unsealed), lockB)
	slices.SortFunc(sealed, key)
	slices.SortFunc(want, key)
	if !slices.Equal(sealed, want) {
		t.Errorf("sealed trace:\n%+v\nwant the unsealed one's spans and lock b's:\n%+v", sealed, want)
	}
}
