package labkit

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"

	"synclab/platforms"
)

// RunSchema names the layout of RunDoc, the "schema" field of lab run -json
// and lab merge -json. A change that would break a reader of the JSON gets a
// new version; labkit/schema/run.v1.json is the JSON Schema of this one.
const RunSchema = "synclab.run/v1"

// Float is a float64 that encodes NaN and infinities as JSON null (a mean
// without runs, an interval from one run).
type Float float64

// MarshalJSON encodes x as a JSON number, or null when it is not finite.
func (x Float) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

// UnmarshalJSON reads null back as NaN ("no value"), not as the 0 that
// encoding/json would leave.
func (x *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = Float(math.NaN())
		return nil
	}
	return json.Unmarshal(b, (*float64)(x))
}

// RunDoc is a result as one JSON document (schema RunSchema): the definition
// in brief, one cell per variant and sweep point with the point's swept
// values, each metric's mean and 95% interval and the number of runs, and,
// when asked for, every run with its seed and values, so that a script can
// recompute any statistic.
type RunDoc struct {
	Schema     string `json:"schema"`
	Experiment string `json:"experiment"`
	Platform   string `json:"platform"`
	// Definition is the definition hash, Code the code version.
	Definition string `json:"definition"`
	Code       string `json:"code"`
	Seed       uint64 `json:"seed"`
	Repeats    int    `json:"repeats"`
	// Shard is "all" or "i/n"; Complete is false when runs failed (as
	// schema v1 says) or the run was interrupted.
	Shard    string `json:"shard"`
	Complete bool   `json:"complete"`
	// Params are every parameter's value at the default sweep point
	// (Result.DefaultPoint: the sweep's first point when no point has the
	// defaults) and Variants the variants' means there: for an experiment
	// without a sweep, the whole result.
	Params   map[string]float64 `json:"params"`
	Variants []DocVariant       `json:"variants"`
	// Axes are the sweep axes (empty without a sweep), Metrics the
	// metrics, in the definition's order.
	Axes    []platforms.Axis   `json:"axes"`
	Metrics []platforms.Metric `json:"metrics"`
	// Cells holds one cell per variant and sweep point that has runs, in
	// job order (variant, then point).
	Cells     []DocCell      `json:"cells"`
	Reference []DocReference `json:"reference"`
	// Failures lists the failed runs (left out of every statistic).
	Failures []DocFailure `json:"failures"`
	// Runs lists every run in job order when asked for (NewRunDoc's
	// runs), else it is left out.
	Runs []DocRun `json:"runs,omitempty"`
	// WallS is the wall time of the run, or of the store load for a stored
	// result; lab merge gives its longest shard's, the wait when the shards
	// run side by side.
	WallS float64 `json:"wall_s"`
}

// DocVariant is a variant's means and 95% interval half-widths per metric.
type DocVariant struct {
	Name    string           `json:"name"`
	Metrics map[string]Float `json:"metrics"`
	CI95    map[string]Float `json:"ci95"`
}

// DocCell summarises the runs of one variant at one sweep point.
type DocCell struct {
	Variant string `json:"variant"`
	Point   int    `json:"point"`
	// Params are the swept parameters' values at the point (the others
	// are the document's Params).
	Params map[string]float64 `json:"params"`
	// N counts the successful runs, Failed the failed ones.
	N      int `json:"n"`
	Failed int `json:"failed"`
	// Metrics are the means, CI95 the 95% interval half-widths (null with
	// fewer than two runs).
	Metrics map[string]Float `json:"metrics"`
	CI95    map[string]Float `json:"ci95"`
}

// DocReference is an article's number.
type DocReference struct {
	Variant string  `json:"variant"`
	Metric  string  `json:"metric"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	Source  string  `json:"source"`
}

// DocFailure is a failed run.
type DocFailure struct {
	Variant string             `json:"variant"`
	Point   int                `json:"point"`
	Params  map[string]float64 `json:"params"`
	Repeat  int                `json:"repeat"`
	Seed    uint64             `json:"seed"`
	Error   string             `json:"error"`
}

// DocRun is one run: its metrics, or the error it failed with.
type DocRun struct {
	Variant string           `json:"variant"`
	Point   int              `json:"point"`
	Repeat  int              `json:"repeat"`
	Seed    uint64           `json:"seed"`
	Metrics map[string]Float `json:"metrics"`
	Error   string           `json:"error,omitempty"`
}

// NewRunDoc returns r as a RunDoc, with every run when runs is set.
func NewRunDoc(r *Result, runs bool) RunDoc {
	e := r.Experiment
	def := r.DefaultPoint()
	doc := RunDoc{Schema: RunSchema, Experiment: e.Name, Platform: e.Platform, Definition: r.Hash, Code: r.Code.String(),
		Seed: e.Seed, Repeats: e.Repeats, Shard: r.Shard.String(), Complete: r.Complete && len(r.Failures()) == 0,
		Params: e.PointParams(def), Axes: e.Sweep, Metrics: e.Metrics,
		Cells: []DocCell{}, Reference: []DocReference{}, Failures: []DocFailure{}}
	if doc.Axes == nil {
		doc.Axes = []platforms.Axis{}
	}
	for _, v := range e.Variants {
		dv := DocVariant{Name: v.Name, Metrics: map[string]Float{}, CI95: map[string]Float{}}
		for _, m := range e.Metrics {
			s := r.Summary(v.Name, def, m.Name)
			dv.Metrics[m.Name], dv.CI95[m.Name] = Float(s.Mean), Float(s.Half)
		}
		doc.Variants = append(doc.Variants, dv)
	}
	for _, ref := range e.Reference {
		doc.Reference = append(doc.Reference, DocReference{Variant: ref.Variant, Metric: ref.Metric, Value: ref.Value, Unit: ref.Unit, Source: ref.Article})
	}
	r.eachCell(func(variant string, point int, cell []Run) {
		c := DocCell{Variant: variant, Point: point, Params: e.Point(point), Metrics: map[string]Float{}, CI95: map[string]Float{}}
		for _, run := range cell {
			if run.Failed() {
				c.Failed++
			}
		}
		c.N = len(cell) - c.Failed
		for _, m := range e.Metrics {
			var xs []float64
			for _, run := range cell {
				if !run.Failed() {
					xs = append(xs, run.Metrics[m.Name])
				}
			}
			s := Summarize(xs)
			c.Metrics[m.Name], c.CI95[m.Name] = Float(s.Mean), Float(s.Half)
		}
		doc.Cells = append(doc.Cells, c)
	})
	for _, run := range r.Runs {
		if run.Failed() {
			doc.Failures = append(doc.Failures, DocFailure{Variant: run.Variant, Point: run.Point, Params: e.Point(run.Point),
				Repeat: run.Repeat, Seed: run.Seed, Error: run.Err})
		}
		if runs {
			dr := DocRun{Variant: run.Variant, Point: run.Point, Repeat: run.Repeat, Seed: run.Seed, Metrics: map[string]Float{}, Error: run.Err}
			for k, x := range run.Metrics {
				dr.Metrics[k] = Float(x)
			}
			doc.Runs = append(doc.Runs, dr)
		}
	}
	return doc
}

// eachCell calls f with the runs of each variant and sweep point in job
// order, skipping cells without runs. It relies on Runs being in job order.
func (r *Result) eachCell(f func(variant string, point int, runs []Run)) {
	for i := 0; i < len(r.Runs); {
		j := i
		for j < len(r.Runs) && r.Runs[j].Variant == r.Runs[i].Variant && r.Runs[j].Point == r.Runs[i].Point {
			j++
		}
		f(r.Runs[i].Variant, r.Runs[i].Point, r.Runs[i:j])
		i = j
	}
}

// WriteJSON writes doc as indented JSON.
func (doc RunDoc) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// WriteCSV writes r's runs as CSV, one row per run in job order: experiment,
// variant, point (the sweep point's index), one column per swept parameter,
// repeat, seed, one column per metric and error. A failed run has empty
// metric cells and its error, and a metric without a value (NaN, see
// platforms.Metric.None; null in JSON) an empty cell; numbers are written
// exactly (shortest form that reads back as the same float64).
func (r *Result) WriteCSV(w io.Writer) error {
	e := r.Experiment
	cw := csv.NewWriter(w)
	header := []string{"experiment", "variant", "point"}
	for _, a := range e.Sweep {
		header = append(header, a.Param)
	}
	header = append(header, "repeat", "seed")
	for _, m := range e.Metrics {
		header = append(header, m.Name)
	}
	if err := cw.Write(append(header, "error")); err != nil {
		return err
	}
	for _, run := range r.Runs {
		row := []string{e.Name, run.Variant, strconv.Itoa(run.Point)}
		pt := e.Point(run.Point)
		for _, a := range e.Sweep {
			row = append(row, fmtCSV(pt[a.Param]))
		}
		row = append(row, strconv.Itoa(run.Repeat), strconv.FormatUint(run.Seed, 10))
		for _, m := range e.Metrics {
			cell := ""
			if x, ok := run.Metrics[m.Name]; ok && !run.Failed() {
				cell = fmtCSV(x)
			}
			row = append(row, cell)
		}
		if err := cw.Write(append(row, run.Err)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
