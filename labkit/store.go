package labkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"synclab/labkit/internal/atomicfile"
	"synclab/platforms"
)

// FormatVersion is the version of the result file format. In version 2
// every sweep point runs with the same seeds (RunSeed), where version 1
// hashed the point's index: a version 1 file is refused by its version, not
// as corrupt for seeds that no longer match.
const FormatVersion = 2

// A result file is: magic (8 bytes) | format version (uint32 LE) |
// payload length (uint64 LE) | SHA-256 of the payload | msgpack payload.
var magic = [8]byte{'S', 'Y', 'N', 'C', 'L', 'A', 'B', 'R'}

const headerLen = 8 + 4 + 8 + sha256.Size

// Errors a result file can be rejected with (wrapped with its path).
var (
	ErrForeign   = errors.New("not a SyncLab result file")
	ErrTruncated = errors.New("truncated result file")
	ErrCorrupt   = errors.New("corrupt result file (checksum, decoding or validation failed)")
	ErrVersion   = errors.New("result file format version not supported")
)

// unmarshal decodes msgpack data into v after checking its declared lengths
// (checkLengths), reading through ctx so that a cancel stops it.
func unmarshal(ctx context.Context, b []byte, v any) error {
	if err := checkLengths(b); err != nil {
		return err
	}
	return msgpack.NewDecoder(ctxReader{ctx, bytes.NewReader(b)}).Decode(v)
}

func init() {
	// A result's samples are long []float64s. The generic decoder looks
	// each element's decoder up and grows the slice by reflection: that
	// was most of loading a result that holds samples (a notebook cell
	// loads its results in every cell that uses them).
	msgpack.Register([]float64(nil), nil, decodeFloats)
}

// decodeFloats decodes a []float64 as msgpack's generic decoder does (nil
// stays nil, an empty array is an empty slice), in one allocation:
// checkLengths has checked the array's length against the data.
func decodeFloats(d *msgpack.Decoder, v reflect.Value) error {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n == -1 {
		v.SetZero()
		return nil
	}
	s := make([]float64, n)
	for i := range s {
		if s[i], err = d.DecodeFloat64(); err != nil {
			return err
		}
	}
	v.Set(reflect.ValueOf(s))
	return nil
}

// ctxReader reads from r until ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Encode serialises r in the result file format.
func Encode(r *Result) ([]byte, error) { return encode(context.Background(), r) }

// encode is Encode that stops with ctx's error when ctx is cancelled.
func encode(ctx context.Context, r *Result) ([]byte, error) {
	var buf bytes.Buffer
	buf.Write(make([]byte, headerLen))
	if err := msgpack.NewEncoder(&ctxWriter{ctx: ctx, w: &buf}).Encode(r); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	sum, err := sha256Context(ctx, b[headerLen:])
	if err != nil {
		return nil, err
	}
	putHeader(b, sum)
	return b, nil
}

// encodePayload puts the result file header in front of a msgpack payload.
func encodePayload(payload []byte) []byte {
	b := append(make([]byte, headerLen, headerLen+len(payload)), payload...)
	putHeader(b, sha256.Sum256(payload))
	return b
}

// putHeader fills in the header of a result file b whose payload, after
// the header, has the checksum sum.
func putHeader(b []byte, sum [sha256.Size]byte) {
	copy(b, magic[:])
	binary.LittleEndian.PutUint32(b[8:], FormatVersion)
	binary.LittleEndian.PutUint64(b[12:], uint64(len(b)-headerLen))
	copy(b[20:], sum[:])
}

// hashChunk is how much sha256Context hashes between checks of its context.
const hashChunk = 4 << 20

// sha256Context hashes b, checking ctx between chunks.
func sha256Context(ctx context.Context, b []byte) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	h := sha256.New()
	for len(b) > 0 {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		n := min(len(b), hashChunk)
		h.Write(b[:n])
		b = b[n:]
	}
	h.Sum(sum[:0])
	return sum, nil
}

// ctxWriter writes to w until ctx is cancelled (checked every 64 KiB).
type ctxWriter struct {
	ctx context.Context
	w   *bytes.Buffer
	n   int
}

func (c *ctxWriter) Write(p []byte) (int, error) {
	if err := c.tick(len(p)); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

func (c *ctxWriter) WriteByte(b byte) error {
	if err := c.tick(1); err != nil {
		return err
	}
	return c.w.WriteByte(b)
}

func (c *ctxWriter) tick(n int) error {
	if c.n += n; c.n >= 64<<10 {
		c.n = 0
		return c.ctx.Err()
	}
	return nil
}

// Decode parses a result file's bytes, rejecting foreign, truncated, corrupt
// and unsupported-version data with one of the Err values. A declared
// length larger than the bytes that remain is corrupt before anything is
// allocated for it, and a decoded result must be consistent with its own
// definition (its runs those of its shard, in job order, each once, with
// every metric; all of them when it is complete) or it is corrupt.
func Decode(b []byte) (*Result, error) { return decode(context.Background(), b) }

func decode(ctx context.Context, b []byte) (*Result, error) {
	if len(b) < len(magic) || !bytes.Equal(b[:len(magic)], magic[:]) {
		if len(b) < len(magic) && bytes.HasPrefix(magic[:], b) {
			return nil, ErrTruncated
		}
		return nil, ErrForeign
	}
	if len(b) < headerLen {
		return nil, ErrTruncated
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != FormatVersion {
		return nil, fmt.Errorf("%w: file has %d, this build reads %d", ErrVersion, v, FormatVersion)
	}
	n := binary.LittleEndian.Uint64(b[12:])
	payload := b[headerLen:]
	switch {
	case uint64(len(payload)) < n:
		return nil, ErrTruncated
	case uint64(len(payload)) > n:
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, uint64(len(payload))-n)
	}
	sum, err := sha256Context(ctx, payload)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(sum[:], b[20:headerLen]) {
		return nil, ErrCorrupt
	}
	var r Result
	if err := unmarshal(ctx, payload, &r); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := r.check(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return &r, nil
}

// Save writes r to path atomically (see WriteFileAtomic) with mode 0644, so
// a reader never sees a partial file.
func Save(path string, r *Result) error { return save(context.Background(), path, r) }

func save(ctx context.Context, path string, r *Result) error {
	b, err := encode(ctx, r)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return atomicfile.Write(ctx, path, b, 0o644)
}

// Load reads a result file; errors name the path (a missing file satisfies
// errors.Is(err, os.ErrNotExist)).
func Load(path string) (*Result, error) { return load(context.Background(), path) }

func load(ctx context.Context, path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// One allocation of the file's size: io.ReadAll grows from 512 bytes,
	// clearing each new buffer, which took 40% of loading a 7 MB result.
	var buf bytes.Buffer
	if st, err := f.Stat(); err == nil {
		buf.Grow(int(st.Size()) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(ctxReader{ctx, f}); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := decode(ctx, buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// CachePath is where the store keeps the result of e (or of one shard).
func CachePath(dir string, e platforms.Experiment, shard Shard) string {
	return cachePath(dir, e.Name, e.Hash(), shard)
}

// cachePath is CachePath of the experiment named name with definition hash
// hash.
func cachePath(dir, name, hash string, shard Shard) string {
	name += "-" + hash[:12]
	if shard.Count > 1 {
		name += fmt.Sprintf(".shard-%d-of-%d", shard.Index, shard.Count)
	}
	return filepath.Join(dir, name+".msgpack")
}

// MergeError is why Merge refused its parts: Reason, about the parts at
// the indexes Parts of Merge's arguments, so that a caller can name their
// files.
type MergeError struct {
	Parts  []int
	Reason string
	Err    error // the check of a part that failed, if that is the reason
}

// Error says why the parts cannot be merged.
func (e *MergeError) Error() string {
	if e.Err != nil {
		return "merge: " + e.Reason + ": " + e.Err.Error()
	}
	return "merge: " + e.Reason
}

// Unwrap returns the failed check of a part, if that is the reason.
func (e *MergeError) Unwrap() error { return e.Err }

// Merge combines shard results of one experiment into a complete result. It
// checks that each part is consistent (as Decode does), that all share the
// definition hash and a known code version (CodeVersion.Key), and that each
// of the n shards is present exactly once and complete (not interrupted).
// Failed runs are merged like the others (see RunsFailed). A refusal about
// given parts is a *MergeError.
func Merge(parts ...*Result) (*Result, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: no result files")
	}
	first := parts[0]
	n := max(first.Shard.Count, 1)
	seen := make([]int, n) // the index in parts of each shard + 1; 0: not seen
	for i, p := range parts {
		refuse := func(format string, args ...any) error {
			return &MergeError{Parts: []int{i}, Reason: fmt.Sprintf(format, args...)}
		}
		against := func(format string, args ...any) error { // about p and the first part
			return &MergeError{Parts: []int{0, i}, Reason: fmt.Sprintf(format, args...)}
		}
		if err := p.check(context.Background()); err != nil {
			return nil, &MergeError{Parts: []int{i}, Reason: fmt.Sprintf("shard %s", p.Shard), Err: err}
		}
		switch {
		case p.Experiment.Name != first.Experiment.Name:
			return nil, against("results of different experiments (%s vs %s)", first.Experiment.Name, p.Experiment.Name)
		case p.Hash != first.Hash:
			return nil, against("results of different definitions of %s (%s vs %s): %s", first.Experiment.Name, first.Hash[:12], p.Hash[:12], strings.Join(first.Experiment.Diff(p.Experiment), ", "))
		case p.Code.Key() == "":
			return nil, refuse("shard %s was computed by code of unknown version (%s), which cannot be checked against the others", p.Shard, p.Code)
		case p.Code.Key() != first.Code.Key():
			return nil, against("shards %s and %s computed by different code (%s vs %s)", first.Shard, p.Shard, first.Code, p.Code)
		case max(p.Shard.Count, 1) != n:
			return nil, against("%s and %s are not parts of one split", first.Shard.part(), p.Shard.part())
		case !p.Complete:
			return nil, refuse("shard %s is incomplete (interrupted run)", p.Shard)
		case seen[p.Shard.Index] > 0:
			return nil, &MergeError{Parts: []int{seen[p.Shard.Index] - 1, i}, Reason: fmt.Sprintf("shard %s given twice", p.Shard)}
		}
		seen[p.Shard.Index] = i + 1
	}
	if i := slices.Index(seen, 0); i >= 0 {
		return nil, fmt.Errorf("merge: shard %d/%d missing", i, n)
	}
	out := *first
	out.Shard = Shard{}
	out.Runs = nil
	out.WallS = 0
	for _, p := range parts {
		out.Runs = append(out.Runs, p.Runs...)
		out.WallS = max(out.WallS, p.WallS) // shards run side by side: the longest is the wait
	}
	order := map[string]int{}
	for i, v := range first.Experiment.Variants {
		order[v.Name] = i
	}
	jobIndex := func(r Run) int { return jobIndex(first.Experiment, order[r.Variant], r.Point, r.Repeat) }
	slices.SortFunc(out.Runs, func(a, b Run) int { return jobIndex(a) - jobIndex(b) })
	if err := out.check(context.Background()); err != nil { // the union is the whole experiment
		return nil, fmt.Errorf("merge: %w", err)
	}
	return &out, nil
}
