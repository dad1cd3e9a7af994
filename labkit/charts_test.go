package labkit

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
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
