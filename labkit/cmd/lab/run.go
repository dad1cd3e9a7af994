package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"synclab/labkit"
	"synclab/platforms"
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
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: lab run NAME [flags]\nlab run NAME -h also lists NAME's parameters (the -set keys) and variants on stdout.\n\nflags:\n")
		fs.PrintDefaults()
	}
	pos, err := parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return experimentHelp(stdout, pos, args, err)
	}
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
	// Failed runs (a *RunsFailedError) come with the other runs' result:
	// show it, then exit with status 1 through runErr.
	var failed *labkit.RunsFailedError
	runErr := err
	if err != nil && (res == nil || !errors.As(err, &failed) || errors.Is(err, context.Canceled)) {
		if res != nil && errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "interrupted: %d runs finished\n", len(res.Runs))
			labkit.SummaryTable(res).WriteText(stdout)
		}
		return err
	}
	wall := time.Since(start).Seconds()
	if *resultPath != "" {
		// A result with failed runs is saved incomplete: lab merge refuses it.
		if err := labkit.Save(*resultPath, res); err != nil {
			return err
		}
	}
	if opts.Shard.Count > 1 {
		path := *resultPath
		switch {
		case path != "":
		case runErr != nil:
			path = "nowhere (runs failed; the store keeps complete results only)"
		default:
			path = labkit.CachePath(labkit.ResultsDir(), e, opts.Shard)
		}
		fmt.Fprintf(stdout, "shard %s of %s: %d runs written to %s\n", opts.Shard, e.Name, len(res.Runs), path)
		if runErr != nil {
			labkit.FailuresTable(res).WriteText(stdout)
		}
		return runErr
	}
	if *report != "" {
		if err := labkit.ResultReport(res).WriteFile(*report); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "report written to %s\n", *report)
	}
	if *asJSON {
		if err := writeJSON(stdout, res, wall); err != nil {
			return err
		}
		return runErr
	}
	printResult(stdout, res, wall)
	return runErr
}

// experimentHelp answers lab run [NAME] -h: after the flags (printed by the
// flag package), NAME's description, parameters and variants. NAME is the
// positional argument before -h or, for lab run -h NAME, a later argument
// naming an experiment. It returns helpErr (exit status 0), or a usage error
// for an unknown NAME.
func experimentHelp(w io.Writer, pos, args []string, helpErr error) error {
	name := ""
	if len(pos) > 0 {
		name = pos[0]
	} else {
		for _, a := range args {
			if _, err := lookup(a); err == nil {
				name = a
				break
			}
		}
	}
	if name == "" {
		return helpErr
	}
	e, err := lookup(name)
	if err != nil {
		return usageError{err}
	}
	desc, _, _ := strings.Cut(e.Description, ". ")
	fmt.Fprintf(w, "\n%s (platform %s): %s.\n%d repeats per variant and sweep point, seed %d.\n", e.Name, e.Platform, strings.TrimSuffix(desc, "."), e.Repeats, e.Seed)
	for _, a := range e.Sweep {
		fmt.Fprintf(w, "sweeps %s over %v (-set %s=V runs that value only)\n", a.Param, a.Values, a.Param)
	}
	fmt.Fprintln(w)
	t := labkit.ParamsTable("parameters of "+e.Name+" (-set key=value; accepted: the values -set takes; plausible: the ASSUME range)", e.Params)
	t.Header[0], t.Header[1] = "key", "default"
	t.WriteText(w)
	fmt.Fprintln(w)
	labkit.VariantsTable(e).WriteText(w)
	var metrics []string
	for _, m := range e.Metrics {
		metrics = append(metrics, m.Name+" ("+m.Unit+")")
	}
	fmt.Fprintf(w, "\nmetrics: %s\n", strings.Join(metrics, ", "))
	return helpErr
}

// experimentFromFlags looks up name and applies the run flags.
func experimentFromFlags(name string, sets, variants []string, seed string, repeats int) (platforms.Experiment, error) {
	e, err := lookup(name)
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

// printResult prints the summary table, the failed runs if any, and the
// claims table.
func printResult(w io.Writer, res *labkit.Result, wall float64) {
	e := res.Experiment
	failed := res.Failures()
	runs := fmt.Sprintf("%d runs", len(res.Runs))
	if len(failed) > 0 {
		runs += fmt.Sprintf(" (%d FAILED)", len(failed))
	}
	fmt.Fprintf(w, "%s — %s\nseed %d, definition %s, code %s, %s in %.3g s\n\n", e.Name, e.Description, e.Seed, res.Hash, res.Code, runs, wall)
	labkit.SummaryTable(res).WriteText(w)
	if len(failed) > 0 {
		fmt.Fprintln(w)
		labkit.FailuresTable(res).WriteText(w)
	}
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
	// Failures lists the failed runs (left out of the metrics).
	Failures []jsonFailure `json:"failures,omitempty"`
	WallS    float64       `json:"wall_s"`
}

type jsonFailure struct {
	Variant string             `json:"variant"`
	Params  map[string]float64 `json:"params"` // the swept values of the run's point
	Repeat  int                `json:"repeat"`
	Seed    uint64             `json:"seed"`
	Error   string             `json:"error"`
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
	points := e.Points()
	if len(e.Sweep) > 0 {
		for i, p := range points {
			out.Sweep = append(out.Sweep, jsonPoint{Params: p, Variants: variantsAt(res, i)})
		}
	}
	for _, f := range res.Failures() {
		out.Failures = append(out.Failures, jsonFailure{Variant: f.Variant, Params: points[f.Point], Repeat: f.Repeat, Seed: f.Seed, Error: f.Err})
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
