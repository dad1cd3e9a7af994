package platforms

import (
	"math"
	"testing"
)

func TestMetricRange(t *testing.T) {
	tests := []struct {
		m      Metric
		lo, hi float64
	}{
		{Metric{Name: "t", Unit: "ms"}, 0, math.Inf(1)},
		{Metric{Name: "n", Unit: "count"}, 0, math.Inf(1)},
		{Metric{Name: "cpu", Unit: "%"}, 0, 100},
		{Metric{Name: "d", Unit: "%", Min: -100, Max: 100}, -100, 100},
		{Metric{Name: "s", Unit: "x", Min: -math.MaxFloat64}, -math.MaxFloat64, math.Inf(1)},
		{Metric{Name: "p", Unit: "prob", Max: 1}, 0, 1},
	}
	for _, tc := range tests {
		if lo, hi := tc.m.Range(); lo != tc.lo || hi != tc.hi {
			t.Errorf("%s (%s): range [%g, %g], want [%g, %g]", tc.m.Name, tc.m.Unit, lo, hi, tc.lo, tc.hi)
		}
	}
}
