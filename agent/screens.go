package agent

import (
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/tools"
)

// screenBlock is one top-level environment section as rendered.
type screenBlock struct {
	path, text string
}

// screenBlocks splits the environments' render into one block per top-level
// section. Every block starts with its section's heading line, which the
// report gives; a block runs until the next one's heading.
func (r *run) screenBlocks() []screenBlock {
	if r.screens == nil {
		return nil
	}
	text := r.screens.Text()
	type head struct {
		path string
		at   int
	}
	var heads []head
	from := 0
	for _, s := range r.screens.Report() {
		if s.Depth != 0 || !s.Visible {
			continue
		}
		h := "## " + s.Number + " " + s.Title + " (" + s.Path + ")"
		at := -1
		if from == 0 && strings.HasPrefix(text, h) {
			at = 0
		} else if i := strings.Index(text[from:], "\n\n"+h); i >= 0 {
			at = from + i + 2
		}
		if at < 0 {
			continue
		}
		heads = append(heads, head{s.Path, at})
		from = at + len(h)
	}
	blocks := make([]screenBlock, len(heads))
	for i, h := range heads {
		end := len(text)
		if i+1 < len(heads) {
			end = heads[i+1].at
		}
		blocks[i] = screenBlock{h.path, strings.TrimRight(text[h.at:end], "\n")}
	}
	return blocks
}

// screenUpdate returns the environment screens that changed since they were
// last sent (all of them when initial), and remembers them as sent; it
// names the environments sent before that are gone (their spec files were
// removed). It is "" when there are no environments, or, outside text
// mode, when nothing changed.
func (r *run) screenUpdate(initial bool) string {
	blocks := r.screenBlocks()
	gone := r.goneScreens()
	if len(blocks) == 0 && len(gone) == 0 {
		return ""
	}
	var changed []string
	var same []string
	for _, b := range blocks {
		if !initial && r.sent[b.path] == b.text {
			same = append(same, b.path)
			continue
		}
		r.sent[b.path] = b.text
		changed = append(changed, b.text)
	}
	var sb strings.Builder
	switch {
	case len(changed) > 0 && initial:
		sb.WriteString("Environment screens:\n\n")
	case len(changed) > 0:
		sb.WriteString("Environment screens that changed:\n\n")
	case len(gone) == 0 && r.a.cfg.Actions == ActionsText:
		return "Environment screens: unchanged."
	case len(gone) == 0:
		return ""
	}
	sb.WriteString(strings.Join(changed, "\n\n"))
	if len(changed) > 0 && len(same) > 0 {
		sb.WriteString("\n\n(Unchanged: " + strings.Join(same, ", ") + ".)")
	}
	if len(gone) > 0 {
		if sb.Len() > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString("Environments gone, their spec files removed: " + strings.Join(gone, ", ") + ".")
	}
	return sb.String()
}

// goneScreens returns, sorted, the environments whose screens were sent
// and that are no longer there, and forgets them.
func (r *run) goneScreens() []string {
	there := map[string]bool{}
	if r.screens != nil {
		for _, s := range r.screens.Report() {
			there[s.Path] = true
		}
	}
	var gone []string
	for path := range r.sent {
		if !there[path] {
			gone = append(gone, path)
			delete(r.sent, path)
		}
	}
	slices.Sort(gone)
	return gone
}

// helpIndex describes what the run offers now, for the help tool.
func (r *run) helpIndex() tools.HelpIndex {
	var idx tools.HelpIndex
	if o := r.a.cfg.Orchestrator; o != nil {
		for _, name := range o.Names() {
			sum, _ := o.Summary(name)
			usage := "write a ```" + name + " code block with the command"
			if r.a.cfg.Actions == ActionsNative {
				if t, ok := r.byName[name]; ok && r.bridged(t) {
					usage = "call " + UseToolName + " with the name " + name + " and the command"
				} else if ok {
					usage = "call the " + name + " tool with the command"
				} else {
					usage = "open its section with open_sections first"
				}
			}
			idx.Environments = append(idx.Environments, tools.HelpEntry{Name: name, Description: sum, Usage: usage})
		}
	}
	for _, t := range r.offered {
		if r.a.envTool[t.Name()] == t {
			continue // listed as an environment
		}
		idx.Tools = append(idx.Tools, tools.HelpEntry{Name: t.Name(), Description: t.Description()})
	}
	idx.Sections = r.a.disc.HelpSections()
	return idx
}
