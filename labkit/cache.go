package labkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"synclab/platforms"
)

// RunExperiment runs e with its run function (e.Run) through the result
// store. The store keys a result by e's definition hash (platforms.Experiment.
// Hash) and the version of the code that computes it (CodeVersion.Key, the
// hash of the module's sources compiled into this program):
//
//   - A complete cached result with the same key is returned as it is
//     (Result.From names its file), with the current definition's prose and
//     reference numbers, which do not change runs.
//   - Otherwise the runs are computed, each kept in a journal beside the
//     result file as soon as it finishes; the runs an interrupted call left
//     there are reused (Result.Reused, also said on opts.Log), so the same
//     call again computes only the missing runs and returns what an
//     uninterrupted call would. A complete result is saved and its journal
//     removed.
//
// opts.Fresh recomputes every run; opts.NoCache and opts.Trace bypass the
// store, and so does a run function that is not part of the synclab module
// (defined in a notebook cell or another module: the lab cannot name its
// code), which RunExperiment says once on opts.Log. An unreadable or
// inconsistent cache file is reported on opts.Log with its path and
// recomputed. When runs failed it returns the result with a
// *RunsFailedError, as Execute does, whether it computed the result or read
// it: a failed run (a simulated deadlock, say) is a result like the others,
// cached with them, since computing it again fails the same way.
func RunExperiment(ctx context.Context, e platforms.Experiment, opts RunOptions) (*Result, error) {
	b, err := newBatch(e, opts.Shard)
	if err != nil {
		return nil, err
	}
	logw := opts.Log
	if logw == nil {
		logw = os.Stderr
	}
	path := ""
	if !opts.NoCache && !opts.Trace {
		path = b.storePath(opts, logw)
	}
	if path == "" {
		return b.execute(ctx, opts)
	}
	if !opts.Fresh {
		if res := b.cached(ctx, path, logw); res != nil {
			removeStaleJournal(path)
			return res, res.RunsFailed()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if err := b.openJournal(ctx, path, opts.Fresh, logw); err != nil {
		return nil, err
	}
	res, err := b.execute(ctx, opts)
	if !res.Complete {
		if jerr := b.journal.close(); jerr != nil {
			fmt.Fprintf(logw, "labkit: %v\n", jerr)
		}
		return res, err
	}
	if serr := save(ctx, path, res); serr != nil {
		kept := "" // without a journal (openJournal said why) nothing is kept
		if b.journal != nil {
			kept = "; its runs stay in the journal"
			if jerr := b.journal.close(); jerr != nil { // a full disk fails both
				kept = fmt.Sprintf("; the journal kept only the runs before its first failed write (%v): the others will be computed again", jerr)
			}
		}
		fmt.Fprintf(logw, "labkit: cannot write the result to the store: %v%s\n", serr, kept)
		return res, err
	}
	if jerr := b.journal.remove(); jerr != nil {
		fmt.Fprintf(logw, "labkit: %v\n", jerr)
	}
	return res, err
}

// noStore is said once when no result store directory is known.
var noStore sync.Once

// storePath returns the result file of the batch, or "" when it cannot use
// the store (saying why on logw).
func (b *batch) storePath(opts RunOptions, logw io.Writer) string {
	if !b.known {
		warnUnnamedCode(logw, b.e)
		return ""
	}
	if opts.File != "" {
		return opts.File
	}
	dir := opts.Dir
	if dir == "" {
		dir = ResultsDir()
	}
	if dir == "" {
		noStore.Do(func() {
			fmt.Fprintln(logw, "labkit: no result store (set SYNCLAB_RESULTS or give a directory): results are not kept")
		})
		return ""
	}
	return cachePath(dir, b.e.Name, b.hash, b.shard)
}

// cached returns the complete result of the batch stored at path, with the
// batch's definition, or nil.
func (b *batch) cached(ctx context.Context, path string, logw io.Writer) *Result {
	res, err := load(ctx, path)
	switch {
	case err == nil && res.matches(b.hash, b.shard, b.code):
		res.Experiment = b.e.Clone()
		res.Experiment.Run = nil
		res.From = path
		return res
	case err != nil && !errors.Is(err, os.ErrNotExist) && ctx.Err() == nil:
		fmt.Fprintf(logw, "labkit: %v; recomputing\n", err)
	}
	return nil
}

// matches reports whether a cached result can stand for running the
// experiment whose definition hash is hash with the code code now.
func (r *Result) matches(hash string, shard Shard, code CodeVersion) bool {
	return r.Complete && r.Hash == hash && r.Shard == shard && code.Key() != "" && r.Code.Key() == code.Key()
}

// openJournal opens the journal of the result file path and takes the runs
// it holds (none when fresh). A journal another process holds is left
// alone: the batch then runs without one.
func (b *batch) openJournal(ctx context.Context, path string, fresh bool, logw io.Writer) error {
	check, err := newChecker(b.e, b.shard)
	if err != nil {
		return err
	}
	h := journalHeader{Experiment: b.e.Name, Hash: b.hash, Code: b.code.Key(), Shard: b.shard}
	accept := func(run Run) error {
		_, err := check.job(run)
		return err
	}
	j, runs, err := openJournal(ctx, journalPath(path), h, fresh, accept)
	switch {
	case errors.Is(err, errLocked):
		fmt.Fprintf(logw, "labkit: %s: another process is computing this result; running without a journal\n", journalPath(path))
		return nil
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		fmt.Fprintf(logw, "labkit: cannot keep a journal of finished runs: %v\n", err)
		return nil
	}
	b.journal = j
	for i := range runs {
		job, _ := check.job(runs[i]) // accepted above
		if k := b.shard.pos(job); b.done[k] == nil {
			b.done[k] = &runs[i]
			b.reused++
		}
	}
	if b.reused > 0 {
		fmt.Fprintf(logw, "labkit: %s: reused %d of %d runs from an interrupted run\n", b.e.Name, b.reused, len(b.done))
	}
	return nil
}
