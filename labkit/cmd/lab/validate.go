package main

import (
	"context"
	"fmt"
	"io"

	"synclab/labkit"
)

// cmdValidate runs labkit's validation checks: the model against published
// measurements, each with its source, tolerance and verdict. Failing checks
// are results, printed with what they mean; -strict turns them into exit
// status 1.
func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", stdout)
	asJSON := fs.Bool("json", false, "print every check as JSON: source, published and model values, tolerance, verdict")
	strict := fs.Bool("strict", false, "exit with status 1 when a check fails")
	fresh := fs.Bool("fresh", false, "ignore results in the store")
	workers := fs.Int("workers", 0, "parallel runs (default GOMAXPROCS)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return extraArgs("validate", pos, "")
	}
	if err := checkWorkers(*workers); err != nil {
		return err
	}
	vs, err := labkit.Validate(ctx, labkit.Checks(), lookup, labkit.RunOptions{Fresh: *fresh, Workers: *workers, Log: stderr, Progress: labkit.NoProgress})
	if err != nil {
		return err
	}
	failed := 0
	for _, v := range vs {
		if !v.Pass {
			failed++
		}
	}
	if *asJSON {
		if err := printJSON(stdout, struct {
			Checks []labkit.Verdict `json:"checks"`
			Passed int              `json:"passed"`
			Failed int              `json:"failed"`
		}{vs, len(vs) - failed, failed}); err != nil {
			return err
		}
	} else {
		labkit.ValidationTable(vs).WriteText(stdout)
		fmt.Fprintf(stdout, "\n%s\n", labkit.ValidationSummary(vs))
		for _, v := range vs {
			if !v.Pass {
				fmt.Fprintf(stdout, "\n%s %s: %s\n", v.Verdict, v.ID, v.IfFails)
				if v.Err != "" {
					fmt.Fprintf(stdout, "  error: %s\n", v.Err)
				}
			}
		}
	}
	if *strict && failed > 0 {
		return fmt.Errorf("%d of %d checks fail", failed, len(vs))
	}
	return nil
}
