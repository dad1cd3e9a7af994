package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"synclab/labkit"
	"synclab/labkit/catalog"
	"synclab/platforms"
)

// runSchema is labkit/schema/run.v1.json, resolved.
var runSchema = sync.OnceValues(func() (*jsonschema.Resolved, error) {
	b, err := os.ReadFile(filepath.Join("..", "..", "schema", "run.v1.json"))
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
})

// validate checks out against the schema and returns it decoded.
func validate(t *testing.T, name string, out []byte) labkit.RunDoc {
	t.Helper()
	rs, err := runSchema()
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	var inst any
	if err := json.Unmarshal(out, &inst); err != nil {
		t.Fatalf("%s: not JSON: %v", name, err)
	}
	if err := rs.Validate(inst); err != nil {
		t.Fatalf("%s: output does not follow labkit/schema/run.v1.json: %v", name, err)
	}
	var doc labkit.RunDoc
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return doc
}

// shortSweep returns e with short runs and a sweep of two points over its
// run length (an experiment that sweeps keeps its sweep, shortened); one
// without a run length (its runs are short anyway) sweeps its first ASSUME
// parameter over the ends of its plausible range.
func shortSweep(e platforms.Experiment) (platforms.Experiment, error) {
	short := map[string][]float64{"iterations": {500, 1000}, "rounds": {10, 20}, "hold_us": {500, 1000}, "duration_ms": {3, 6}}
	for _, k := range []string{"iterations", "rounds", "hold_us", "duration_ms"} {
		if _, ok := e.Params.Lookup(k); !ok {
			continue
		}
		if len(e.Sweep) > 0 {
			return e.With(k, short[k][0])
		}
		return e.WithSweep(k, short[k]...)
	}
	for _, p := range e.Params {
		if p.Prov == platforms.ASSUME && p.Low < p.High && len(e.Sweep) == 0 {
			return e.WithSweep(p.Key, p.Low, p.High)
		}
	}
	return e, fmt.Errorf("%s: no run-length or ASSUME parameter to sweep; add one to shortSweep", e.Name)
}

// Every catalog experiment, run with a sweep: lab run -json follows the
// schema and holds points x variants cells whose values are the summary
// table's, and the rows of lab run -csv average to the JSON's means.
func TestJSONAndCSVOfEveryExperiment(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every experiment")
	}
	dir := t.TempDir()
	t.Setenv("SYNCLAB_RESULTS", dir)
	var exps []platforms.Experiment
	for _, e := range catalog.All() {
		s, err := shortSweep(e)
		if err != nil {
			t.Fatal(err)
		}
		exps = append(exps, s)
	}
	all := experiments
	experiments = func() []platforms.Experiment { return exps }
	t.Cleanup(func() { experiments = all })

	for _, e := range exps {
		file := filepath.Join(dir, e.Name+".msgpack")
		csvFile := filepath.Join(dir, e.Name+".csv")
		code, out, stderr := runCLI(t, "run", e.Name, "-json", "-runs", "-repeats", "2", "-result", file, "-csv", csvFile)
		if code != 0 && code != 1 {
			t.Fatalf("%s: exit %d: %s", e.Name, code, stderr)
		}
		doc := validate(t, e.Name, []byte(out))
		res, err := labkit.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		points := e.NumPoints()
		if points < 2 || len(doc.Cells) != points*len(e.Variants) || len(doc.Runs) != 2*len(doc.Cells) {
			t.Fatalf("%s: %d cells, %d runs; want %d points x %d variants, 2 runs each", e.Name, len(doc.Cells), len(doc.Runs), points, len(e.Variants))
		}
		// The summary table: a row per point and metric (the swept values,
		// then "metric (unit)"), a column per variant.
		// A row whose values would need scientific notation is shown in a
		// smaller SI unit: "avg_lock_wait_ms (µs, not ms)"; rows are keyed by the
		// metric's name, and the unit shown gives the factor.
		table := labkit.SummaryTable(res)
		rows := map[string][]string{}
		for _, row := range table.Rows {
			key := slices.Clone(row[:len(e.Sweep)+1])
			key[len(e.Sweep)], _, _ = strings.Cut(key[len(e.Sweep)], " (")
			rows[strings.Join(key, "/")] = row
		}
		csvMeans := csvSummaries(t, e, csvFile)
		for _, c := range doc.Cells {
			var lead []string
			for _, a := range e.Sweep {
				lead = append(lead, labkit.Num(c.Params[a.Param]))
			}
			col := len(e.Sweep) + 1 + slices.Index(e.VariantNames(), c.Variant)
			for _, m := range e.Metrics {
				mean, ci := float64(c.Metrics[m.Name]), float64(c.CI95[m.Name])
				row, ok := rows[strings.Join(append(slices.Clone(lead), m.Name), "/")]
				if !ok {
					t.Fatalf("%s: no table row for %v %s", e.Name, lead, m.Name)
				}
				f := 1.0
				if m.Unit != "" {
					shown := strings.TrimSuffix(strings.TrimPrefix(row[len(e.Sweep)], m.Name+" ("), ")")
					shown, _, _ = strings.Cut(shown, ", not ") // "µs, not ms"
					if f = unitFactor(m.Unit, shown); f == 0 {
						t.Fatalf("%s: row %q shows %s in %q", e.Name, row[len(e.Sweep)], m.Unit, shown)
					}
				}
				want := ""
				if c.N > 0 {
					// The JSON's mean and interval, with the range of
					// its runs, which the table shows instead of an
					// interval that crosses zero where no run does.
					s := labkit.Summary{N: c.N, Mean: f * mean, Half: math.NaN(), Min: math.Inf(1), Max: math.Inf(-1)}
					if c.N > 1 {
						s.Half = f * ci
					}
					for _, r := range doc.Runs {
						if v := float64(r.Metrics[m.Name]); r.Variant == c.Variant && r.Point == c.Point && r.Error == "" && !math.IsNaN(v) {
							s.Min, s.Max = min(s.Min, f*v), max(s.Max, f*v)
						}
					}
					want = labkit.MeanCI(s)
				}
				if got := row[col]; got != want {
					t.Errorf("%s: cell %s/%d %s = %s, the table says %s", e.Name, c.Variant, c.Point, m.Name, want, got)
				}
				key := fmt.Sprintf("%s/%d/%s", c.Variant, c.Point, m.Name)
				if s := labkit.Summarize(csvMeans[key]); s.N != c.N || c.N > 0 && math.Float64bits(s.Mean) != math.Float64bits(mean) {
					t.Errorf("%s: CSV rows of %s average %v over %d, JSON %v over %d", e.Name, key, s.Mean, s.N, mean, c.N)
				}
			}
		}
	}
}

// csvSummaries reads lab run -csv output: the values of each successful
// run, keyed variant/point/metric.
func csvSummaries(t *testing.T, e platforms.Experiment, path string) map[string][]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	out := map[string][]float64{}
	for _, row := range rows[1:] {
		if row[col["experiment"]] != e.Name {
			t.Fatalf("CSV row of %s in %s's file", row[0], e.Name)
		}
		if row[col["error"]] != "" {
			continue
		}
		for _, m := range e.Metrics {
			x := math.NaN() // an empty cell: a metric with no value in this run
			if cell := row[col[m.Name]]; cell != "" {
				if x, err = strconv.ParseFloat(cell, 64); err != nil {
					t.Fatalf("%s: %s cell %q: %v", e.Name, m.Name, cell, err)
				}
			}
			key := row[col["variant"]] + "/" + row[col["point"]] + "/" + m.Name
			out[key] = append(out[key], x)
		}
	}
	return out
}

// unitFactor is what a value in unit from is multiplied by to be written in
// unit to: 1 when they are the same, 1000 from "ms" to "µs"; 0 when to is
// not from with another SI prefix.
func unitFactor(from, to string) float64 {
	if from == to {
		return 1
	}
	prefix := map[string]int{"n": -9, "u": -6, "µ": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9} // powers of ten
	for _, base := range []string{"s", "W", "J", "Hz", "B"} {
		pf, ok1 := strings.CutSuffix(from, base)
		pt, ok2 := strings.CutSuffix(to, base)
		a, ok3 := prefix[pf]
		b, ok4 := prefix[pt]
		if ok1 && ok2 && ok3 && ok4 {
			return math.Pow10(a - b)
		}
	}
	return 0
}
