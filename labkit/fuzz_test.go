package labkit

import (
	"context"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"synclab/data"
)

// Seed corpora live in testdata/fuzz/NAME (crafted files among them); the
// f.Add seeds are valid inputs and their damaged versions. make test runs
// each target briefly (go test -run '^$' -fuzz '^NAME$' -fuzztime 10s).

// fuzzResults returns encoded shard results of the swept fixture.
func fuzzResults(f *testing.F) [][]byte {
	e := fixture()
	e.Repeats = 2
	e, _ = e.WithSweep("work", 50, 100)
	var out [][]byte
	for i := range 2 {
		r, err := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Shard: Shard{Index: i, Count: 2}, Progress: NoProgress})
		if err != nil {
			f.Fatal(err)
		}
		for j := range r.Runs {
			r.Runs[j].Samples = nil // keep the seeds small
		}
		b, err := Encode(r)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// A decoded result is consistent, and encoding it again gives the same
// result. Each input is tried as a file and as the payload of a file with a
// valid checksum (which random bytes would almost never have).
func FuzzDecode(f *testing.F) {
	for _, b := range fuzzResults(f) {
		f.Add(b)
		f.Add(b[headerLen:])
		f.Add(b[headerLen : len(b)-3])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, file := range [][]byte{b, encodePayload(b)} {
			r, err := Decode(file)
			if err != nil {
				continue
			}
			if err := r.check(context.Background()); err != nil {
				t.Fatalf("Decode accepted an inconsistent result: %v", err)
			}
			again, err := Encode(r)
			if err != nil {
				t.Fatal(err)
			}
			r2, err := Decode(again)
			if err != nil || RunsDiff(r, r2) != "" || r2.Hash != r.Hash || r2.Shard != r.Shard {
				t.Fatalf("re-encoded result differs: %v", err)
			}
		}
	})
}

// Merge of two decoded files (or payloads, as FuzzDecode) never panics,
// and what it returns is the whole experiment.
func FuzzMerge(f *testing.F) {
	parts := fuzzResults(f)
	f.Add(parts[0], parts[1])
	f.Add(parts[1][headerLen:], parts[0][headerLen:])
	f.Add(parts[1], parts[1])
	f.Add(parts[0], parts[0][:60])
	decode := func(b []byte) *Result {
		if r, err := Decode(b); err == nil {
			return r
		}
		r, _ := Decode(encodePayload(b))
		return r
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ra, rb := decode(a), decode(b)
		if ra == nil || rb == nil {
			return
		}
		m, err := Merge(ra, rb)
		if err != nil {
			return
		}
		total, _ := RunCount(m.Experiment)
		if m.check(context.Background()) != nil || len(m.Runs) != total || !m.Complete {
			t.Fatalf("Merge returned %d of %d runs: %v", len(m.Runs), total, m.check(context.Background()))
		}
	})
}

// The valid prefix of a journal holds accepted runs only.
func FuzzReadJournal(f *testing.F) {
	e := fixture()
	h := journalHeader{Experiment: e.Name, Hash: e.Hash(), Code: "src:x"}
	head, _ := msgpack.Marshal(h)
	start := append([]byte(journalMagic), 1, 0, 0, 0)
	good := append(start, frame(head)...)
	r, _ := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Progress: NoProgress})
	for _, run := range r.Runs[:3] {
		run.Samples = nil
		p, _ := msgpack.Marshal(run)
		good = append(good, frame(p)...)
	}
	f.Add(good)
	f.Add(good[:len(good)-4])
	check, err := newChecker(e, Shard{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		accepted := 0
		runs, end, err := readJournal(context.Background(), b, h, func(run Run) error {
			_, err := check.job(run)
			if err == nil {
				accepted++
			}
			return err
		})
		if err != nil || end < 0 || end > len(b) || len(runs) != accepted {
			t.Fatalf("readJournal: %d runs (%d accepted), end %d of %d, %v", len(runs), accepted, end, len(b), err)
		}
	})
}

// Parsed reference rows, written back as TSV, parse to the same rows.
func FuzzParseReferences(f *testing.F) {
	files, _ := fs.Glob(data.Reference, "reference/*.tsv")
	for _, name := range files {
		b, err := fs.ReadFile(data.Reference, name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("article\texperiment\tvariant\tmetric\tvalue\tunit\tquote\n# comment\na\te\tv\tm\t1.5\tms\t\"q\"\n")
	f.Add("a\te\tv\tm\tnope\tms\tq\n")
	f.Add("a\te\tv\tm\t1e3\r\n\n \t\n")
	f.Add("a\te\tv\tm\t2\tmW\tq\tthe board's, not the cores'\n")
	f.Fuzz(func(t *testing.T, text string) {
		rows, err := ParseReferences("f.tsv", text)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, r := range rows {
			b.WriteString(strings.Join([]string{r.Article, r.Experiment, r.Variant, r.Metric, strconv.FormatFloat(r.Value, 'g', -1, 64), r.Unit, r.Quote, r.Scope}, "\t") + "\n")
		}
		again, err := ParseReferences("g.tsv", b.String())
		if err != nil || len(again) != len(rows) {
			t.Fatalf("%d rows parse back to %d: %v", len(rows), len(again), err)
		}
		for i := range rows {
			x, y := rows[i], again[i]
			if math.Float64bits(x.Value) != math.Float64bits(y.Value) {
				t.Fatalf("row %d value %v parses back as %v", i, x.Value, y.Value)
			}
			x.Value, y.Value = 0, 0
			if x != y {
				t.Fatalf("row %d: %+v parses back as %+v", i, x, y)
			}
		}
	})
}

// An accepted -set setting leaves a valid definition holding the value.
func FuzzWithSettings(f *testing.F) {
	for _, s := range []string{"work=120", " noise = 0.2 ", "hz=250", "hz=251", "work=1e400", "work=NaN", "work=0x10", "=", "work", "zz=1", "work=-Inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := fixture()
		got, err := e.WithSettings(s)
		if err != nil {
			if got.Hash() != e.Hash() {
				t.Fatal("a refused setting changed the definition")
			}
			return
		}
		key, val, _ := strings.Cut(s, "=")
		v, _ := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err := got.Validate(); err != nil || got.Params.Get(strings.TrimSpace(key)) != v {
			t.Fatalf("WithSettings(%q) = %v, %v", s, got.Params.Values(), err)
		}
	})
}

// An accepted -shard value names a shard and prints back as itself.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", "4/4", "-1/2", "1/0", "0/1", "+1/2", "01/2", "9223372036854775807/9223372036854775807", "1/2/3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("error %v does not name %q", err, s)
			}
			return
		}
		if sh.check() != nil || sh.Count < 1 {
			t.Fatalf("ParseShard(%q) = %+v", s, sh)
		}
		if again, err := ParseShard(sh.String()); err != nil || again != sh {
			t.Fatalf("ParseShard(%q) = %v prints as %q", s, sh, sh.String())
		}
	})
}
