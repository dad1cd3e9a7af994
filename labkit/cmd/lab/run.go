package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"synclab/labkit"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	var sets, variants multi
	fs.Var(&sets, "set", "override a parameter: -set key=value (repeatable)")
	fs.Var(&variants, "variant", "run only this variant (repeatable)")
	seed := fs.String("seed", "", "experiment seed (default: the experiment's)")
	repeats := fs.Int("repeats", 0, "repeats per variant and sweep point (default: the experiment's)")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	report := fs.String("o", "", "write a self-contained HTML report to this file")
	shard := fs.String("shard", "", "compute share i/n of the runs and write a partial result file")
	resultPath := fs.String("result", "", "result file to write (default: the store under data/results)")
	fresh := fs.Bool("fresh", false, "ignore cached results")
	workers := fs.Int("workers", 0, "parallel runs (default GOMAXPROCS)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badInput("usage: lab run NAME [flags]; see lab list for names")
	}
	e, err := experimentFromFlags(pos[0], sets, variants, *seed, *repeats)
	if err != nil {
		return err
	}
	opts := labkit.RunOptions{Fresh: *fresh, Workers: *workers, Log: stderr}
	if *shard != "" {
		if opts.Shard, err = labkit.ParseShard(*shard); err != nil {
			return usageError{err}
		}
	}
	start := time.Now()
	res, err := labkit.RunExperiment(ctx, e, opts)
	if err != nil {
		if res != nil && errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "interrupted: %d runs finished\n", len(res.Runs))
			labkit.SummaryTable(res).WriteText(stdout)
		}
		return err
	}
	wall := time.Since(start).Seconds()
	if *resultPath != "" {
		if err := labkit.Save(*resultPath, res); err != nil {
			return err
		}
	}
	if opts.Shard.Count > 1 {
		path := *resultPath
		if path == "" {
			path = labkit.CachePath(labkit.ResultsDir(), e, opts.Shard)
		}
		fmt.Fprintf(stdout, "shard %s of %s: %d runs written to %s\n", opts.Shard, e.Name, len(res.Runs), path)
		return nil
	}
	if *report != "" {
		if err := labkit.ResultReport(res).WriteFile(*report); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "report written to %s\n", *report)
	}
	if *asJSON {
		return writeJSON(stdout, res, wall)
	}
	printResult(stdout, res, wall)
	return nil
}

// experimentFromFlags looks up name and applies the run flags.
func experimentFromFlags(name string, sets, variants []string, seed string, repeats int) (labkit.Experiment, error) {
	e, _, err := labkit.Lookup(name)
	if err != nil {
		return e, usageError{err}
	}
	if e, err = e.WithSettings(sets...); err != nil {
		return e, usageError{err}
	}
	if len(variants) > 0 {
		if e, err = e.WithVariants(variants...); err != nil {
			return e, usageError{err}
		}
	}
	if seed != "" {
		if e.Seed, err = strconv.ParseUint(seed, 0, 64); err != nil {
			return e, badInput("-seed %q: want a non-negative integer", seed)
		}
	}
	if repeats < 0 {
		return e, badInput("-repeats %d: want at least 1", repeats)
	}
	if repeats > 0 {
		e.Repeats = repeats
	}
	return e, nil
}

func printResult(w io.Writer, res *labkit.Result, wall float64) {
	e := res.Experiment
	fmt.Fprintf(w, "%s — %s\nseed %d, definition %s, code %s, %d runs in %.3g s\n\n", e.Name, e.Description, e.Seed, res.Hash, res.Code, len(res.Runs), wall)
	labkit.SummaryTable(res).WriteText(w)
	if claims := res.Claims(); len(claims) > 0 {
		fmt.Fprintln(w)
		labkit.ClaimsTable(claims).WriteText(w)
	}
}

// jsonNum is a float64 that encodes NaN and infinities as null.
type jsonNum float64

func (x jsonNum) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

type jsonVariant struct {
	Name    string             `json:"name"`
	Metrics map[string]jsonNum `json:"metrics"`
	CI95    map[string]jsonNum `json:"ci95"`
}

type jsonReference struct {
	Variant string  `json:"variant"`
	Metric  string  `json:"metric"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	Source  string  `json:"source"`
}

type jsonPoint struct {
	Params   map[string]float64 `json:"params"`
	Variants []jsonVariant      `json:"variants"`
}

type jsonRun struct {
	Experiment string             `json:"experiment"`
	Seed       uint64             `json:"seed"`
	Params     map[string]float64 `json:"params"`
	Variants   []jsonVariant      `json:"variants"`
	Reference  []jsonReference    `json:"reference"`
	// Sweep lists every sweep point when the experiment sweeps; Variants
	// then describe the default point.
	Sweep []jsonPoint `json:"sweep,omitempty"`
	WallS float64     `json:"wall_s"`
}

func variantsAt(res *labkit.Result, point int) []jsonVariant {
	var out []jsonVariant
	for _, v := range res.Experiment.Variants {
		jv := jsonVariant{Name: v.Name, Metrics: map[string]jsonNum{}, CI95: map[string]jsonNum{}}
		for _, m := range res.Experiment.Metrics {
			s := res.Summary(v.Name, point, m.Name)
			jv.Metrics[m.Name], jv.CI95[m.Name] = jsonNum(s.Mean), jsonNum(s.Half)
		}
		out = append(out, jv)
	}
	return out
}

func writeJSON(w io.Writer, res *labkit.Result, wall float64) error {
	e := res.Experiment
	out := jsonRun{Experiment: e.Name, Seed: e.Seed, Params: e.PointParams(res.DefaultPoint()), Variants: variantsAt(res, res.DefaultPoint()),
		Reference: []jsonReference{}, WallS: wall}
	for _, r := range e.Reference {
		out.Reference = append(out.Reference, jsonReference{Variant: r.Variant, Metric: r.Metric, Value: r.Value, Unit: r.Unit, Source: r.Article})
	}
	if len(e.Sweep) > 0 {
		for i, p := range e.Points() {
			out.Sweep = append(out.Sweep, jsonPoint{Params: p, Variants: variantsAt(res, i)})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func cmdMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", stderr)
	out := fs.String("o", "", "merged result file (default: the store entry that lab run reads)")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return badInput("usage: lab merge FILES... [-o OUT]")
	}
	var parts []*labkit.Result
	for _, f := range files {
		r, err := labkit.Load(f)
		if err != nil {
			return usageError{err}
		}
		parts = append(parts, r)
	}
	merged, err := labkit.Merge(parts...)
	if err != nil {
		return usageError{err}
	}
	path := *out
	if path == "" {
		path = labkit.CachePath(labkit.ResultsDir(), merged.Experiment, labkit.Shard{})
	}
	if err := labkit.Save(path, merged); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "merged %d shards (%d runs) into %s\n\n", len(parts), len(merged.Runs), path)
	printResult(stdout, merged, merged.WallS)
	return nil
}
