package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"synclab/labkit"
	"synclab/labkit/nbexport"
)

// cmdReport executes notebooks headless and writes their reports: one
// line per file written on stdout, and, on a terminal, a line on stderr
// that says which notebook runs and for how long.
func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", stdout)
	out := fs.String("o", "", "directory for the reports (NAME.html per notebook NAME.ipynb)")
	var params multi
	fs.Var(&params, "p", "run with a parameter set: -p name=value (repeatable; lists as a,b,c); see the notebook's cell tagged parameters")
	code := fs.Bool("code", false, "show every code cell (by default only cells tagged show-code)")
	pdf := fs.Bool("pdf", false, "also print each report to NAME.pdf with headless Chromium")
	jobs := fs.Int("j", runtime.NumCPU(), "notebooks executed at once")
	fs.Usage = func() {
		fmt.Fprint(stdout, "usage: lab report NOTEBOOK... -o DIR [-p name=value]... [-code] [-pdf] [-j N]\n\nflags:\n")
		fs.PrintDefaults()
	}
	notebooks, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(notebooks) == 0 || *out == "" {
		return badInput("usage: lab report NOTEBOOK... -o DIR [-p name=value]... [-code] [-pdf] [-j N]")
	}
	if *jobs < 1 {
		return badInput("-j %d: want at least 1 notebook at a time", *jobs)
	}
	opts := nbexport.Options{OutDir: *out, ShowCode: *code, PDF: *pdf, Jobs: *jobs, Code: labkit.CurrentCode().String(), Params: map[string]string{}, Defaults: defaults}
	for _, p := range params {
		k, v, err := nbexport.ParseSetting(p)
		if err != nil {
			return usageError{err}
		}
		if prev, dup := opts.Params[k]; dup {
			return badInput("-p %s=%s and -p %s=%s: %s given twice", k, prev, k, v, k)
		}
		opts.Params[k] = v
	}
	status := newStatusLine(stderr)
	defer status.stop()
	var running []string // in the order they started
	done := 0
	opts.Progress = func(e nbexport.Event) {
		name := filepath.Base(e.Notebook)
		if e.Note != "" {
			status.say(name + ": " + e.Note)
			return
		}
		if e.Files == nil {
			running = append(running, name)
		} else {
			running = slices.DeleteFunc(running, func(n string) bool { return n == name })
			done++
		}
		if len(running) > 0 {
			status.show(fmt.Sprintf("[%d/%d done] running %s", done, e.Total, strings.Join(running, ", ")))
		} else {
			status.show("")
		}
		if e.Files == nil {
			return
		}
		for _, f := range e.Files {
			size := ""
			if fi, err := os.Stat(f); err == nil {
				size = fmt.Sprintf(" (%s)", labkit.Quantity(float64(fi.Size()), "B"))
			}
			fmt.Fprintf(stdout, "wrote %s%s, %s in %s\n", f, size, name, e.Elapsed.Round(100*time.Millisecond))
		}
	}
	err = nbexport.Export(ctx, notebooks, opts)
	var bad *nbexport.BadInputError
	if errors.As(err, &bad) {
		return usageError{err}
	}
	return err
}

// statusLine keeps one line of status on a terminal, with the seconds
// since it was set, redrawn every second; elsewhere it shows nothing.
type statusLine struct {
	w    io.Writer
	mu   sync.Mutex
	text string
	set  time.Time
	done chan struct{}
}

func newStatusLine(w io.Writer) *statusLine {
	s := &statusLine{w: w}
	if f, ok := w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return s
	}
	s.done = make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.draw()
			}
		}
	}()
	return s
}

// show replaces the status text ("" clears the line).
func (s *statusLine) show(text string) {
	s.mu.Lock()
	s.text, s.set = text, time.Now()
	s.mu.Unlock()
	s.draw()
}

// say prints a line of its own (on a terminal, in place of the status,
// which is drawn again below it).
func (s *statusLine) say(line string) {
	s.mu.Lock()
	if s.done != nil {
		fmt.Fprint(s.w, "\r\033[K")
	}
	fmt.Fprintln(s.w, line)
	s.mu.Unlock()
	s.draw()
}

func (s *statusLine) draw() {
	if s.done == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprint(s.w, "\r\033[K")
	if s.text != "" {
		fmt.Fprintf(s.w, "%s, %s", s.text, time.Since(s.set).Round(time.Second))
	}
}

func (s *statusLine) stop() {
	if s.done != nil {
		s.show("")
		close(s.done)
	}
}

// defaults gives the catalog's parameter values of an experiment, for a
// report's stamp (nbexport.Options.Defaults).
func defaults(experiment string) (map[string]float64, bool) {
	e, err := lookup(experiment)
	if err != nil {
		return nil, false
	}
	return e.Params.Values(), true
}
