package orchestrator

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/dirwatch"
	"github.com/unfold-dev/unfold/internal/readfile"
)

// LoadSpecs reads every env/*.json file in projectDir, in name order, and
// registers an environment for each valid one. A file that is not a
// regular file (a named pipe, a socket, a device), is over 1 MiB, is not
// valid JSON, fails the schema ([SpecSchema]), names a missing executable,
// takes the name of a front end's own tool ([tools.HelpName],
// [prompt.OpenSectionsName]) or cannot be registered is skipped with a
// [*SpecError] naming the file and the field; the other files still load. The errors are returned joined and
// shown on the orchestrator's own screen ([ScreenName]). A project without
// an env directory has nothing to load; a projectDir that does not exist,
// or is not a directory, is an error, and nothing is loaded.
//
// From then on, every command first picks up the changes to the files
// ([Orchestrator.ReloadSpecs]): a file added is loaded, one removed closes
// and drops its environment, and one whose content changed replaces its
// environment with a new one (its state is lost); the errors shown follow
// the files. An environment dropped or replaced is closed on a goroutine
// of its own, which no command waits for and [Orchestrator.Close] does.
// The env directory may be made, removed or replaced meanwhile.
//
// The directory is watched (see [Orchestrator.ReloadSpecs]) from before it
// is first read, so that nothing written meanwhile is missed; where no
// watch can be made, every command reads the directory again instead.
// [WithoutSpecReload] keeps the environments as LoadSpecs made them.
func (o *Orchestrator) LoadSpecs(projectDir string) error {
	abs, err := filepath.Abs(projectDir)
	if err != nil {
		return fmt.Errorf("orchestrator: load specs: %w", err)
	}
	// A mistyped project would otherwise look like one without programs.
	if fi, err := os.Stat(abs); err != nil {
		return fmt.Errorf("orchestrator: load specs: the project directory: %w; give a directory that exists", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("orchestrator: load specs: the project %s is not a directory; give the directory that holds env/", abs)
	}
	o.reloadMu.Lock()
	defer o.reloadMu.Unlock()
	set := &specSet{dir: abs, files: map[string]*specState{}}
	if w, err := newSpecWatch(filepath.Join(abs, "env"), isSpecFile); err == nil {
		set.watch = w
	}
	o.mu.Lock()
	old := o.specs
	o.specs = set
	o.mu.Unlock()
	if old != nil {
		old.stopWatch()
	}
	seen, err := set.scan()
	if err != nil {
		set.pending = true // read again before the next command
		return fmt.Errorf("orchestrator: load specs: %w", err)
	}
	return o.syncSpecs(set, seen)
}

// WithoutSpecReload keeps the environments of the spec files as
// [Orchestrator.LoadSpecs] made them: a spec file added, changed or
// removed afterwards changes nothing, and is reported among the load
// errors ([Orchestrator.LoadErrors], the orchestrator's screen) as not
// loaded, because of reason ("no environment runs programs"), until the
// program starts again. A front end whose environments run no program the
// model chooses wants this: a spec file the model writes, with an editor,
// would otherwise give it a program to run that the user did not allow.
func WithoutSpecReload(reason string) Option {
	return func(o *Orchestrator) { o.fixedSpecs = reason }
}

// specWatch tells whether the env directory changed since it was last
// asked: a [dirwatch.Watcher].
type specWatch interface {
	Changed() (bool, error)
	Close() error
}

// newSpecWatch makes the watch of a project's env directory; tests
// replace it.
var newSpecWatch = func(dir string, match func(string) bool) (specWatch, error) {
	w, err := dirwatch.New(dir, match)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// isSpecFile reports whether an entry of the env directory is a spec file.
func isSpecFile(name string) bool { return strings.HasSuffix(name, ".json") }

// LoadErrors returns the spec files that fail to load now.
func (o *Orchestrator) LoadErrors() []error {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return slices.Clone(o.loadErrs)
}

// specSet is the spec files of a project's env directory as last loaded.
// Its fields are guarded by the orchestrator's reloadMu.
type specSet struct {
	dir   string                // the project directory, absolute
	files map[string]*specState // by file name
	// watch tells whether the env directory changed since it was last
	// asked; nil where none could be made (or after it failed), and the
	// directory is read before every command instead.
	watch specWatch
	// pending is set when the watch saw a change that was not loaded yet
	// (reading the directory failed): it is read again next time.
	pending bool
	// unloaded holds, with WithoutSpecReload, the stat of each file seen
	// changed and not loaded, so that it is not read again until it
	// changes once more.
	unloaded map[string]fileStat
}

// stopWatch closes the watch, if any; the set reads the directory before
// every command from then on.
func (s *specSet) stopWatch() {
	if s.watch != nil {
		_ = s.watch.Close()
		s.watch = nil
	}
}

// specState is one spec file as last loaded.
type specState struct {
	mod  time.Time
	size int64
	sum  [sha256.Size]byte // of the content, to tell a real change from a touch
	name string            // the environment it registered; "" when it failed
	err  error             // why it failed
}

// fileStat is a spec file's modification time and size, as a scan saw them.
type fileStat struct {
	mod  time.Time
	size int64
}

// scan returns the env/*.json files with their times and sizes.
func (s *specSet) scan() (map[string]fileStat, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, "env"))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]fileStat{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]fileStat, len(entries))
	for _, de := range entries {
		if !isSpecFile(de.Name()) {
			continue // a directory named *.json is reported, as readfile refuses it
		}
		fi, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out[de.Name()] = fileStat{fi.ModTime(), fi.Size()}
	}
	return out, nil
}

// changed reports whether seen differs from what was loaded.
func (s *specSet) changed(seen map[string]fileStat) bool {
	if len(seen) != len(s.files) {
		return true
	}
	for name, st := range seen {
		f, ok := s.files[name]
		if !ok || !f.mod.Equal(st.mod) || f.size != st.size {
			return true
		}
	}
	return false
}

// ReloadSpecs picks up the spec files added, changed or removed since they
// were last loaded ([Orchestrator.LoadSpecs]), as every command does
// before it runs. Front ends that offer the environments (their tools and
// sections) call it before they offer them, so that a file written by the
// command that just ran is offered at once; [Orchestrator.Generation]
// tells whether anything changed. Before LoadSpecs and after
// [Orchestrator.Close] it does nothing.
//
// When nothing changed it costs one system call: on Linux the env
// directory is watched with inotify, whose queue is read without waiting.
// The kernel queues a change before the call that made it returns, so a
// file written and then followed by a command is always picked up by that
// command; a watcher that delivers events from a goroutine would see it
// some time later. Where no watch can be made (another system, the
// system's inotify limits reached), or the watch is lost (the project
// directory moved), the directory is read every time instead.
func (o *Orchestrator) ReloadSpecs() {
	o.mu.RLock()
	set, closed := o.specs, o.closed
	o.mu.RUnlock()
	if set == nil || closed {
		return
	}
	o.reloadMu.Lock()
	defer o.reloadMu.Unlock()
	if set.watch != nil {
		changed, err := set.watch.Changed()
		if err != nil {
			set.stopWatch()
		} else if !changed && !set.pending {
			return
		}
	}
	seen, err := set.scan()
	if err != nil {
		set.pending = true
		return
	}
	set.pending = false
	if !set.changed(seen) {
		return
	}
	if o.fixedSpecs != "" {
		o.noteSpecChanges(set, seen)
		return
	}
	_ = o.syncSpecs(set, seen)
}

// noteSpecChanges reports the spec files that differ from those loaded,
// as the holder of reloadMu, when they are not reloaded
// ([WithoutSpecReload]): the environments stay as they are.
func (o *Orchestrator) noteSpecChanges(set *specSet, seen map[string]fileStat) {
	not := func(file, what, then string) error {
		return &SpecError{File: "env/" + file, Msg: fmt.Sprintf("%s after the environments were loaded; %s, because %s: start again to load the change", what, then, o.fixedSpecs)}
	}
	var notes []error
	for _, file := range slices.Sorted(maps.Keys(seen)) {
		st := seen[file]
		f := set.files[file]
		switch {
		case f == nil:
			notes = append(notes, not(file, "added", "not loaded"))
		case !f.mod.Equal(st.mod) || f.size != st.size:
			if c, ok := set.unloaded[file]; !ok || !c.mod.Equal(st.mod) || c.size != st.size {
				data, err := readfile.Read(filepath.Join(set.dir, "env", file), maxSpecBytes)
				if err == nil && sha256.Sum256(data) == f.sum {
					f.mod, f.size = st.mod, st.size // touched, not changed
					delete(set.unloaded, file)
					continue
				}
				if set.unloaded == nil {
					set.unloaded = map[string]fileStat{}
				}
				set.unloaded[file] = st
			}
			if f.name == "" {
				notes = append(notes, not(file, "changed", "not loaded"))
			} else {
				notes = append(notes, not(file, "changed", "its environment stays as it was loaded"))
			}
		}
	}
	for _, file := range slices.Sorted(maps.Keys(set.files)) {
		if _, ok := seen[file]; !ok {
			notes = append(notes, not(file, "removed", "its environment stays"))
		}
	}
	o.setLoadErrors(append(set.errors(), notes...))
}

// errors returns the load errors of the files, in name order.
func (s *specSet) errors() []error {
	var errs []error
	for _, file := range slices.Sorted(maps.Keys(s.files)) {
		if f := s.files[file]; f.err != nil {
			errs = append(errs, f.err)
		}
	}
	return errs
}

// setLoadErrors makes errs the load errors, and counts a generation when
// they say something else than before.
func (o *Orchestrator) setLoadErrors(errs []error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !sameErrors(o.loadErrs, errs) {
		o.gen++
	}
	o.loadErrs = errs
}

// syncSpecs brings the environments in line with the files seen, as the
// holder of reloadMu, and returns the errors of the files that fail.
func (o *Orchestrator) syncSpecs(set *specSet, seen map[string]fileStat) error {
	var gone []*entry
	removed := map[*entry]bool{}
	drop := func(f *specState, rm bool) {
		if f.name == "" {
			return
		}
		o.mu.Lock()
		if e := o.envs[f.name]; e != nil && e.spec != "" {
			gone = append(gone, o.remove(f.name))
			removed[e] = rm
			o.noteReplaced(e, rm)
		}
		o.mu.Unlock()
		f.name = ""
	}
	for file, f := range set.files {
		if _, ok := seen[file]; !ok {
			drop(f, true)
			delete(set.files, file)
		}
	}
	names := slices.Sorted(maps.Keys(seen))
	for _, file := range names {
		st := seen[file]
		f := set.files[file]
		if f != nil && f.mod.Equal(st.mod) && f.size == st.size {
			continue
		}
		o.syncSpec(set, file, st, f, drop)
	}
	if len(gone) > 0 {
		// A file refused because its name clashed with an environment
		// dropped since loads now: the failed files are tried again.
		for _, file := range names {
			if f := set.files[file]; f.err != nil {
				o.syncSpec(set, file, seen[file], f, drop)
			}
		}
	}
	for _, e := range gone {
		o.mu.RLock()
		_, back := o.envs[e.name]
		o.mu.RUnlock()
		e.mu.Lock()
		e.retired = &retirement{removed: removed[e], back: back}
		e.mu.Unlock()
	}
	errs := set.errors()
	o.setLoadErrors(errs)
	o.retire(gone)
	return errors.Join(errs...)
}

// syncSpec loads the spec file called file, seen with st, whose state was
// f (nil for a file not seen before), as the holder of reloadMu; drop
// drops the environment f registered.
func (o *Orchestrator) syncSpec(set *specSet, file string, st fileStat, f *specState, drop func(*specState, bool)) {
	path := filepath.Join(set.dir, "env", file)
	rel := "env/" + file
	data, readErr := readfile.Read(path, maxSpecBytes)
	sum := sha256.Sum256(data)
	if f != nil && readErr == nil && f.err == nil && f.sum == sum {
		f.mod, f.size = st.mod, st.size // touched, not changed
		return
	}
	if f != nil {
		drop(f, false)
	}
	f = &specState{mod: st.mod, size: st.size, sum: sum}
	set.files[file] = f
	if readErr != nil {
		msg := readErr.Error()
		var re *readfile.Error
		if errors.As(readErr, &re) {
			msg = fmt.Sprintf("%v: %s", re.Err, re.Detail)
		}
		f.err = &SpecError{File: rel, Msg: msg}
		return
	}
	f.name, f.err = o.loadSpec(set.dir, path, rel, data)
}

// retirement is how a reload stopped an environment: its spec file was
// removed, or changed; back says whether the file made an environment of
// the same name again.
type retirement struct{ removed, back bool }

// response is what a command under way in e when the reload stopped it is
// told, from resp, e's response to it. A command that ended well before
// the program was stopped keeps its output, the note after it. Any other
// response came from the stop (a signal, a closed environment, which
// would read as a crash the command caused) or promises a command that
// no longer runs: the note replaces it.
func (r *retirement) response(e *entry, resp envs.Response) envs.Response {
	then := e.name + " starts again, as the file now says, with the next command."
	switch {
	case r.removed:
		then = e.name + " no longer exists."
	case !r.back:
		then = e.name + " no longer exists: the file does not load now (the orchestrator's screen says why)."
	}
	stopped := "[" + stoppedBecause(e, r.removed)
	if resp.Success && !resp.Running {
		resp.Output = strings.TrimPrefix(resp.Output+"\n"+stopped+" as this command ended: the program's state was lost. "+then+"]", "\n")
		return resp
	}
	return envs.Response{Output: stopped + " while this command ran: the command and the program's state were lost. " + then + "]"}
}

// stoppedBecause says that a reload stopped e, and why: its spec file
// changed, or was removed. The note for the next command and the
// response of a command under way both start with it.
func stoppedBecause(e *entry, removed bool) string {
	what := "changed"
	if removed {
		what = "was removed"
	}
	return fmt.Sprintf("%s was stopped because %s %s", e.name, e.spec, what)
}

// retire closes the environments a reload replaced or removed, each on a
// goroutine of its own: a close can take seconds (a program given time to
// exit), and the reload runs before a command, under serve on the line
// reader, which must not wait for it. [Orchestrator.Close] waits for them.
func (o *Orchestrator) retire(gone []*entry) {
	o.mu.Lock()
	closed := o.closed
	if !closed {
		o.retiring.Add(len(gone))
	}
	o.mu.Unlock()
	for _, e := range gone {
		if closed {
			_ = closeEnv(e)
			continue
		}
		go func() {
			defer o.retiring.Done()
			_ = closeEnv(e)
		}()
	}
}

// sameErrors reports whether two lists of errors say the same.
func sameErrors(a, b []error) bool {
	return slices.EqualFunc(a, b, func(x, y error) bool { return x.Error() == y.Error() })
}

// Generation returns a number that changes whenever the environments do:
// one registered, one removed, one replaced because its spec file changed,
// or the list of spec files that fail to load ([Orchestrator.LoadErrors]).
// A front end that built tools or prompt sections from the environments
// ([Orchestrator.Sections], [Orchestrator.CommandTool]) builds them again
// when the number differs from the one it built them at, after
// [Orchestrator.ReloadSpecs].
func (o *Orchestrator) Generation() uint64 {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.gen
}

// replacedNote is what the next command to an environment replaced or
// removed because its spec file changed is told.
type replacedNote struct {
	text string
	lost bool // a command ran on in the old program: what comes next was meant for it
}

// maxReplacedNotes bounds the notes kept for environments no command was
// sent to since they were replaced.
const maxReplacedNotes = 1024

// noteReplaced keeps, under o.mu, the note for the next command to e's
// name: e was replaced because its spec file changed, or removed with
// it. An environment never used lost nothing.
func (o *Orchestrator) noteReplaced(e *entry, removed bool) {
	e.mu.Lock()
	running, used := e.running, e.used
	e.mu.Unlock()
	if !used || len(o.replaced) >= maxReplacedNotes {
		return
	}
	what := stoppedBecause(e, removed)
	n := replacedNote{text: "[" + what + "; its state from before was lost.]"}
	if running != "" {
		n = replacedNote{lost: true, text: fmt.Sprintf("[%s: the command that was running, %q, was lost with the program's state.]", what, envs.Abbrev(running))}
	}
	if o.replaced == nil {
		o.replaced = map[string]replacedNote{}
	}
	o.replaced[e.name] = n
}

// takeReplaced returns and forgets the note for the next command to name.
func (o *Orchestrator) takeReplaced(name string) (replacedNote, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, ok := o.replaced[name]
	delete(o.replaced, name)
	return n, ok
}
