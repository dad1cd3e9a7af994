package playground

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"synclab/labkit/catalog"
)

// TestSetups: every control is a parameter of its experiment and each of
// its values is accepted; variants and metrics exist.
func TestSetups(t *testing.T) {
	for _, s := range Setups {
		e, err := catalog.Lookup(s.Experiment)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.WithVariants(s.Variants...); err != nil {
			t.Error(err)
		}
		for _, m := range s.Metrics {
			if _, ok := e.Metric(m); !ok {
				t.Errorf("%s: no metric %s", s.Experiment, m)
			}
		}
		for k, v := range s.Size {
			if _, err := e.With(k, v); err != nil {
				t.Error(err)
			}
		}
		for _, c := range s.Controls {
			for _, v := range c.Values {
				if _, err := e.With(c.Param, v); err != nil {
					t.Errorf("%s control %s: %v", s.Experiment, c.Param, err)
				}
			}
		}
	}
	for _, s := range Setups {
		e, _ := catalog.Lookup(s.Experiment)
		defaults, err := s.Defaults()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.Controls {
			if !slices.IsSorted(c.Values) {
				t.Errorf("%s %s: values %v not in increasing order (a slider)", s.Experiment, c.Param, c.Values)
			}
			if d := e.Params.Get(c.Param); defaults[c.Param] != d {
				t.Errorf("%s %s: the slider starts at %g, the experiment's default is %g", s.Experiment, c.Param, defaults[c.Param], d)
			}
		}
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "lock-scaling") {
		t.Errorf("Lookup of an unknown playground: %v", err)
	}
}

// TestRedraw: a redraw charts each metric for the chosen values, and a
// value that is not a control is refused.
func TestRedraw(t *testing.T) {
	s, err := Lookup("lock-scaling")
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Redraw(context.Background(), map[string]float64{"cores": 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Charts) != len(s.Metrics) || len(v.Table.Rows) != len(s.Metrics) {
		t.Fatalf("%d charts, %d table rows; want %d of each", len(v.Charts), len(v.Table.Rows), len(s.Metrics))
	}
	var opt struct{ Series []struct{ Name string } }
	if err := json.Unmarshal([]byte(v.Charts[0].Option), &opt); err != nil || len(opt.Series) < len(s.Variants) {
		t.Errorf("chart series %+v (%v)", opt.Series, err)
	}
	if h := v.HTML(); !strings.Contains(h, v.Charts[0].ID) || !strings.Contains(h, "<table") {
		t.Error("the view's HTML lacks its chart or table")
	}
	if _, err := s.Redraw(context.Background(), map[string]float64{"hz": 100}); err == nil {
		t.Error("a value that is not a control was accepted")
	}
	if _, err := s.Redraw(context.Background(), map[string]float64{"cores": 1000}); err == nil || !strings.Contains(err.Error(), "cores") {
		t.Errorf("a value out of range: %v", err)
	}
}

// BenchmarkRedraw measures one redraw of each playground at its default
// values (the target is under a second on the development machine).
func BenchmarkRedraw(b *testing.B) {
	for _, s := range Setups {
		b.Run(s.Experiment, func(b *testing.B) {
			defaults, err := s.Defaults()
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := s.Redraw(context.Background(), defaults); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
