package prompt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/internal/printable"
	"github.com/unfold-dev/unfold/internal/utf8cut"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// ContextDir is the folder open_sections writes content-only sections to.
const ContextDir = "context"

// ErrVisibilityExpansion is matched (errors.Is) by the error open_sections
// returns when a requested section carries tools: the caller must apply the
// overrides ([ApplyExpansion]) and render again to offer the new tools. A
// [Disclosure] does both itself.
var ErrVisibilityExpansion = errors.New("visibility expansion required")

// Overrides maps section paths to the mode the session should show them in:
// what opening sections asks of a session before the prompt renders again.
type Overrides map[string]visibility.Mode

// Paths returns the overridden paths, sorted, so applying them is
// deterministic.
func (o Overrides) Paths() []string { return slices.Sorted(maps.Keys(o)) }

// Apply dispatches a visibility.SetOverride event to sess for every path, in
// path order, installing the overrides slice first if needed.
func (o Overrides) Apply(sess *session.Session) error {
	if sess == nil {
		return errors.New("prompt: apply overrides: nil session")
	}
	if err := visibility.Register(sess); err != nil {
		return fmt.Errorf("prompt: apply overrides: %w", err)
	}
	var errs []error
	for _, p := range o.Paths() {
		if err := sess.Dispatch(visibility.SetOverride{Path: p, Mode: o[p]}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("prompt: apply overrides: %w", err)
	}
	return nil
}

// VisibilityExpansionError carries what open_sections was asked to open when
// a requested section carries tools.
type VisibilityExpansionError struct {
	Keys   []string // the requested keys, in request order, each once
	Reason string   // the model's reason
	// Overrides are FULL for every requested path and its summarized
	// ancestors. A tool that does not know the latest render may leave them
	// nil: a [Disclosure] then opens Keys as [Rendered.Open] would.
	Overrides Overrides
	// Answer is what the tool says besides asking for the opening; the
	// answer to the call carries it.
	Answer string
}

// Error names the sections to open and why: "open sections: db.schema,
// db.queries. Reason: …".
func (e *VisibilityExpansionError) Error() string {
	msg := "open sections: " + strings.Join(e.Keys, ", ")
	if r := strings.TrimSpace(e.Reason); r != "" {
		msg += ". Reason: " + r
	}
	return msg
}

// Is makes errors.Is(err, ErrVisibilityExpansion) true.
func (e *VisibilityExpansionError) Is(target error) bool { return target == ErrVisibilityExpansion }

// Paths returns the overridden paths, sorted.
func (e *VisibilityExpansionError) Paths() []string { return e.Overrides.Paths() }

// ApplyExpansion dispatches a visibility.SetOverride event to sess for every
// override err carries (err must match ErrVisibilityExpansion; a join of
// several is applied whole), installing the overrides slice first if
// needed. Render again afterwards.
func ApplyExpansion(sess *session.Session, err error) error {
	list := expansions(err)
	if len(list) == 0 {
		return fmt.Errorf("prompt: apply expansion: not a visibility expansion error: %v", err)
	}
	all := Overrides{}
	for _, ve := range list {
		maps.Copy(all, ve.Overrides)
	}
	if err := all.Apply(sess); err != nil {
		return fmt.Errorf("prompt: apply expansion: %w", err)
	}
	return nil
}

// expansions lists the expansion errors err is or joins.
func expansions(err error) []*VisibilityExpansionError {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*VisibilityExpansionError
		for _, e := range j.Unwrap() {
			out = append(out, expansions(e)...)
		}
		return out
	}
	var ve *VisibilityExpansionError
	if errors.As(err, &ve) {
		return []*VisibilityExpansionError{ve}
	}
	return nil
}

// OpenSectionsInput is the input of the open_sections tool.
type OpenSectionsInput struct {
	SectionKeys []string `json:"section_keys" description:"Dotted keys of the summarized sections to open, such as \"reference\" or \"guidelines.code-style\"."`
	Reason      string   `json:"reason" description:"Why the full content is needed."`
}

// OpenSectionsResult is the output of the open_sections tool.
type OpenSectionsResult struct {
	WrittenFiles []string `json:"written_files"`
}

// String is the message the model reads.
func (r OpenSectionsResult) String() string { return writtenMessage(r.WrittenFiles) }

// writtenMessage is the answer for content written to context files
// (docs/design.md, open_sections).
func writtenMessage(files []string) string {
	return "Section content written to: " + strings.Join(files, ", ")
}

const openSectionsDescription = "Open summarized sections of this prompt. Sections that offer tools are expanded in place and their tools become available; content-only sections are written to context/<key>.md for you to read."

// The failures open_sections answers with (docs/design.md, exact).
const (
	msgNoKeys      = "At least one section key must be provided."
	msgTooManyKeys = "At most %d section keys can be opened at a time; %d were given. Open the sections needed now."
	msgUnknown     = "Section '%s' does not exist in this prompt."
	msgExpanded    = "Section '%s' is already expanded."
	// msgSummarizedBelow follows msgExpanded when sections below carry
	// tools and are summarized.
	msgSummarizedBelow = "These sections in it, with tools, are summarized: %s; open them by these keys."
	msgNoFilesystem    = "Cannot write context files: no filesystem available."
	msgWriteFailed     = "Failed to write context for '%s': %v"
)

// maxShownKey bounds the bytes of an unknown key quoted back to the
// model: a key from a model caught in a repetition loop can be megabytes
// long, and the answer would cost as many tokens.
const maxShownKey = 200

// unknownSection is msgUnknown for key, shown at most maxShownKey bytes
// long and with the characters a terminal or a model would misread
// escaped.
func unknownSection(key string) error {
	shown := utf8cut.Prefix(key, maxShownKey)
	if len(shown) == len(key) {
		return fmt.Errorf(msgUnknown, printable.String(key))
	}
	return fmt.Errorf(msgUnknown+" (The key is %d bytes long; only its first %d are shown.)", printable.String(shown)+"…", len(key), len(shown))
}

// openSectionsHints are open_sections' account of itself: it changes what
// the session shows and writes context files of its own (context/<key>.md,
// the section's content, again the same on a second call), reaching
// nothing outside the prompt.
var openSectionsHints = tools.Hints{Idempotent: true}

func (r *Rendered) openSectionsTool() *tools.Tool {
	return tools.MustNew(OpenSectionsName, openSectionsDescription, r.openSections).WithHints(openSectionsHints)
}

// openSections is the open_sections handler, bound to this render: what is
// "already expanded" is what the model was shown.
func (r *Rendered) openSections(_ context.Context, tc tools.Context, in OpenSectionsInput) (OpenSectionsResult, error) {
	keys, err := requestedKeys(in.SectionKeys)
	if err != nil {
		return OpenSectionsResult{}, err
	}
	req, err := r.request(keys)
	if err != nil {
		return OpenSectionsResult{}, err
	}
	if req.withTools {
		return OpenSectionsResult{}, tools.Halt(&VisibilityExpansionError{Keys: keys, Reason: in.Reason, Overrides: r.overrides(req.idx)})
	}
	files, err := r.writeContexts(orFS(tc.FS, r.fs), req.idx)
	return OpenSectionsResult{WrittenFiles: files}, err
}

// maxOpenKeys bounds the keys of one open_sections call, so that one call
// cannot hold the prompt for long: more than any prompt a model reads has
// sections to open at once.
const maxOpenKeys = 1024

// requestedKeys returns the keys of an open_sections call without repeats,
// or its failure: none, or more than maxOpenKeys.
func requestedKeys(keys []string) ([]string, error) {
	keys = uniqueKeys(keys)
	switch {
	case len(keys) == 0:
		return nil, errors.New(msgNoKeys)
	case len(keys) > maxOpenKeys:
		return nil, fmt.Errorf(msgTooManyKeys, maxOpenKeys, len(keys))
	}
	return keys, nil
}

// uniqueKeys returns keys without repeats, in first-seen order: a key listed
// twice opens once.
func uniqueKeys(keys []string) []string {
	out := make([]string, 0, len(keys))
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func orFS(fs, fallback afero.Fs) afero.Fs {
	if fs != nil {
		return fs
	}
	return fallback
}

// openRequest is an open_sections request checked against one render.
type openRequest struct {
	idx       []int // the requested nodes, in request order
	withTools bool  // some requested section carries tools
}

// request checks keys against what this render showed: every key names an
// enabled section that is not shown in full already. Its error is the
// message for the model. The check is all-or-nothing and touches nothing.
func (r *Rendered) request(keys []string) (openRequest, error) {
	t := r.p.t
	pr := r.pr
	req := openRequest{idx: make([]int, 0, len(keys))}
	for _, key := range keys {
		i, ok := t.index(key)
		if !ok || !pr.enabled(i) {
			return openRequest{}, unknownSection(key)
		}
		if r.st[i].is(visibleF) && r.st[i].mode == visibility.Full {
			return openRequest{}, r.expandedError(key, i)
		}
		req.withTools = req.withTools || pr.hasTools(i)
		req.idx = append(req.idx, i)
	}
	return req, nil
}

// expandedError is the failure of opening node i, shown in full already.
// When sections below it that carry tools are summarized (a section's
// tools opened one by one), it names them, so that the model can open
// them in one call: opening i again would not.
func (r *Rendered) expandedError(key string, i int) error {
	t := r.p.t
	var keys []string
	for j := i + 1; j < t.nodes[i].end && len(keys) < maxOpenKeys; {
		if r.pr.enabled(j) && r.pr.hasTools(j) && r.st[j].is(visibleF) && r.st[j].mode == visibility.Summary {
			keys = append(keys, "'"+t.nodes[j].path+"'")
			j = t.nodes[j].end
			continue
		}
		j++
	}
	if len(keys) == 0 {
		return fmt.Errorf(msgExpanded, key)
	}
	return fmt.Errorf(msgExpanded+" "+msgSummarizedBelow, key, strings.Join(keys, ", "))
}

// overrides returns FULL for every node of idx and for each of its
// ancestors this render did not show in full.
func (r *Rendered) overrides(idx []int) Overrides {
	t := r.p.t
	ov := make(Overrides, len(idx))
	for _, i := range idx {
		for a := i; a >= 0; a = t.nodes[a].parent {
			if a == i || r.st[a].mode != visibility.Full {
				ov[t.nodes[a].path] = visibility.Full
			}
		}
	}
	return ov
}

// Open returns the overrides that show the sections at keys in full, with
// their summarized ancestors: apply them to the session and render again.
// Unlike open_sections it writes no context file and opens content-only
// sections in place too. It fails for an unknown or disabled key, and for
// a folded section or a key below one (see [Prompt.Unfold]); a key already
// shown in full asks for nothing.
func (r *Rendered) Open(keys ...string) (Overrides, error) {
	var idx []int
	for _, key := range uniqueKeys(keys) {
		if f, ok := r.p.foldedAt(key); ok {
			return nil, fmt.Errorf("prompt: open %s: section %s is folded: its subsections are found when it opens; unfold the prompt at %s first (Prompt.Unfold) and render it again", key, r.p.t.nodes[f].path, key)
		}
		i, ok := r.p.t.index(key)
		if !ok || !r.pr.enabled(i) {
			return nil, fmt.Errorf("prompt: open %s: no such section; the sections are %s", key, strings.Join(r.p.t.Paths(), ", "))
		}
		if !r.st[i].is(visibleF) || r.st[i].mode != visibility.Full {
			idx = append(idx, i)
		}
	}
	return r.overrides(idx), nil
}

// writeContexts writes each node of idx to its context file, in order, and
// returns the file names.
func (r *Rendered) writeContexts(fs afero.Fs, idx []int) ([]string, error) {
	if fs == nil {
		return nil, errors.New(msgNoFilesystem)
	}
	written := make([]string, 0, len(idx))
	for _, i := range idx {
		name, err := r.writeContext(fs, i)
		if err != nil {
			return nil, fmt.Errorf(msgWriteFailed, r.p.t.nodes[i].path, err)
		}
		written = append(written, name)
	}
	return written, nil
}

// writeContext writes node i and its enabled descendants, in full, as a
// standalone document, through a temporary file renamed into place so a
// failed write never leaves a half-written file.
func (r *Rendered) writeContext(fs afero.Fs, i int) (string, error) {
	doc, err := r.Standalone(r.p.t.nodes[i].path)
	if err != nil {
		return "", err
	}
	name := path.Join(ContextDir, contextName(r.p.t.nodes[i].path))
	if err := fs.MkdirAll(ContextDir, 0o755); err != nil {
		return "", inTheWay(fs, ContextDir, true, err)
	}
	// A temporary file of its own, so concurrent opens of one section
	// never rename each other's file away; short, so that it fits where
	// the file's name does.
	f, err := afero.TempFile(fs, ContextDir, ".open-*.tmp")
	if err != nil {
		return "", fileError(err, "", name)
	}
	tmp := f.Name()
	_, err = f.Write([]byte(doc))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = fs.Rename(tmp, name)
	}
	if err != nil {
		_ = fs.Remove(tmp)
		return "", inTheWay(fs, name, false, fileError(err, tmp, name))
	}
	return name, nil
}

// inTheWay says what stands where the context directory (dir) or a
// context file goes when that is what made err: a file where the directory
// goes, a directory where the file goes.
func inTheWay(fs afero.Fs, name string, dir bool, err error) error {
	fi, serr := fs.Stat(name)
	switch {
	case serr != nil || fi.IsDir() == dir:
		return err
	case dir:
		return fmt.Errorf("%s is a file, not a directory; move or remove it so that context files can be written in a directory of that name", name)
	default:
		return fmt.Errorf("%s is a directory, not a file; move or remove it so that the section's context file can be written there", name)
	}
}

// maxContextName bounds a context file's name: a file system's names take
// 255 bytes.
const maxContextName = 255

// contextName is the name of the context file of the section at path,
// under ContextDir: the path and ".md", or, for a path too long to be a
// file's name (nested long keys), its start, a hash of the whole and
// ".md".
func contextName(path string) string {
	if len(path)+len(".md") <= maxContextName {
		return path + ".md"
	}
	sum := sha256.Sum256([]byte(path))
	return path[:200] + "-" + hex.EncodeToString(sum[:8]) + ".md"
}

// fileError names the context file rather than the temporary one (tmp,
// "" when it was not made), which the model never sees.
func fileError(err error, tmp, name string) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	if tmp == "" {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), tmp, name))
}

// Standalone renders the section at path and its enabled descendants in full
// as a document of their own: the section's heading is "## Title (path)"
// without a number, each descendant one level deeper, and no summaries or
// suffixes, but for a separate descendant ([section.Spec].Separate), which
// shows its summary and the line saying how to open it, and nothing below
// it. Sections whose enabled predicate reads the session
// ([section.Spec] EnabledIn) are asked with no session; see
// [Rendered.Standalone].
func (p *Prompt) Standalone(sectionPath string) (string, error) {
	return p.standalone(p.prepare(), sectionPath)
}

// Standalone is [Prompt.Standalone] with the sections this render
// enabled: what open_sections writes to context/<path>.md.
func (r *Rendered) Standalone(sectionPath string) (string, error) {
	return r.p.standalone(r.pr, sectionPath)
}

func (p *Prompt) standalone(pr *prepared, sectionPath string) (string, error) {
	t := p.t
	i, ok := t.index(sectionPath)
	if !ok {
		return "", fmt.Errorf("prompt: standalone: no section %q", sectionPath)
	}
	if pr.err != nil {
		return "", pr.err
	}
	if !pr.enabled(i) {
		return "", fmt.Errorf("prompt: standalone: section %q is disabled", sectionPath)
	}
	var b strings.Builder
	w := section.NewWork() // the templates of this document, all together
	var walk func(j, depth int) error
	walk = func(j, depth int) error {
		n := &t.nodes[j]
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(strings.Repeat("#", min(depth+2, 6)) + " " + n.sec.Title() + " (" + n.path + ")")
		if j != i && n.sec.Separate() {
			// It opens by its own key: its summary stands in for it.
			text, err := p.summaryText(w, j, summaryBlock)
			if err != nil {
				return err
			}
			b.WriteString("\n\n")
			b.WriteString(text)
			writeSuffix(&b, n.path, enabledKids{t.nodes, n.children, pr}, pr.hasTools(j))
			return tooLarge(&b, n.path)
		}
		body, err := p.body(w, j, depth)
		if err != nil {
			return err
		}
		if body != "" {
			b.WriteString("\n\n")
			b.WriteString(body)
		}
		if err := tooLarge(&b, n.path); err != nil {
			return err
		}
		for _, c := range n.children {
			if pr.enabled(c) {
				if err := walk(c, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(i, 0); err != nil {
		return "", err
	}
	b.WriteString("\n")
	return b.String(), nil
}
