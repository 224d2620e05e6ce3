package prompt

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// OpenError says that an opening was refused: with the requested sections
// shown in full, the prompts did not render; most often, a part did not fit
// its token budget (Err is then a [*BudgetError]). Nothing changed. Its
// message is written for the model, as a failed tool result.
type OpenError struct {
	Keys []string // the requested keys, in request order
	// Sections are, when a budget could not be met, the requested
	// sections with the tokens each would take in full, in tree order.
	Sections []SectionTokens
	Err      error // the render's error
}

func (e *OpenError) Error() string {
	be, ok := errors.AsType[*BudgetError](e.Err)
	if !ok {
		return fmt.Sprintf("%s could not be opened: %v. Nothing was opened.", sectionsNamed(e.Keys), e.Err)
	}
	named := e.Keys
	if len(e.Sections) > 0 {
		named = make([]string, len(e.Sections))
		for i, s := range e.Sections {
			named[i] = fmt.Sprintf("%s (%d tokens)", s.Path, s.Tokens)
		}
	}
	it, them := "it", "it"
	verb := "does"
	if len(named) > 1 {
		it, them, verb = "them", "them", "do"
	}
	return fmt.Sprintf("%s %s not fit the token budget of %d tokens: with %s open the prompt would take at least %d tokens. Nothing was opened. Open fewer or smaller sections, or go on without %s.",
		sectionsNamed(named), verb, be.Budget, it, be.Minimum, them)
}

// Unwrap returns the render's error, so errors.Is(err, ErrOverBudget)
// tells a budget apart.
func (e *OpenError) Unwrap() error { return e.Err }

// sectionsNamed is "Section a" or "Sections a, b".
func sectionsNamed(names []string) string {
	if len(names) == 1 {
		return "Section " + names[0]
	}
	return "Sections " + strings.Join(names, ", ")
}

// renderOpening renders every part with ov on trial: dispatched to a
// transaction's view of the session, committed when every part rendered
// and then succeeded (it builds what the answer needs from the trial
// renders), discarded otherwise, so that a refused opening leaves no event
// in the session. A failed render or then is an [*OpenError] for keys. The holder of
// mu calls it, and puts the parts back when it fails.
func (d *Disclosure) renderOpening(keys []string, ov Overrides, then func() error) error {
	tx := d.sess.Begin()
	if err := ov.Apply(tx.Session()); err != nil {
		tx.Discard()
		return err
	}
	if err := d.renderIn(tx.Session()); err != nil {
		tx.Discard()
		refused := &OpenError{Keys: keys, Err: err}
		if be, ok := errors.AsType[*BudgetError](err); ok {
			for _, s := range be.Opened {
				if slices.Contains(keys, s.Path) {
					refused.Sections = append(refused.Sections, s)
				}
			}
		}
		return refused
	}
	if err := then(); err != nil {
		tx.Discard()
		return &OpenError{Keys: keys, Err: err}
	}
	return tx.Commit()
}

// Refit renders every part, as [Disclosure.Render] does, and when a part
// does not fit its budget with the sections the session opened (a session
// saved by a run with a larger budget, or one whose openings were never
// checked against a budget), closes them, the most recently opened first,
// until every part renders; then it leaves open again each of those whose
// closing turned out not to be needed (the others closed, every part
// renders with it open). It returns the paths it closed, in the order
// closed: never one no part has, nor one whose closing changed nothing.
// Closing dispatches a visibility.ClearOverride event for each, all at
// once when the render succeeded; when even closing them all does not
// help, Refit dispatches nothing and returns the render's error.
func (d *Disclosure) Refit() ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	err := d.render()
	if !errors.Is(err, ErrOverBudget) {
		return nil, err
	}
	var closed []string
	for _, p := range d.openedNewestFirst() {
		closed = append(closed, p)
		ok, cerr := d.fitsClosing(closed)
		if cerr != nil {
			return nil, cerr
		}
		if !ok {
			continue
		}
		for i := 0; i < len(closed)-1; {
			rest := slices.Delete(slices.Clone(closed), i, i+1)
			if ok, cerr = d.fitsClosing(rest); cerr != nil {
				return nil, cerr
			}
			if ok {
				closed = rest
			} else {
				i++
			}
		}
		// The last render that fitted was closed's: it stands.
		tx := d.sess.Begin()
		if cerr := clearAll(tx.Session(), closed); cerr != nil {
			tx.Discard()
			return nil, cerr
		}
		if cerr := tx.Commit(); cerr != nil {
			return nil, fmt.Errorf("prompt: refit: %w", cerr)
		}
		return closed, nil
	}
	return nil, err
}

// fitsClosing reports whether every part renders with the overrides of
// paths cleared, dispatching nothing: a render that fits stays the
// latest. The holder of mu calls it.
func (d *Disclosure) fitsClosing(paths []string) (bool, error) {
	tx := d.sess.Begin()
	defer tx.Discard()
	if err := clearAll(tx.Session(), paths); err != nil {
		return false, err
	}
	return d.renderIn(tx.Session()) == nil, nil
}

// clearAll dispatches the clearing of the overrides of paths to sess.
func clearAll(sess *session.Session, paths []string) error {
	for _, p := range paths {
		if err := sess.Dispatch(visibility.ClearOverride{Path: p}); err != nil {
			return fmt.Errorf("prompt: refit: %w", err)
		}
	}
	return nil
}

// openedNewestFirst lists the paths the session's overrides show in full
// and some part has,
// the most recently opened first by the session's log; those whose opening
// the log no longer holds come last, deepest and latest first.
func (d *Disclosure) openedNewestFirst() []string {
	ov := visibility.Get(d.sess)
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if m, ok := ov.Mode(p); ok && m == visibility.Full && !seen[p] && d.has(p) {
			seen[p] = true
			out = append(out, p)
		}
	}
	events := d.sess.Events()
	for i := len(events) - 1; i >= 0; i-- {
		if e, ok := events[i].Event.(visibility.SetOverride); ok {
			add(e.Path)
		}
	}
	paths := ov.Paths()
	for i := len(paths) - 1; i >= 0; i-- {
		add(paths[i])
	}
	return out
}

// has reports whether some part's prompt has a section at path. The holder
// of mu calls it.
func (d *Disclosure) has(path string) bool {
	return slices.ContainsFunc(d.parts, func(p Part) bool {
		_, ok := p.Prompt.t.index(path)
		return ok
	})
}
