package editor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/rootfs"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
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
	// DefaultMaxUndo is how many bytes of earlier file contents the editor
	// keeps for undo, over all files.
	DefaultMaxUndo = 64 << 20
)

// Option configures an [Editor]: [WithMaxFileSize], [WithMaxMatches],
// [WithMaxFiles], [WithMaxUndo], [WithFallbackEncoding] and
// [WithPathGutters].
type Option func(*options)

type options struct {
	maxFileSize int64
	maxMatches  int
	maxFiles    int
	maxUndo     int64
	fallback    string // encoding name; "" for none
	gutter      bool
	dirEntries  int // entries of one directory a listing reads (maxDirEntries)
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

// WithMaxUndo sets how many bytes of earlier file contents the editor
// keeps for undo, over all files (default [DefaultMaxUndo]); past it the
// oldest steps are dropped. 0 turns undo off.
func WithMaxUndo(n int64) Option { return func(o *options) { o.maxUndo = n } }

// WithFallbackEncoding names the encoding of files that are neither UTF-8
// (with or without a byte order mark) nor UTF-16 with a byte order mark,
// and declare none in their first bytes: an IANA or WHATWG name such as
// "windows-1251", "ISO-8859-1" or "Shift_JIS". Without it, such a file is
// shown with U+FFFD for the bytes that are not UTF-8, and an edit of it may
// add ASCII only.
func WithFallbackEncoding(name string) Option { return func(o *options) { o.fallback = name } }

// WithPathGutters numbers the lines of views "path:N" instead of "N", so
// each line names its file and line as compilers do.
func WithPathGutters() Option { return func(o *options) { o.gutter = true } }

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
	fallback *namedEncoding // opt.fallback looked up; nil for none

	mu     sync.Mutex // guards views, nextID and undo
	views  []*view    // oldest first
	nextID int
	undo   undoLog

	// drawMu serializes Screen and Preview, and guards preview: whether
	// the screen being drawn is a preview, which the state function
	// reads.
	drawMu  sync.Mutex
	preview bool

	writeCheck atomic.Pointer[func(path string) error] // see SetWriteCheck
}

// SetWriteCheck makes every write of the editor (create, edit, undo) ask
// check first, with the absolute path of the file to be written (an editor
// made with [NewFs] gives the path in its filesystem); an error refuses
// the write, nothing is written, and the command's answer gives the
// error. A program that lets the model write files but not run programs
// uses it to keep the files of the programs it runs as they are.
func (e *Editor) SetWriteCheck(check func(path string) error) {
	e.writeCheck.Store(&check)
}

// mayWrite asks the write check, if any, about target, a path in e.fs.
func (e *Editor) mayWrite(target string) error {
	check := e.writeCheck.Load()
	if check == nil || *check == nil {
		return nil
	}
	path := target
	if len(e.rootDirs) > 0 {
		path = filepath.Join(e.rootDirs[0], filepath.FromSlash(target))
	}
	return (*check)(path)
}

var (
	_ envs.Env        = (*Editor)(nil)
	_ envs.Closer     = (*Editor)(nil)
	_ envs.Summarizer = (*Editor)(nil)
	_ envs.Hinter     = (*Editor)(nil)
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
	rfs, err := rootfs.New(root)
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
	o := options{maxFileSize: DefaultMaxFileSize, maxMatches: DefaultMaxMatches, maxFiles: DefaultMaxFiles, maxUndo: DefaultMaxUndo, dirEntries: maxDirEntries}
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
	case o.maxUndo < 0:
		return nil, fmt.Errorf("editor: new: max undo %d: want 0 or more bytes", o.maxUndo)
	}
	e := &Editor{fs: fsys, opt: o, nextID: 1}
	e.undo.limit = o.maxUndo
	if o.fallback != "" {
		ne, err := lookupEncoding(o.fallback)
		if err != nil {
			return nil, fmt.Errorf("editor: new: fallback encoding: %w", err)
		}
		e.fallback = &ne
	}
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

// commands declares the commands with the help texts of the help-system
// design, and undo.
func (e *Editor) commands() []envs.Command {
	return []envs.Command{
		{
			Signature:   "view <file> /<start>/ /<end>/ [label]",
			Description: "View a section of a file using regex patterns to define boundaries.\nPatterns are Go RE2 regex. Multiple matches can be navigated with next_match/prev_match.\nAlso: view <file> shows the whole file, view <file> 3-6 lines 3 to 6, view <dir> lists a directory.",
			Summary:     "View file section by regex patterns",
			Example:     "view src/main.py /^def main/ /^if __name__/",
			Handler:     e.handle(e.view),
		},
		{
			Signature:   "edit <file> <start>-<end>",
			Description: "Replace lines with new content. Lines must be visible in a view.\nContent is provided on subsequent lines after the command.\nNo content lines (the command, a newline, nothing more; in a fenced code block, one empty line before the closing fence) deletes the lines.",
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
		{Signature: "undo <file>", Description: "Undo the editor's last edit of a file", Handler: e.handle(e.undoEdit)},
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
// help, and counts it as shown to the agent: an edit is checked against
// the lines the last such screen drew. A view whose file is gone or whose
// start pattern no longer matches is shown once with a mark and removed.
// MaxLines is the screen's own line count (at least
// [envs.DefaultMaxLines]): the views fit a byte budget of their own
// instead, and a view cut there says which view command shows the next
// lines.
//
// Call Screen for a screen that goes to the agent (the one after the
// editor's own command, or one the front end shows), and [Editor.Preview]
// for any other: a screen drawn for a tool description or a resource poll
// must not make an edit based on older lines pass.
func (e *Editor) Screen() (envs.Screen, error) { return e.draw(false) }

// QuickScreen marks the editor's screen as one that never blocks (see
// orchestrator.QuickScreener): it reads the viewed regular files, bounded
// in size, under locks its commands hold while they edit them.
func (e *Editor) QuickScreen() {}

// Preview returns the screen as [Editor.Screen] does, without counting it
// as shown: the lines edits are checked against, the views' positions and
// the views to remove stay as the last Screen or command left them.
func (e *Editor) Preview() (envs.Screen, error) { return e.draw(true) }

func (e *Editor) draw(preview bool) (envs.Screen, error) {
	e.drawMu.Lock()
	e.preview = preview
	s, err := e.decl.Screen()
	e.preview = false
	e.drawMu.Unlock()
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
		return "Editor (1 view: " + showPath(e.views[0].path) + ")"
	}
	return "Editor (" + strconv.Itoa(len(e.views)) + " views)"
}

// Hints says that the editor's commands may overwrite and delete text,
// and reach nothing but the files under its root.
func (e *Editor) Hints() tools.Hints { return tools.Hints{Destructive: true} }

// Session returns the session that records the editor's help usage.
func (e *Editor) Session() *session.Session { return e.decl.Session() }

// Close releases the editor's filesystem root (for [New]); later commands
// fail. It is idempotent.
func (e *Editor) Close() error { return e.decl.Close() }
