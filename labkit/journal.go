package labkit

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"synclab/labkit/internal/atomicfile"

	"github.com/vmihailenco/msgpack/v5"
)

// A journal keeps the runs of an experiment as they finish, so that an
// interrupted run (Ctrl-C, a kill, a crash) loses only the runs in progress:
// RunExperiment resumes from it and removes it once the complete result is
// saved. It lives next to the result file (FILE.journal) and is
//
//	"SYNCLABJ" | version (uint32 LE) | header record | run record...
//
// where each record is a frame: payload length (uint32 LE) | CRC-32C of
// the payload (uint32 LE) | msgpack payload (the header: journalHeader; a
// run: Run). Records are appended and synced as runs finish. A torn or
// corrupt record (the process was killed while writing it) ends the
// journal: it and anything after it are dropped, never fatal.
const (
	journalMagic   = "SYNCLABJ"
	journalVersion = 1
	frameLen       = 8 // length and CRC of a record
)

var (
	crcTable = crc32.MakeTable(crc32.Castagnoli)
	// errLocked is the error for a journal another process is writing.
	errLocked = errors.New("locked by another process")
)

// journalHeader names what the journal's runs belong to; runs are reused
// only when all of it matches.
type journalHeader struct {
	Experiment string `msgpack:"experiment"`
	Hash       string `msgpack:"hash"`
	Code       string `msgpack:"code"` // CodeVersion.Key
	Shard      Shard  `msgpack:"shard"`
}

// journal appends run records to a journal file from a goroutine that
// writes what has queued up and syncs once per batch.
type journal struct {
	path string
	f    *os.File
	recs chan []byte
	done chan struct{}
	err  error // the first write error, read after done is closed
}

// journalPath is the journal of the result file path.
func journalPath(path string) string { return path + ".journal" }

// openJournal opens the journal at path (creating it and its directory) for
// runs described by h, takes its lock and returns it with the runs it
// holds, in the order they finished; fresh discards them. accept checks a
// run: the first record that fails it, or fails its CRC or decoding, ends
// the journal, which is cut there. A header that does not match h (another
// code version) starts the journal anew. errLocked means another process
// writes it.
func openJournal(ctx context.Context, path string, h journalHeader, fresh bool, accept func(Run) error) (*journal, []Run, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	j, runs, err := startJournal(ctx, f, h, fresh, accept)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return j, runs, nil
}

func startJournal(ctx context.Context, f *os.File, h journalHeader, fresh bool, accept func(Run) error) (*journal, []Run, error) {
	if err := lockFile(f); err != nil {
		return nil, nil, err
	}
	var runs []Run
	end := 0
	if !fresh {
		b, err := io.ReadAll(ctxReader{ctx, f})
		if err != nil {
			return nil, nil, err
		}
		if runs, end, err = readJournal(ctx, b, h, accept); err != nil {
			return nil, nil, err
		}
	}
	if err := f.Truncate(int64(end)); err != nil {
		return nil, nil, err
	}
	if _, err := f.Seek(int64(end), io.SeekStart); err != nil {
		return nil, nil, err
	}
	if end == 0 {
		head, err := msgpack.Marshal(h)
		if err != nil {
			return nil, nil, err
		}
		start := binary.LittleEndian.AppendUint32([]byte(journalMagic), journalVersion)
		if _, err := f.Write(append(start, frame(head)...)); err != nil {
			return nil, nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, nil, err
		}
		atomicfile.SyncDir(filepath.Dir(f.Name()))
	}
	j := &journal{path: f.Name(), f: f, recs: make(chan []byte, 64), done: make(chan struct{})}
	go j.write()
	return j, runs, nil
}

// readJournal parses a journal's bytes and returns the runs of its valid
// prefix and that prefix's length (0 when the header is missing, torn or
// does not match h). Only a cancelled ctx is an error.
func readJournal(ctx context.Context, b []byte, h journalHeader, accept func(Run) error) ([]Run, int, error) {
	off := len(journalMagic) + 4
	if len(b) < off || string(b[:len(journalMagic)]) != journalMagic || binary.LittleEndian.Uint32(b[len(journalMagic):]) != journalVersion {
		return nil, 0, nil
	}
	head, next := nextFrame(b, off)
	var got journalHeader
	if head == nil || unmarshal(ctx, head, &got) != nil || got != h {
		return nil, 0, ctx.Err()
	}
	var runs []Run
	for off = next; ; off = next {
		var rec []byte
		if rec, next = nextFrame(b, off); rec == nil {
			return runs, off, ctx.Err()
		}
		var run Run
		if unmarshal(ctx, rec, &run) != nil || accept(run) != nil {
			return runs, off, ctx.Err()
		}
		runs = append(runs, run)
	}
}

// nextFrame returns the payload of the frame at b[off:] and the offset after
// it, or nil when the frame is torn or its CRC does not match.
func nextFrame(b []byte, off int) ([]byte, int) {
	if len(b)-off < frameLen {
		return nil, off
	}
	n := int(binary.LittleEndian.Uint32(b[off:]))
	crc := binary.LittleEndian.Uint32(b[off+4:])
	if n > len(b)-off-frameLen {
		return nil, off
	}
	p := b[off+frameLen : off+frameLen+n]
	if crc32.Checksum(p, crcTable) != crc {
		return nil, off
	}
	return p, off + frameLen + n
}

// frame returns the record of payload p.
func frame(p []byte) []byte {
	out := make([]byte, frameLen, frameLen+len(p))
	binary.LittleEndian.PutUint32(out, uint32(len(p)))
	binary.LittleEndian.PutUint32(out[4:], crc32.Checksum(p, crcTable))
	return append(out, p...)
}

// add queues a finished run for writing. A run that cannot be encoded or
// written is only not journaled: the run itself goes on.
func (j *journal) add(run Run) {
	p, err := msgpack.Marshal(run)
	if err != nil {
		return
	}
	j.recs <- frame(p)
}

// write appends the queued records, a batch at a time, each batch synced.
func (j *journal) write() {
	defer close(j.done)
	var batch bytes.Buffer
	for rec := range j.recs {
		batch.Reset()
		batch.Write(rec)
		for len(j.recs) > 0 { // what queued up meanwhile joins the batch
			batch.Write(<-j.recs)
		}
		if j.err == nil {
			if _, j.err = j.f.Write(batch.Bytes()); j.err == nil {
				j.err = j.f.Sync()
			}
		}
	}
}

// close writes what is queued, closes the file (releasing the lock) and
// returns the first write error. A nil journal does nothing.
func (j *journal) close() error {
	if j == nil {
		return nil
	}
	close(j.recs)
	<-j.done
	if err := j.f.Close(); j.err == nil {
		j.err = err
	}
	if j.err != nil {
		return fmt.Errorf("journal %s: %w", j.path, j.err)
	}
	return nil
}

// remove deletes the journal (its runs are in a saved result) and closes
// it, holding the lock until the name is gone. A nil journal does nothing.
func (j *journal) remove() error {
	if j == nil {
		return nil
	}
	rerr := os.Remove(j.path)
	err := j.close()
	atomicfile.SyncDir(filepath.Dir(j.path))
	if err == nil {
		err = rerr
	}
	return err
}

// removeStaleJournal removes the journal of the result file path unless
// another process holds it: one killed between saving the complete result
// and removing the journal leaves it behind, its runs all in the result.
func removeStaleJournal(path string) {
	f, err := os.OpenFile(journalPath(path), os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if lockFile(f) == nil && os.Remove(f.Name()) == nil {
		atomicfile.SyncDir(filepath.Dir(f.Name()))
	}
}
