package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"synclab/labkit"
	"synclab/labkit/ledger"
)

// cmdClaims judges every claim of the two articles (the claims ledger,
// data/claims/claims.json) from the runs it names, run or read from the
// result store: lab claims [-json] [-fresh] [-readme FILE]. -readme
// rewrites FILE's "What the models say so far" section between the
// results markers instead.
func cmdClaims(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("claims", stdout)
	asJSON := fs.Bool("json", false, "print the judgements as JSON")
	fresh := fs.Bool("fresh", false, "ignore results in the store")
	readme := fs.String("readme", "", "rewrite the section between "+ledger.ReadmeBegin+" and "+ledger.ReadmeEnd+" in this file")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return extraArgs("claims", pos, "")
	}
	if *readme != "" && *asJSON {
		return badInput("-readme rewrites the file and prints one line: drop -json (lab claims -json prints the judgements)")
	}
	if *readme != "" { // a file that cannot take the section is refused before the experiments run
		if _, err := rewriteFile(*readme, func(doc string) (string, error) { _, err := ledger.Splice(doc, ""); return doc, err }); err != nil {
			return err
		}
	}
	l, err := ledger.Load()
	if err != nil {
		return err
	}
	results, err := l.Run(ctx, lookup, labkit.RunOptions{Fresh: *fresh, Log: stderr, Progress: terminalProgress(stderr)})
	if err != nil {
		return err
	}
	js := l.JudgeResults(results)
	switch {
	case *readme != "":
		section := l.Readme(results, js)
		changed, err := rewriteFile(*readme, func(doc string) (string, error) { return ledger.Splice(doc, section) })
		if err != nil {
			return err
		}
		state := "already up to date"
		if changed {
			state = "rewritten"
		}
		fmt.Fprintf(stdout, "%s: results section %s\n", *readme, state)
		return nil
	case *asJSON:
		return printJSON(stdout, js)
	}
	ledger.Table(js).WriteText(stdout)
	if note := ledger.CaveatNote(js); note != "" {
		fmt.Fprintf(stdout, "\n%s\n", note)
	}
	return nil
}

// rewriteFile applies splice to the content of the file at path and
// reports whether that changed it: an unchanged file is left alone, a
// changed one replaced atomically keeping its mode.
func rewriteFile(path string, splice func(doc string) (string, error)) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil {
		return false, badInput("-readme: %v", err)
	}
	doc, err := splice(string(old))
	if err != nil {
		return false, badInput("-readme %s: %v", path, err)
	}
	if bytes.Equal(old, []byte(doc)) {
		return false, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return true, labkit.WriteFileAtomic(path, []byte(doc), info.Mode().Perm())
}
