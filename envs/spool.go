package envs

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/unfold-dev/unfold/rootfs"
)

// DefaultSaveLimit is how many bytes one saved output holds at most by
// default ([Limits.SaveLimit]): 64 MiB.
const DefaultSaveLimit = 64 << 20

// DefaultSaveTotal is how many bytes the saved outputs in one directory
// take together by default, for the front ends that bound it (the
// orchestrator's context/output): 256 MiB.
const DefaultSaveTotal = 256 << 20

// DefaultSpoolLimit is how many bytes the spool files of one environment
// take on disk at most, by default: 1 GB.
const DefaultSpoolLimit = 1 << 30

// Spool keeps the whole output of an environment's commands that pass
// their memory limit: each [Output] it makes writes everything to a file
// of its own once more than its limit was written, in a directory the
// spool makes when the first file is needed. A quick command makes no
// file.
//
// [Spool.Fit] fits a response whose output shows such an Output: the
// bytes its note stands for go back in their place in the file the
// response names, and the spool file is removed. Close removes the
// directory and every file still in it: those of outputs no response
// showed.
//
// The files take at most the spool's limit on disk together; output past
// it is not kept, and the file a response names says where and how much
// is missing. A Spool is safe for concurrent use; a nil *Spool keeps
// nothing, and its Outputs are those of [NewOutput].
type Spool struct {
	parent string // where the directory is made; "": the system's temporary directory
	limit  int64

	// mu guards the fields below.
	mu     sync.Mutex
	dir    string    // "" until the first file
	used   int64     // bytes in the files of live
	live   []*Output // the outputs whose file is still here
	closed bool

	saving sync.WaitGroup // Saves under way, which Close waits for
}

// NewSpool returns a spool whose directory goes in parent ("": the
// system's temporary directory, as [os.TempDir] says when the first file
// is made) and whose files take at most limit bytes (<= 0:
// [DefaultSpoolLimit]).
func NewSpool(parent string, limit int64) *Spool {
	if limit <= 0 {
		limit = DefaultSpoolLimit
	}
	return &Spool{parent: parent, limit: limit}
}

// Output returns an Output that keeps limit bytes in memory as
// [NewOutput] does and, past them, writes the whole output to a file of s.
func (s *Spool) Output(limit int) *Output {
	o := NewOutput(limit)
	o.spool = s
	return o
}

// create makes the spool file of o.
func (s *Spool) create(o *Output) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if err := s.makeDir(); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(s.dir, "output-*.txt")
	if err != nil {
		return nil, err
	}
	s.live = append(s.live, o)
	return f, nil
}

// makeDir makes the spool's directory, the first time; s.mu is held.
func (s *Spool) makeDir() error {
	if s.dir != "" {
		return nil
	}
	dir, err := os.MkdirTemp(s.parent, "unfold-spool-*")
	if err != nil {
		return err
	}
	s.dir = dir
	return nil
}

// savedDir is where, in the spool's directory, [Spool.Save] saves: apart
// from the spool files, which are not saved outputs.
const savedDir = "saved"

// Save saves output to a new file in the spool's directory and returns
// its path: the default of [Limits.Save] for the responses [Spool.Fit]
// fits, so that an environment's saved outputs go when it closes. The
// files Save saved take at most [DefaultSaveTotal] bytes together: saving
// one removes the oldest others past that. After [Spool.Close] it fails
// with [ErrClosed]; Close waits for a Save under way. [Spool.SaveNamed]
// names the files and bounds them otherwise.
func (s *Spool) Save(output io.Reader) (string, error) {
	return s.SaveNamed("output", DefaultSaveTotal, output)
}

// SaveNamed is [Spool.Save] with the file named prefix-<ten digits>.txt
// and the files so named taking at most total bytes together (no bound
// when total <= 0).
func (s *Spool) SaveNamed(prefix string, total int64, output io.Reader) (string, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "", ErrClosed
	}
	err := s.makeDir()
	dir := filepath.Join(s.dir, savedDir)
	s.saving.Add(1)
	s.mu.Unlock()
	defer s.saving.Done()
	if err != nil {
		return "", err
	}
	return rootfs.SaveNewIn(dir, prefix, output, total)
}

// reserve returns how many of n more bytes may go to disk, and counts
// them.
func (s *Spool) reserve(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := int(min(int64(n), max(s.limit-s.used, 0)))
	s.used += int64(k)
	return k
}

// unreserve gives back n bytes reserve counted.
func (s *Spool) unreserve(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used -= int64(n)
}

// forget drops o, whose file of size bytes is gone.
func (s *Spool) forget(o *Output, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.live, o); i >= 0 {
		s.live = slices.Delete(s.live, i, i+1)
		s.used -= size
	}
}

// Close removes the spool's directory with every file in it; outputs
// still written to keep their memory part only. It is idempotent.
func (s *Spool) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	live, dir := s.live, s.dir
	s.mu.Unlock()
	// A save under way (of a command Close stopped) finishes first; its
	// file then goes with the directory.
	s.saving.Wait()
	for _, o := range live {
		o.release()
	}
	if dir == "" {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("envs: close spool: %w", err)
	}
	return nil
}

// release closes and removes o's spool file; from then on o keeps its
// memory part only.
func (o *Output) release() {
	o.mu.Lock()
	d := o.disk
	if d == nil || d.file == nil {
		o.mu.Unlock()
		return
	}
	f, size := d.file, d.written
	d.file, d.lost = nil, "its file was removed"
	o.mu.Unlock()
	_ = f.Close()
	_ = os.Remove(f.Name())
	o.spool.forget(o, size)
}

// Fit is [Limits.Fit] for a response whose output may show Outputs of s
// that passed their memory limit. Such an output is cut already: in its
// place, the file saved (with l.Save) holds the output, the note between
// its head and tail names that file and says how much is left out, and
// the response names it in OutputFile, whether or not the budget cuts
// more. The spool files it used are removed. Without l.Save, outputs are
// saved with [Spool.Save], in the spool's directory. When saving with
// l.Save fails, the output goes to a file in the system's temporary
// directory ([SaveTemp]) instead, and the note says why; when that fails
// too, the response shows what memory kept and says that the rest is
// lost.
//
// The saved file takes at most l.SaveLimit bytes ([DefaultSaveLimit]
// when 0): of a middle that does not fit, it keeps the head and the tail,
// in whole lines where it can, with a line saying how much is left out
// there, and the response says so. So the work Fit does is bounded by
// that limit and the output kept in memory, however much the command
// printed: it copies what it saves, and counts lines and tokens only of
// what the response shows.
func (s *Spool) Fit(l Limits, resp Response) Response {
	if s == nil {
		return l.Fit(resp)
	}
	if l.Save == nil {
		l.Save = s.Save
	}
	s.mu.Lock()
	live := slices.Clone(s.live)
	s.mu.Unlock()
	var gaps []*gap
	for _, o := range live {
		if g := o.gapIn(resp.Output); g != nil {
			gaps = append(gaps, g)
		}
	}
	if len(gaps) == 0 {
		return l.Fit(resp)
	}
	slices.SortFunc(gaps, func(a, b *gap) int { return cmp.Compare(a.at, b.at) })
	resp = l.fitGaps(resp, gaps)
	for _, g := range gaps {
		if g.file != nil {
			_ = g.file.Close()
		}
		g.o.release()
	}
	return resp
}
