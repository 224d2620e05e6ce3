package prompt

import (
	"errors"
	"fmt"
	"slices"
)

// Replace puts p in place of part i's prompt and renders every part again,
// for prompts whose sections change while the session goes on (an MCP
// server whose tools changed, environments whose spec files changed). The
// session's overrides stay: a section whose path is still there keeps
// being shown as it was opened. It fails, changing nothing, when p has a
// section at a path another part has.
func (d *Disclosure) Replace(i int, p *Prompt) error {
	if p == nil {
		return errors.New("prompt: replace: nil prompt")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if i < 0 || i >= len(d.parts) {
		return fmt.Errorf("prompt: replace: no part %d; the disclosure has %d", i, len(d.parts))
	}
	if err := d.clash(i, p); err != nil {
		return fmt.Errorf("prompt: replace: %w", err)
	}
	old := d.parts[i].Prompt
	d.parts[i].Prompt = p
	if err := d.render(); err != nil {
		d.parts[i].Prompt = old
		return fmt.Errorf("prompt: replace: %w", err)
	}
	return nil
}

// Add appends part and renders every part again, for a prompt that comes
// to be while the session goes on (an agent's environments' sections,
// once its first environment is there). It fails, changing nothing, when
// part has no prompt or has a section at a path another part has.
func (d *Disclosure) Add(part Part) error {
	if part.Prompt == nil {
		return errors.New("prompt: add: nil prompt")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.clash(-1, part.Prompt); err != nil {
		return fmt.Errorf("prompt: add: %w", err)
	}
	d.parts = append(d.parts, part)
	if err := d.render(); err != nil {
		d.parts = d.parts[:len(d.parts)-1]
		return fmt.Errorf("prompt: add: %w", err)
	}
	return nil
}

// Remove takes part i away and renders the others again, for a prompt
// whose sections are all gone (an agent's last environment removed); the
// parts after it move down one. The session's overrides stay. It fails,
// changing nothing, for the only part.
func (d *Disclosure) Remove(i int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if i < 0 || i >= len(d.parts) {
		return fmt.Errorf("prompt: remove: no part %d; the disclosure has %d", i, len(d.parts))
	}
	if len(d.parts) == 1 {
		return errors.New("prompt: remove: a disclosure needs a prompt; this is its only part")
	}
	old := d.parts
	d.parts = slices.Delete(slices.Clone(d.parts), i, i+1)
	if err := d.render(); err != nil {
		d.parts = old
		return fmt.Errorf("prompt: remove: %w", err)
	}
	return nil
}

// clash reports a section of p at a path a part other than part i has,
// as the holder of mu.
func (d *Disclosure) clash(i int, p *Prompt) error {
	for j, part := range d.parts {
		if j == i {
			continue
		}
		for _, path := range p.t.Paths() {
			if _, dup := part.Prompt.t.index(path); dup {
				return fmt.Errorf("part %d already has a section %q: open_sections could not tell them apart; rename one", j+1, path)
			}
		}
	}
	return nil
}
