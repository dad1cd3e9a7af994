// Command lab runs SyncLab experiments from the command line. `lab help`
// lists the commands (the usage constant below) and `lab run NAME -h` the
// run flags with NAME's parameters and variants.
//
// Exit status: 0 success, 1 failure while running (including runs that
// failed, e.g. a simulated deadlock: lab run prints them with the other
// runs' results), 2 bad input, 128+n stopped by signal n (130 Ctrl-C,
// 143 SIGTERM), as a shell reports a process the signal killed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"synclab/labkit/catalog"
	"synclab/platforms"
)

func main() {
	// SIGINT (Ctrl-C) and SIGTERM (a batch scheduler) stop the work; the
	// finished runs are kept (the same command resumes). A second signal
	// kills at once: the handler is gone by then.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		signal.Stop(sigs)
		cancel(stoppedBy{s.(syscall.Signal)})
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	os.Exit(code)
}

// stoppedBy is the cause of a run's cancellation by a signal.
type stoppedBy struct{ sig syscall.Signal }

func (s stoppedBy) Error() string {
	if s.sig == syscall.SIGINT {
		return "stopped by SIGINT (Ctrl-C)"
	}
	return "stopped by SIGTERM"
}

// Is makes a run that reports its cause (the runner does) read as cancelled.
func (s stoppedBy) Is(target error) bool { return target == context.Canceled }

// interruptedStatus is the exit status of a run that ctx stopped: 128 plus
// the signal's number, and Ctrl-C's 130 when no signal did (a test's cancel).
func interruptedStatus(ctx context.Context) int {
	var s stoppedBy
	if errors.As(context.Cause(ctx), &s) {
		return 128 + int(s.sig)
	}
	return exitInterrupted
}

// Exit statuses.
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitInterrupted = 128 + int(syscall.SIGINT)
)

const usage = `usage: lab COMMAND [ARGS]
  list                                   experiments with a one-line description
  run NAME [flags]                       run an experiment (lab run NAME -h: flags, parameters, variants)
  help COMMAND [NAME]                    the flags of a command (lab help run NAME: also NAME's parameters)
  merge FILES... [-o OUT] [-json [-runs]]
                                         combine the result files of lab run -shard
  platforms [NAME] [-md]                 parameters of the platforms, a platform or an experiment: value, unit, provenance, description, source (-md: Markdown)
  platforms -readme FILE                 rewrite FILE's parameter tables between <!-- params:begin/end -->
  bench [-json] [-o FILE] [flags]        speed figures, timed against the peer simulators (lab bench -h: flags)
  validate [-json] [-strict]             the models against published measurements
  claims [-json] [-fresh]                every claim of both articles with its computed verdict
  claims -readme FILE                    rewrite FILE's results section between <!-- results:begin/end -->
  calibrate FILE.csv -fit key,... [-json] [-o PROFILE]
                                         fit ASSUME parameters to a board's measurements (lab run -profile PROFILE)
  report NOTEBOOK... -o DIR              execute notebooks headless and write their HTML
`

// experiments is the catalog the commands use (the CLI's tests add their
// fixtures to it).
var experiments = catalog.All

// lookup returns the named experiment of experiments().
func lookup(name string) (platforms.Experiment, error) { return catalog.Find(experiments(), name) }

// usageError marks bad input (exit status 2).
type usageError struct{ error }

// printJSON writes v to w as indented JSON, as every -json output is.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// badInput is bad input (exit status 2) with a message naming it.
func badInput(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// run executes the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "list":
		err = cmdList(rest, stdout, stderr)
	case "run":
		err = cmdRun(ctx, rest, stdout, stderr)
	case "merge":
		err = cmdMerge(rest, stdout, stderr)
	case "platforms":
		err = cmdPlatforms(rest, stdout, stderr)
	case "bench":
		err = cmdBench(ctx, rest, stdout, stderr)
	case "claims":
		err = cmdClaims(ctx, rest, stdout, stderr)
	case "report":
		err = cmdReport(ctx, rest, stdout, stderr)
	case "validate":
		err = cmdValidate(ctx, rest, stdout, stderr)
	case "calibrate":
		err = cmdCalibrate(ctx, rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		switch {
		case cmd != "help" || len(rest) == 0:
			fmt.Fprint(stdout, usage)
		case len(rest) > 2 || len(rest) == 2 && rest[0] != "run":
			// Only run takes a NAME: a word after any other command
			// would be dropped, and the reader told nothing.
			err = badInput("help: unexpected arguments %q (lab help COMMAND, or lab help run NAME)", rest[1:])
		default: // lab help run [NAME] is lab run [NAME] -h
			return run(ctx, append(slices.Clone(rest), "-h"), stdout, stderr)
		}
	default:
		err = badInput("unknown command %q\n%s", cmd, usage)
	}
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "lab:", err)
		return exitUsage
	case errors.Is(err, context.Canceled):
		if cause := context.Cause(ctx); !strings.Contains(err.Error(), cause.Error()) {
			err = fmt.Errorf("%w (%v)", err, cause)
		}
		fmt.Fprintln(stderr, "lab:", err)
		return interruptedStatus(ctx)
	default:
		fmt.Fprintln(stderr, "lab:", err)
		return exitFail
	}
}

// parse parses flags that may come before, between or after positional
// arguments, and returns the positional ones. On -h it prints the usage and
// returns flag.ErrHelp with the positional arguments seen before it. A bad
// flag is bad input, said once (the flag package would print it before the
// whole usage, and run again after it).
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	out, usage := fs.Output(), fs.Usage // newFlags' FlagSet always has a Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				usage()
				return pos, err
			}
			return nil, badInput("%v (%s -h lists its flags)", flagValueError(fs, err), fs.Name())
		}
		if fs.NArg() == 0 {
			return pos, emptyValue(fs)
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// checkWorkers refuses a negative -workers (0 means GOMAXPROCS).
func checkWorkers(n int) error {
	if n < 0 {
		return badInput("-workers %d: want at least 1 (0: GOMAXPROCS)", n)
	}
	return nil
}

// emptyValue refuses a flag given an empty value (-o "", as a script with an
// unset variable writes it), which would otherwise silently mean "not given".
func emptyValue(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && f.Value.String() == "" {
			err = badInput("-%s: empty value (leave the flag out, or give it a value)", f.Name)
		}
	})
	return err
}

// commaList splits the value of a comma-separated flag (-fit a,b) and
// refuses an empty item ("a,", "a,,b"), which names nothing, and an item
// named twice.
func commaList(flag, value string) ([]string, error) {
	items := strings.Split(value, ",")
	if slices.Contains(items, "") {
		return nil, badInput("-%s %s: an empty name in the list (want name,name,...)", flag, value)
	}
	for i, it := range items {
		if slices.Contains(items[:i], it) {
			return nil, badInput("-%s %s: %s named twice", flag, value, it)
		}
	}
	return items, nil
}

// listFlag is the value of a comma-separated flag that may also be
// repeated, each time adding its names: "-fit a,b" and "-fit a -fit b" name
// the same two (where the flag package would keep b alone). A default is
// replaced by the first value given; commaList checks the names.
type listFlag struct {
	value string
	given bool
}

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return l.value
}

func (l *listFlag) Set(s string) error {
	if l.given {
		l.value += "," + s
	} else {
		l.value, l.given = s, true
	}
	return nil
}

// flagParseError matches the flag package's errors for a value its type
// cannot parse (Go 1.26): the value and the flag's name.
var flagParseError = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-(\S+): parse error$`)

// flagValueError says what a flag wants in place of the flag package's
// bare "parse error" ("-repeats \"2.5\": want a whole number").
func flagValueError(fs *flag.FlagSet, err error) error {
	m := flagParseError.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	val, name := m[1], m[2]
	f := fs.Lookup(name)
	if f == nil {
		return err
	}
	g, ok := f.Value.(flag.Getter) // the flag package's own types, the only ones failing with "parse error"
	if !ok {
		return err
	}
	want := "a valid value"
	switch g.Get().(type) {
	case int, int64:
		want = "a whole number"
	case uint, uint64:
		want = "a non-negative whole number"
	case float64:
		want = "a number"
	case bool:
		want = "true or false"
	case time.Duration:
		want = "a duration such as 90s or 1m30s"
	}
	return fmt.Errorf("-%s %q: want %s", name, val, want)
}

// extraArgs is the bad input of arguments that the command cmd does not
// take, named, with a hint when there is one.
func extraArgs(cmd string, args []string, hint string) error {
	msg := fmt.Sprintf("%s: unexpected argument %q", cmd, args[0])
	if len(args) > 1 {
		msg = fmt.Sprintf("%s: unexpected arguments %q", cmd, args)
	}
	if hint != "" {
		msg += " (" + hint + ")"
	}
	return badInput("%s", msg)
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

// newFlags returns the flag set of the command name, whose -h prints the
// command's lines of the usage summary, then its flags (a command with
// more to say sets its own Usage).
func newFlags(name string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("lab "+name, flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprint(stdout, commandUsage(name))
		fmt.Fprintln(stdout, "\nflags:")
		fs.PrintDefaults()
	}
	return fs
}

// commandUsage returns the lines of usage about the command name: each
// synopsis as "usage: lab ...", its description indented below it.
func commandUsage(name string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(usage, "\n")[1:] {
		text := strings.TrimLeft(line, " ")
		if len(line)-len(text) == 2 { // a command's first line; deeper: its continuation
			in = text == name || strings.HasPrefix(text, name+" ")
		}
		if !in || text == "" {
			continue
		}
		if len(line)-len(text) == 2 {
			synopsis, _, _ := strings.Cut(text, "  ")
			b.WriteString("usage: lab " + synopsis + "\n")
			text = strings.TrimLeft(strings.TrimPrefix(text, synopsis), " ")
		}
		if text != "" {
			b.WriteString("  " + text + "\n")
		}
	}
	return b.String()
}
