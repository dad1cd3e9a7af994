package sim

import (
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
