package editor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/session"
)

// Name is the editor's environment name: the orchestrator registers it under
// this name and the help fences its examples with it.
const Name = "editor"

// Defaults for the [Option] values.
const (
	// DefaultMaxFileSize is the largest file, in bytes, the editor reads.
	DefaultMaxFileSize = 64 << 20
	// DefaultMaxMatches is how many matching lines a search lists.
	DefaultMaxMatches = 100
	// DefaultMaxFiles is how many files a search looks at.
	DefaultMaxFiles = 100_000
)

// Option configures an [Editor].
type Option func(*options)

type options struct {
	maxFileSize int64
	maxMatches  int
	maxFiles    int
}

// WithMaxFileSize sets the largest file, in bytes, the editor views, edits
// or searches (default [DefaultMaxFileSize]). Larger files are refused with
// a message saying so, and skipped by search.
func WithMaxFileSize(n int64) Option { return func(o *options) { o.maxFileSize = n } }

// WithMaxMatches sets how many matching lines a search lists (default
// [DefaultMaxMatches]); the response says how many more there are.
func WithMaxMatches(n int) Option { return func(o *options) { o.maxMatches = n } }

// WithMaxFiles sets how many files one search looks at (default
// [DefaultMaxFiles]); the response says when it stopped early.
func WithMaxFiles(n int) Option { return func(o *options) { o.maxFiles = n } }

// Editor is the editor environment: views of files bounded by regular
// expressions, re-read on every screen; line edits checked against what the
// views showed; search; and file creation. Every path is confined to the
// project root. It is a [envs.Declarative] environment, so its help is long
// for commands not used yet and short for used ones.
//
// Create one with [New] (a directory on disk) or [NewFs] (any afero
// filesystem). An Editor is safe for concurrent use; commands run one at a
// time, and Screen does not wait for a running command.
type Editor struct {
	decl     *envs.Declarative
	fs       afero.Fs
	rootDirs []string // absolute forms of the root directory; empty for NewFs
	opt      options

	mu     sync.Mutex // guards views and nextID
	views  []*view    // oldest first
	nextID int
}

var (
	_ envs.Env        = (*Editor)(nil)
	_ envs.Closer     = (*Editor)(nil)
	_ envs.Summarizer = (*Editor)(nil)
)

// rawKey is the context key under which Execute hands the full command text
// to the handlers: the declarative layer trims trailing white space from
// the arguments, and edit and create must keep their content exact.
type rawKey struct{}

// New returns an editor for the project directory root, recording help
// usage in sess (nil for a private session). Files are reached through an
// [os.Root], so no path, symbolic links included, leads outside root.
// Close releases the root.
func New(root string, sess *session.Session, opts ...Option) (*Editor, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("editor: new: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("editor: new: %s is not a directory; give the project directory", root)
	}
	rfs, err := NewRootFs(root)
	if err != nil {
		return nil, fmt.Errorf("editor: new: %w", err)
	}
	e, err := newEditor(rfs, sess, rfs.Close, opts)
	if err != nil {
		_ = rfs.Close()
		return nil, err
	}
	if abs, err := filepath.Abs(root); err == nil {
		e.rootDirs = append(e.rootDirs, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			e.rootDirs = append(e.rootDirs, real)
		}
	}
	return e, nil
}

// NewFs returns an editor over fsys, whose root is the project root,
// recording help usage in sess (nil for a private session). Paths with ".."
// leading out and absolute paths are refused; fsys itself must keep
// symbolic links inside (an in-memory filesystem has none). Tests use it
// with [afero.NewMemMapFs].
func NewFs(fsys afero.Fs, sess *session.Session, opts ...Option) (*Editor, error) {
	if fsys == nil {
		return nil, errors.New("editor: new: nil filesystem")
	}
	return newEditor(fsys, sess, nil, opts)
}

func newEditor(fsys afero.Fs, sess *session.Session, closeFs func() error, opts []Option) (*Editor, error) {
	o := options{maxFileSize: DefaultMaxFileSize, maxMatches: DefaultMaxMatches, maxFiles: DefaultMaxFiles}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.maxFileSize < 1:
		return nil, fmt.Errorf("editor: new: max file size %d: want a positive number of bytes", o.maxFileSize)
	case o.maxMatches < 1:
		return nil, fmt.Errorf("editor: new: max matches %d: want a positive number", o.maxMatches)
	case o.maxFiles < 1:
		return nil, fmt.Errorf("editor: new: max files %d: want a positive number", o.maxFiles)
	}
	e := &Editor{fs: fsys, opt: o, nextID: 1}
	decl, err := envs.NewDeclarative(Name, sess, envs.DeclarativeSpec{
		Description: "Editor: views of files bounded by regex patterns, line edits, search",
		Commands:    e.commands(),
		State:       e.state,
		Close:       closeFs,
	})
	if err != nil {
		return nil, fmt.Errorf("editor: new: %w", err)
	}
	e.decl = decl
	return e, nil
}

// commands declares the seven commands with the help texts of the
// help-system design.
func (e *Editor) commands() []envs.Command {
	return []envs.Command{
		{
			Signature:   "view <file> /<start>/ /<end>/ [label]",
			Description: "View a section of a file using regex patterns to define boundaries.\nPatterns are Go RE2 regex. Multiple matches can be navigated with next_match/prev_match.",
			Summary:     "View file section by regex patterns",
			Example:     "view src/main.py /^def main/ /^if __name__/",
			Handler:     e.handle(e.view),
		},
		{
			Signature:   "edit <file> <start>-<end>",
			Description: "Replace lines with new content. Lines must be visible in a view.\nContent is provided on subsequent lines after the command.",
			Summary:     "Replace lines (must be visible in a view)",
			Example:     "edit src/main.py 45-50\ndef process(verbose=False):\n    if not verbose:\n        return",
			Handler:     e.handle(e.edit),
		},
		{
			Signature:   `search "<pattern>" <glob>`,
			Description: "Find all occurrences of pattern in files matching glob.\nReturns filepath:line_number for each match.",
			Summary:     "Find text matching pattern in files",
			Example:     `search "TODO" *.py`,
			Handler:     e.handle(e.search),
		},
		{
			Signature:   "create <file>",
			Description: "Create a new file with initial content.\nContent is provided on subsequent lines after the command.",
			Example:     "create new_file.py\n# New module",
			Handler:     e.handle(e.create),
		},
		{Signature: "close <id>", Description: "Close a view", Handler: e.handle(e.close)},
		{Signature: "next_match <id>", Description: "Show next pattern match for a view", Handler: e.handle(e.nextMatch)},
		{Signature: "prev_match <id>", Description: "Show previous pattern match for a view", Handler: e.handle(e.prevMatch)},
	}
}

// handle adapts a command function to an [envs.Handler]: it parses the
// full command text Execute put in the context.
func (e *Editor) handle(run func(context.Context, command) (string, error)) envs.Handler {
	return func(ctx context.Context, args string) (string, error) {
		text, ok := ctx.Value(rawKey{}).(string)
		if !ok {
			return "", errors.New("command text missing; send commands through Editor.Execute")
		}
		c, err := parse(text)
		if err != nil {
			return "", err
		}
		return run(ctx, c)
	}
}

// Execute runs one editor command. The first line holds the command and
// its arguments; for edit and create the lines after it are the content,
// taken exactly. A command that fails is a response with Success false
// whose output says why and what to do.
func (e *Editor) Execute(ctx context.Context, command string) (envs.Response, error) {
	return e.decl.Execute(context.WithValue(ctx, rawKey{}, command), command)
}

// Screen returns the views, each file re-read now, then the commands'
// help. A view whose file is gone or whose start pattern no longer matches
// is shown once with a mark and removed. MaxLines is the screen's own line
// count (at least [envs.DefaultMaxLines]): the views are already bounded,
// and a cut view would hide lines the agent may edit.
func (e *Editor) Screen() (envs.Screen, error) {
	s, err := e.decl.Screen()
	if err != nil {
		return s, err
	}
	s.MaxLines = max(s.MaxLines, strings.Count(s.Content, "\n")+1)
	return s, nil
}

// Summary describes the editor in one line: "Editor (no views)",
// "Editor (1 view: src/main.go)", "Editor (3 views)".
func (e *Editor) Summary() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch len(e.views) {
	case 0:
		return "Editor (no views)"
	case 1:
		return "Editor (1 view: " + strings.ToValidUTF8(strings.ReplaceAll(e.views[0].path, "\n", " "), "\uFFFD") + ")"
	}
	return "Editor (" + strconv.Itoa(len(e.views)) + " views)"
}

// Session returns the session that records the editor's help usage.
func (e *Editor) Session() *session.Session { return e.decl.Session() }

// Close releases the editor's filesystem root (for [New]); later commands
// fail. It is idempotent.
func (e *Editor) Close() error { return e.decl.Close() }

// state renders the views for the screen, re-reading each file once, and
// removes the views that could not be shown.
func (e *Editor) state() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.views) == 0 {
		return "Views:\n  (no views)"
	}
	type read struct {
		data []byte
		err  error
	}
	files := make(map[string]read, len(e.views))
	var b strings.Builder
	b.WriteString("Views:")
	kept := make([]*view, 0, len(e.views))
	for i, v := range e.views {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
		r, ok := files[v.path]
		if !ok {
			data, _, err := readText(e.fs, v.path, e.opt.maxFileSize)
			r = read{data, err}
			files[v.path] = r
		}
		if r.err != nil {
			v.header(&b)
			b.WriteByte(' ')
			b.WriteString(markerOf(r.err))
			continue
		}
		sec, ok := resolve(r.data, v.start, v.end, v.index, false)
		if !ok {
			v.header(&b)
			b.WriteString(" [BROKEN: patterns not found]")
			continue
		}
		v.index, v.shown = sec.index, sec
		v.render(&b)
		kept = append(kept, v)
	}
	e.views = kept
	return b.String()
}

// markerOf returns the screen mark for a read error.
func markerOf(err error) string {
	var fe *fileError
	if errors.As(err, &fe) {
		return fe.marker()
	}
	return "[ERROR: " + err.Error() + "]"
}

// find returns the view with id, or nil. e.mu must be held.
func (e *Editor) find(id int) *view {
	for _, v := range e.views {
		if v.id == id {
			return v
		}
	}
	return nil
}

// noSuchView explains a view id that is not open. e.mu must be held.
func (e *Editor) noSuchView(id int) error {
	if len(e.views) == 0 {
		return fmt.Errorf("no view [%d]: no views are open; open one with view <file> /<start>/ /<end>/", id)
	}
	ids := make([]string, len(e.views))
	for i, v := range e.views {
		ids[i] = "[" + strconv.Itoa(v.id) + "]"
	}
	return fmt.Errorf("no view [%d]; open views: %s", id, strings.Join(ids, ", "))
}

func (e *Editor) view(_ context.Context, c command) (string, error) {
	p, err := e.resolvePath(c.path)
	if err != nil {
		return "", err
	}
	start, err := compilePattern("start", c.start)
	if err != nil {
		return "", err
	}
	end, err := compilePattern("end", c.end)
	if err != nil {
		return "", err
	}
	data, _, err := readText(e.fs, p, e.opt.maxFileSize)
	if err != nil {
		return "", fmt.Errorf("%w; view not created", err)
	}
	if len(data) == 0 {
		return "", fmt.Errorf("%s is empty, so no line matches /%s/; view not created", p, c.start)
	}
	sec, ok := resolve(data, start, end, 0, false)
	if !ok {
		return "", fmt.Errorf("no line of %s matches the start pattern /%s/; view not created", p, c.start)
	}
	e.mu.Lock()
	v := &view{id: e.nextID, path: p, start: start, end: end, label: c.label, shown: sec}
	e.nextID++
	e.views = append(e.views, v)
	var closed *view
	if len(e.views) > maxViews {
		closed = e.views[0]
		e.views = slices.Delete(e.views, 0, 1)
	}
	e.mu.Unlock()
	out := fmt.Sprintf("Added view [%d] %s /%s/ to /%s/", v.id, p, c.start, c.end)
	if closed != nil {
		out += fmt.Sprintf("\nClosed view [%d] %s: at most %d views are kept, so the oldest was closed", closed.id, closed.path, maxViews)
	}
	return out, nil
}

func (e *Editor) close(_ context.Context, c command) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, v := range e.views {
		if v.id == c.id {
			e.views = slices.Delete(e.views, i, i+1)
			return fmt.Sprintf("Closed view [%d]", c.id), nil
		}
	}
	return "", e.noSuchView(c.id)
}

func (e *Editor) nextMatch(ctx context.Context, c command) (string, error) {
	return e.move(ctx, c, +1)
}

func (e *Editor) prevMatch(ctx context.Context, c command) (string, error) {
	return e.move(ctx, c, -1)
}

// move shows the view's next (step +1) or previous (-1) match, wrapping
// around.
func (e *Editor) move(_ context.Context, c command, step int) (string, error) {
	e.mu.Lock()
	v := e.find(c.id)
	if v == nil {
		err := e.noSuchView(c.id)
		e.mu.Unlock()
		return "", err
	}
	p, start, end, index := v.path, v.start, v.end, v.index
	e.mu.Unlock()
	data, _, err := readText(e.fs, p, e.opt.maxFileSize)
	if err != nil {
		return "", fmt.Errorf("view [%d]: %w", c.id, err)
	}
	sec, ok := resolve(data, start, end, index+step, true)
	if !ok {
		return "", fmt.Errorf("view [%d]: no line of %s matches /%s/ any more; the screen shows it broken and removes it", c.id, p, start.src)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if v = e.find(c.id); v == nil {
		return "", e.noSuchView(c.id)
	}
	v.index, v.shown = sec.index, sec
	return fmt.Sprintf("Showing match %d/%d", sec.index+1, sec.count), nil
}

func (e *Editor) create(_ context.Context, c command) (string, error) {
	p, err := e.resolvePath(c.path)
	if err != nil {
		return "", err
	}
	q := quotePath(p)
	if fi, err := e.fs.Stat(p); err == nil {
		if fi.IsDir() {
			return "", fmt.Errorf("%s is a directory; create makes files", p)
		}
		return "", fmt.Errorf("%s already exists; create only makes new files, so nothing was written.\nTo change it, open a view of the lines (view %s /<start>/ /<end>/), then edit them (edit %s <start>-<end>)", p, q, q)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", classify(p, err)
	}
	if dir := path.Dir(p); dir != "." {
		if err := e.fs.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("cannot create the directory %s: %w", dir, classify(dir, err))
		}
	}
	content := c.content
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	f, err := e.fs.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("%s already exists; create only makes new files", p)
		}
		return "", classify(p, err)
	}
	_, err = f.Write([]byte(content))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = e.fs.Remove(p)
		return "", fmt.Errorf("cannot write %s: %v; nothing was created", p, err)
	}
	return "Created " + p, nil
}
