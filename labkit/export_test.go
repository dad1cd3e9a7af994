package labkit

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"synclab/platforms"
)

// csvMeans parses WriteCSV's output and returns each (variant, point,
// metric)'s summary over the successful rows, keyed "variant/point/metric".
func csvMeans(t *testing.T, e platforms.Experiment, b []byte) (map[string]Summary, int) {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("CSV: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	values := map[string][]float64{}
	for _, row := range rows[1:] {
		if row[col["error"]] != "" {
			continue
		}
		for _, m := range e.Metrics {
			x, err := strconv.ParseFloat(row[col[m.Name]], 64)
			if err != nil {
				t.Fatalf("CSV cell %s: %v", m.Name, err)
			}
			key := row[col["variant"]] + "/" + row[col["point"]] + "/" + m.Name
			values[key] = append(values[key], x)
		}
	}
	out := map[string]Summary{}
	for k, xs := range values {
		out[k] = Summarize(xs)
	}
	return out, len(rows) - 1
}

// sameFloat reports whether a JSON value (nil for null) is x bit for bit
// (NaN as null).
func sameFloat(v *float64, x float64) bool {
	if v == nil {
		return math.IsNaN(x) || math.IsInf(x, 0)
	}
	return math.Float64bits(*v) == math.Float64bits(x)
}

func TestRunDocAndCSVAgree(t *testing.T) {
	res := failingFixture(t, func(s platforms.RunSpec) bool { return s.Variant == "slow" && s.Params["work"] == 200 && s.Repeat < 2 })
	var js bytes.Buffer
	if err := NewRunDoc(res, true).WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema string
		Cells  []struct {
			Variant       string
			Point, N      int
			Failed        int
			Params        map[string]float64
			Metrics, CI95 map[string]*float64
		}
		Failures []struct{ Variant, Error string }
		Runs     []struct {
			Seed    uint64
			Metrics map[string]*float64
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != RunSchema || len(doc.Cells) != 6 || len(doc.Failures) != 2 || len(doc.Runs) != 30 {
		t.Fatalf("doc: schema %s, %d cells, %d failures, %d runs", doc.Schema, len(doc.Cells), len(doc.Failures), len(doc.Runs))
	}
	var csvOut bytes.Buffer
	if err := res.WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	means, rows := csvMeans(t, res.Experiment, csvOut.Bytes())
	if rows != 30 || !strings.HasPrefix(csvOut.String(), "experiment,variant,point,work,repeat,seed,time_ms,ops_s,error\n") {
		t.Fatalf("CSV: %d rows\n%s", rows, csvOut.String()[:200])
	}
	i := 0
	for _, v := range res.Experiment.Variants {
		for p, pt := range res.Experiment.Points() {
			c := doc.Cells[i]
			i++
			if c.Variant != v.Name || c.Point != p || c.Params["work"] != pt["work"] || c.N+c.Failed != 5 {
				t.Fatalf("cell %d: %+v", i, c)
			}
			for _, m := range res.Experiment.Metrics {
				s := res.Summary(v.Name, p, m.Name)
				if c.N != s.N || !sameFloat(c.Metrics[m.Name], s.Mean) || !sameFloat(c.CI95[m.Name], s.Half) {
					t.Errorf("cell %s/%d %s: %v ± %v over %d, the table's %v ± %v over %d", v.Name, p, m.Name, c.Metrics[m.Name], c.CI95[m.Name], c.N, s.Mean, s.Half, s.N)
				}
				if cs := means[fmt.Sprintf("%s/%d/%s", v.Name, p, m.Name)]; cs.Mean != s.Mean || cs.N != s.N {
					t.Errorf("CSV rows of %s/%d %s average %v over %d, JSON %v over %d", v.Name, p, m.Name, cs.Mean, cs.N, s.Mean, s.N)
				}
			}
		}
	}
	if r := doc.Runs[7]; r.Seed != res.Runs[7].Seed || *r.Metrics["ops_s"] != res.Runs[7].Metrics["ops_s"] {
		t.Errorf("run 7: %+v", r)
	}
}

// A result as CSV, one row per run (here one variant at two sweep points,
// two repeats). A metric without a value (NaN) is an empty cell.
func ExampleResult_WriteCSV() {
	e := platforms.Experiment{
		Name: "double", Platform: "example", Repeats: 2, Seed: 1,
		Params:   platforms.Params{{Key: "n", Value: 1, Prov: platforms.CODE, Source: "the example", Min: 1, Max: 10}},
		Sweep:    []platforms.Axis{{Param: "n", Values: []float64{1, 2}}},
		Variants: []platforms.Variant{{Name: "x2"}},
		Metrics:  []platforms.Metric{{Name: "twice", Unit: "1"}, {Name: "less", Unit: "1", None: "at n = 1"}},
		Run: func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
			n := spec.Params["n"]
			less := n - 1
			if n == 1 {
				less = math.NaN()
			}
			return platforms.RunResult{Metrics: map[string]float64{"twice": 2*n + float64(spec.Repeat)/10, "less": less}}, nil
		},
	}
	res, err := Execute(context.Background(), e, RunOptions{Progress: NoProgress})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range res.Runs {
		res.Runs[i].Seed = 0 // long numbers, left out of the example
	}
	res.WriteCSV(os.Stdout)
	// Output:
	// experiment,variant,point,n,repeat,seed,twice,less,error
	// double,x2,0,1,0,0,2,,
	// double,x2,0,1,1,0,2.1,,
	// double,x2,1,2,0,0,4,1,
	// double,x2,1,2,1,0,4.1,1,
}

// Float writes every value that is not a number JSON can carry as null.
func TestFloatNullsWhatJSONCannotCarry(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{{1.5, "1.5"}, {0, "0"}, {math.NaN(), "null"}, {math.Inf(1), "null"}, {math.Inf(-1), "null"}} {
		b, err := json.Marshal(Float(tc.x))
		if err != nil || string(b) != tc.want {
			t.Errorf("Float(%g) = %s, %v; want %s", tc.x, b, err, tc.want)
		}
	}
	// Read back, null is NaN (no value), in a map as on its own.
	var m map[string]Float
	if err := json.Unmarshal([]byte(`{"a": null, "b": 2.5}`), &m); err != nil || !math.IsNaN(float64(m["a"])) || m["b"] != 2.5 {
		t.Errorf("unmarshal: %v, %v; want a NaN, b 2.5", m, err)
	}
}
