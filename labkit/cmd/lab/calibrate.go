package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"synclab/labkit"
	"synclab/labkit/internal/plural"
)

// cmdCalibrate fits ASSUME parameters to a measurement CSV (or to an
// article's reference table, data/reference/*.tsv) and writes a profile.
func cmdCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("calibrate", stdout)
	var fit, metrics listFlag
	fs.Var(&fit, "fit", "ASSUME parameters to fit, comma-separated (or the flag repeated); one that takes only some values (monitor_loss: 0 or 1) is fitted by fitting the others at each value and keeping the best")
	var sets multi
	fs.Var(&sets, "set", "setting applied to every run before each row's own: -set key=value (repeatable)")
	asJSON := fs.Bool("json", false, `print {"params": {"key": {"value", "low", "high", ...}}, "residuals": [...], ...} as JSON`)
	out := fs.String("o", "", "write the profile (measurements and fit) to this file, for lab run -profile")
	repeats := fs.Int("repeats", 0, "repeats per run (default: each experiment's)")
	maxEvals := fs.Int("max-evals", 200, "model evaluations the search may use (the report at the fit takes 1 more, and 2 per fitted parameter for the intervals)")
	fs.Var(&metrics, "metrics", "use only the rows of these metrics, comma-separated or the flag repeated (default: all)")
	workers := fs.Int("workers", 0, "parallel runs (default GOMAXPROCS)")
	fs.Usage = func() {
		fmt.Fprint(stdout, "usage: lab calibrate FILE.csv -fit key,key,... [flags]\n"+
			"FILE has the header experiment,variant,settings,metric,value (settings: key=value;key=value, the keys of lab run -set);\n"+
			"an article's table data/reference/NAME.tsv is read as measurements at default settings.\n\nflags:\n")
		fs.PrintDefaults()
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || !fit.given {
		return badInput("usage: lab calibrate FILE.csv -fit key,key,... [-set key=value] [-json] [-o PROFILE]")
	}
	if *repeats < 0 {
		return badInput("-repeats %d: want at least 1 (0: each experiment's)", *repeats)
	}
	if *maxEvals < 1 {
		return badInput("-max-evals %d: want at least 1", *maxEvals)
	}
	if err := checkWorkers(*workers); err != nil {
		return err
	}
	if *out != "" { // before the fit, which takes a minute
		if err := labkit.CheckOutput(*out); err != nil {
			return badInput("-o: %v", err)
		}
	}
	keys, err := commaList("fit", fit.value)
	if err != nil {
		return err
	}
	var keep []string
	if metrics.given {
		if keep, err = commaList("metrics", metrics.value); err != nil {
			return err
		}
	}
	ms, err := readMeasurements(pos[0])
	if err != nil {
		return usageError{err}
	}
	if keep != nil {
		for _, k := range keep {
			if !slices.ContainsFunc(ms, func(m labkit.Measurement) bool { return m.Metric == k }) {
				return badInput("-metrics %s: no row of %s measures %s", metrics.value, pos[0], k)
			}
		}
		ms = slices.DeleteFunc(ms, func(m labkit.Measurement) bool { return !slices.Contains(keep, m.Metric) })
	}
	opt := labkit.CalibrateOptions{Fit: keys, Settings: sets, Repeats: *repeats, MaxEvals: *maxEvals, Workers: *workers}
	f, err := labkit.Calibrate(ctx, ms, lookup, opt)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return usageError{err}
	}
	if *out != "" {
		name := strings.TrimSuffix(filepath.Base(pos[0]), filepath.Ext(pos[0]))
		if err := labkit.NewProfile(name, ms, f).Save(*out); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "profile written to %s\n", *out)
	}
	if *asJSON {
		return printJSON(stdout, f)
	}
	f.FitTable().WriteText(stdout)
	fmt.Fprintln(stdout)
	f.ResidualTable().WriteText(stdout)
	fmt.Fprintf(stdout, "\n%s, %s, sum of squared relative residuals %.4g, %s.\n",
		plural.Count(len(ms), "measurement"), plural.Count(f.Evaluations, "evaluation"), f.SSR, plural.Count(f.DOF, "degree")+" of freedom")
	for _, k := range f.Keys {
		p := f.Params[k]
		switch p.Outside {
		case "plausible":
			fmt.Fprintf(stdout, "%s = %s leaves its plausible range %s – %s.\n", k, labkit.Num(p.Value), labkit.Num(p.PlausibleLow), labkit.Num(p.PlausibleHigh))
		case "accepted":
			fmt.Fprintf(stdout, "%s = %s is within 1%% of the end of its accepted range %s – %s: the data want it further.\n", k, labkit.Num(p.Value), labkit.Num(p.Min), labkit.Num(p.Max))
		}
	}
	var pinned, loose []string
	for _, k := range f.Keys {
		if p := f.Params[k]; p.Identifiable {
			pinned = append(pinned, k)
		} else {
			loose = append(loose, fmt.Sprintf("%s = %s (cited %s)", k, labkit.Num(p.Value), labkit.Num(p.Start)))
		}
	}
	if len(pinned) > 0 && len(loose) > 0 {
		// A profile applies the pinned values and keeps the others cited:
		// a model the fit never evaluated.
		fmt.Fprintf(stdout, "%s was fitted together with %s, which a profile keeps at the cited value; for values that fit beside the cited ones, run lab calibrate again with -fit %s.\n",
			strings.Join(pinned, ", "), strings.Join(loose, ", "), strings.Join(pinned, ","))
	}
	return nil
}

// readMeasurements reads a measurement CSV, or an article's reference TSV
// (recognised by its header) as measurements at default settings.
func readMeasurements(path string) ([]labkit.Measurement, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if bytes.Contains(b, []byte("article\texperiment\t")) {
		rows, err := labkit.ParseReferences(path, string(b))
		if err != nil {
			return nil, err
		}
		return labkit.MeasurementsFromReferences(rows), nil
	}
	ms, err := labkit.ReadMeasurements(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ms, nil
}
