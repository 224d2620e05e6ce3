package prompt

// A section may have a brief (section.Spec.Brief): a shorter summary that a
// budget may show in place of the summary, so that more sections fit with
// their summary in full. A brief is SUMMARY mode in every other respect; its
// blocks are the kinds briefBlock and briefCompactBlock (see blockKind), and
// the fit (fit.go) decides which summaries to shorten.

// hasBrief reports whether node i has a brief.
func (p *Prompt) hasBrief(i int) bool { return p.t.hot[i].is(briefed) }
