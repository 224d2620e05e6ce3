package prompt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// ContextDir is the folder open_sections writes content-only sections to.
const ContextDir = "context"

// ErrVisibilityExpansion is matched (errors.Is) by the error open_sections
// returns when a requested section carries tools: the caller must apply the
// overrides ([ApplyExpansion]) and render again to offer the new tools.
var ErrVisibilityExpansion = errors.New("visibility expansion required")

// VisibilityExpansionError carries what open_sections was asked to open when
// a requested section carries tools.
type VisibilityExpansionError struct {
	Keys      []string                   // the requested keys, in request order
	Reason    string                     // the model's reason
	Overrides map[string]visibility.Mode // FULL for every requested path and its summarized ancestors
}

func (e *VisibilityExpansionError) Error() string {
	return fmt.Sprintf("visibility expansion required for %s", strings.Join(e.Keys, ", "))
}

// Is makes errors.Is(err, ErrVisibilityExpansion) true.
func (e *VisibilityExpansionError) Is(target error) bool { return target == ErrVisibilityExpansion }

// Paths returns the overridden paths, sorted, so applying them is
// deterministic.
func (e *VisibilityExpansionError) Paths() []string {
	ps := make([]string, 0, len(e.Overrides))
	for p := range e.Overrides {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// ApplyExpansion dispatches a visibility.SetOverride event to sess for every
// override err carries (err must match ErrVisibilityExpansion), installing the
// overrides slice first if needed. Render again afterwards.
func ApplyExpansion(sess *session.Session, err error) error {
	var ve *VisibilityExpansionError
	if !errors.As(err, &ve) {
		return fmt.Errorf("prompt: apply expansion: not a visibility expansion error: %v", err)
	}
	if sess == nil {
		return errors.New("prompt: apply expansion: nil session")
	}
	if err := visibility.Register(sess); err != nil {
		return fmt.Errorf("prompt: apply expansion: %w", err)
	}
	var errs []error
	for _, p := range ve.Paths() {
		if err := sess.Dispatch(visibility.SetOverride{Path: p, Mode: ve.Overrides[p]}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("prompt: apply expansion: %w", err)
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
func (r OpenSectionsResult) String() string {
	return "Section content written to: " + strings.Join(r.WrittenFiles, ", ")
}

const openSectionsDescription = "Open summarized sections of this prompt. Sections that offer tools are expanded in place and their tools become available; content-only sections are written to context/<key>.md for you to read."

func (r *Rendered) openSectionsTool() *tools.Tool {
	return tools.MustNew(OpenSectionsName, openSectionsDescription, r.openSections)
}

// openSections is the open_sections handler, bound to this render: what is
// "already expanded" is what the model was shown.
func (r *Rendered) openSections(_ context.Context, tc tools.Context, in OpenSectionsInput) (OpenSectionsResult, error) {
	if len(in.SectionKeys) == 0 {
		return OpenSectionsResult{}, errors.New("At least one section key must be provided.")
	}
	t := r.p.t
	pr := r.p.prepare()
	idx := make([]int, 0, len(in.SectionKeys))
	seen := make(map[string]bool, len(in.SectionKeys))
	withTools := false
	for _, key := range in.SectionKeys {
		i, ok := t.index(key)
		if !ok || !pr.enabled[i] {
			return OpenSectionsResult{}, fmt.Errorf("Section '%s' does not exist in this prompt.", key)
		}
		if seen[key] {
			return OpenSectionsResult{}, fmt.Errorf("Section '%s' is listed more than once.", key)
		}
		seen[key] = true
		if r.visible[i] && r.modes[i] == visibility.Full {
			return OpenSectionsResult{}, fmt.Errorf("Section '%s' is already expanded.", key)
		}
		withTools = withTools || pr.hasTools[i]
		idx = append(idx, i)
	}
	if withTools {
		ov := make(map[string]visibility.Mode, len(idx))
		for _, i := range idx {
			for a := i; a >= 0; a = t.nodes[a].parent {
				if a == i || r.modes[a] != visibility.Full {
					ov[t.nodes[a].path] = visibility.Full
				}
			}
		}
		return OpenSectionsResult{}, tools.Halt(&VisibilityExpansionError{
			Keys:      slices.Clone(in.SectionKeys),
			Reason:    in.Reason,
			Overrides: ov,
		})
	}
	fs := tc.FS
	if fs == nil {
		fs = r.fs
	}
	if fs == nil {
		return OpenSectionsResult{}, errors.New("Cannot write context files: no filesystem available.")
	}
	written := make([]string, 0, len(idx))
	for _, i := range idx {
		p := t.nodes[i].path
		name, err := r.writeContext(fs, i)
		if err != nil {
			return OpenSectionsResult{}, fmt.Errorf("Failed to write context for '%s': %v", p, err)
		}
		written = append(written, name)
	}
	return OpenSectionsResult{WrittenFiles: written}, nil
}

// writeContext writes node i and its enabled descendants, in full, as a
// standalone document, through a temporary file renamed into place so a
// failed write never leaves a half-written file.
func (r *Rendered) writeContext(fs afero.Fs, i int) (string, error) {
	doc, err := r.p.Standalone(r.p.t.nodes[i].path)
	if err != nil {
		return "", err
	}
	name := path.Join(ContextDir, r.p.t.nodes[i].path+".md")
	if err := fs.MkdirAll(ContextDir, 0o755); err != nil {
		return "", err
	}
	// A temporary file of its own, so concurrent opens of one section
	// never rename each other's file away.
	f, err := afero.TempFile(fs, ContextDir, "."+r.p.t.nodes[i].path+".*.tmp")
	if err != nil {
		return "", err
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
		return "", fileError(err, tmp, name)
	}
	return name, nil
}

// fileError names the context file rather than the temporary one, which the
// model never sees.
func fileError(err error, tmp, name string) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return errors.New(strings.ReplaceAll(err.Error(), tmp, name))
}

// Standalone renders the section at path and its enabled descendants in full
// as a document of their own: the section's heading is "## Title (path)"
// without a number, each descendant one level deeper, and no summaries or
// suffixes. It is what open_sections writes to context/<path>.md.
func (p *Prompt) Standalone(sectionPath string) (string, error) {
	t := p.t
	i, ok := t.index(sectionPath)
	if !ok {
		return "", fmt.Errorf("prompt: standalone: no section %q", sectionPath)
	}
	pr := p.prepare()
	if pr.err != nil {
		return "", pr.err
	}
	if !pr.enabled[i] {
		return "", fmt.Errorf("prompt: standalone: section %q is disabled", sectionPath)
	}
	var b strings.Builder
	var walk func(j, depth int) error
	walk = func(j, depth int) error {
		n := &t.nodes[j]
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(strings.Repeat("#", min(depth+2, 6)) + " " + n.sec.Title() + " (" + n.path + ")")
		body, err := p.body(j, depth)
		if err != nil {
			return err
		}
		if body != "" {
			b.WriteString("\n\n")
			b.WriteString(body)
		}
		for _, c := range n.children {
			if pr.enabled[c] {
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
