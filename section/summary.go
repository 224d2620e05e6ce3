package section

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Summary returns the section's summary as declared, empty when it has
// none: the template text of a summary that is a template (see
// [Section.SummaryFor]). A lazy summary is computed by the first call;
// it is empty when it failed ([Section.SummaryFor] says why).
func (s *Section) Summary() string {
	text, _ := s.lazySummary()
	return text
}

// lazyText is a summary computed when first needed (Spec.LazySummary),
// apart from Section so that sections without one do not carry it.
type lazyText struct {
	f    func() string
	once sync.Once
	text string // set by once
	err  error  // why f gave no summary; set by once
}

// lazySummary is Summary, with why a lazy summary failed: it panicked, or
// it gave no text.
func (s *Section) lazySummary() (string, error) {
	l := s.lazy
	if l == nil {
		return s.summary, nil
	}
	l.once.Do(func() {
		defer func() {
			if p := recover(); p != nil {
				l.text, l.err = "", fmt.Errorf("lazy summary panicked: %v", p)
			}
		}()
		if l.text = l.f(); strings.TrimSpace(l.text) == "" {
			l.err = errors.New("lazy summary returned no text; a LazySummary must return the summary")
		}
	})
	return l.text, l.err
}

// HasSummary reports whether the section has a summary, without computing
// a lazy one.
func (s *Section) HasSummary() bool { return s.summary != "" || s.lazy != nil }

// SummaryFor returns the section's summary for params: the template
// executed, or the text as declared when it has no actions. Its template
// work is its own; see [Section.SummaryWith].
func (s *Section) SummaryFor(params any) (string, error) { return s.SummaryWith(nil, params) }

// SummaryWith is [Section.SummaryFor] taking its template work from w,
// the work of the render it is part of.
func (s *Section) SummaryWith(w *Work, params any) (string, error) {
	text, ok, err := s.summaryT.execute(w, paramsOrZero(s, params))
	if err != nil {
		return "", fmt.Errorf("summary template: %w", missingParam(err))
	}
	if !ok {
		return s.lazySummary()
	}
	return text, nil
}

// Brief returns the section's brief summary as declared, empty when it has
// none.
func (s *Section) Brief() string { return s.brief }

// BriefFor returns the section's brief for params, as [Section.SummaryFor]
// does the summary.
func (s *Section) BriefFor(params any) (string, error) { return s.BriefWith(nil, params) }

// BriefWith is [Section.BriefFor] taking its template work from w.
func (s *Section) BriefWith(w *Work, params any) (string, error) {
	text, ok, err := s.briefT.execute(w, paramsOrZero(s, params))
	if err != nil {
		return "", fmt.Errorf("brief template: %w", missingParam(err))
	}
	if !ok {
		return s.brief, nil
	}
	return text, nil
}
