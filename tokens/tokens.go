package tokens

import (
	"unicode"
	"unicode/utf8"
)

// Counter counts tokens. Implementations must be safe for concurrent use
// and deterministic: the same text always gives the same count.
type Counter interface {
	Count(text string) int
}

// LowerBounder is implemented by counters that can bound a count from below
// for a fraction of the cost of counting. A budgeted render uses the bound to
// pass over sections that cannot fit without counting them. The bound must
// never exceed Count(text), and bounds must add up across a blank line:
// LowerBound(a) + LowerBound(b) <= Count(a + "\n\n" + b).
type LowerBounder interface {
	LowerBound(text string) int
}

// Additive is implemented by counters whose counts add up across a blank
// line before a printable ASCII character other than '/': for any text a,
// and any b whose first byte is in '!'..'~' but is not '/',
// Count(a + "\n\n" + b) == Count(a + "\n\n") + Count(b). A prompt is
// blocks joined by blank lines, each starting with its heading ('#'), so a
// render with an additive counter gets the count of its whole text by
// adding up its sections' counts, which it caches, instead of counting the
// text again; and the sections' counts in its report add up to the
// prompt's exactly. [Estimate] and the counters of tokens/bpe are additive.
type Additive interface {
	Counter
	// AddsUpAtHeadings does nothing; it marks the counter as additive.
	AddsUpAtHeadings()
}

// CounterFunc adapts a function to a Counter.
type CounterFunc func(text string) int

// Count calls f.
func (f CounterFunc) Count(text string) int { return f(text) }

// Estimate counts tokens without a vocabulary, from the shapes of the text:
// a run of letters costs one token and one per eight more bytes, runs of
// digits one per three, punctuation one per three marks, spaces before a
// word nothing, other whitespace runs one, and letters outside ASCII about
// one each or one per two (Latin, Greek, Cyrillic); a run of 12 or more
// letters and digits that looks random, such as base64 or a hex digest,
// costs one token per 1.3 bytes, or per 1.6 when its letters are of one
// case. See the package documentation for how close it comes.
var Estimate Counter = estimator{}

type estimator struct{}

var _ Additive = estimator{}

// AddsUpAtHeadings marks the estimate as additive: no run it counts
// reaches from a line break into a printable character.
func (estimator) AddsUpAtHeadings() {}

func (estimator) Count(text string) int {
	n := 0
	for i := 0; i < len(text); {
		c := text[i]
		if isAlnum(c) {
			if j, cost := mixedRun(text, i); cost > 0 {
				n += cost
				i = j
				continue
			}
		}
		switch {
		case isLetter(c):
			j := i + 1
			for j < len(text) && isLetter(text[j]) {
				j++
			}
			n += 1 + (j-i-1)/letterRun
			i = j
		case '0' <= c && c <= '9':
			j := i + 1
			for j < len(text) && '0' <= text[j] && text[j] <= '9' {
				j++
			}
			n += (j - i + 2) / 3
			i = j
		case c == ' ':
			// A single space joins the next word's token.
			j := i + 1
			for j < len(text) && text[j] == ' ' {
				j++
			}
			if j-i > 1 {
				n += (j - i + 3) / 4
			}
			i = j
		case c == '\n' || c == '\t' || c == '\r':
			j := i + 1
			for j < len(text) && (text[j] == '\n' || text[j] == '\t' || text[j] == '\r' || text[j] == ' ') {
				j++
			}
			n++
			i = j
		case c < utf8.RuneSelf:
			// Punctuation: runs merge, about two marks a token.
			j := i + 1
			for j < len(text) && isPunct(text[j]) {
				j++
			}
			run := j - i
			if j < len(text) && text[j-1] == '.' && isLetter(text[j]) {
				run-- // a dot before a word joins it (".Lock")
			}
			n += (run + punctRun - 1) / punctRun
			i = j
		default:
			r, size := utf8.DecodeRuneInString(text[i:])
			if unicode.IsLetter(r) && r < 0x2E80 {
				// Accented Latin, Greek, Cyrillic: about two letters a token.
				n++
				i += size
				if i < len(text) {
					if r2, s2 := utf8.DecodeRuneInString(text[i:]); unicode.IsLetter(r2) && r2 < 0x2E80 {
						i += s2
					}
				}
				continue
			}
			n++ // CJK, symbols, emoji, invalid bytes: about one each
			i += size
		}
	}
	return n
}

// mixedRun returns the end of the run of ASCII letters and digits at i and
// its cost when it looks random: base64, hex digests, random identifiers.
// A byte-pair encoding cuts such a run into pieces as o200k_base's
// pre-tokenizer does, at each change between letters and digits, before an
// upper-case letter that follows a lower-case one, and after every three
// digits, and the pieces are seldom tokens. A run counts as random when it
// is at least mixedMin long, holds letters and digits, and either its
// pieces are 2.5 bytes long or less on average or its digits come in three
// groups or more; identifiers made of words ("TestBudget2025",
// "sha256sumOfTheFile12") have longer pieces and fewer groups. o200k_base
// takes about 1.5 bytes a token for a random run whose letters are of both
// cases, about 1.75 for one of one case; the estimate charges a token for
// every 1.3 and 1.6 bytes, or one for each piece if that is more, to stay
// above. Other runs return a cost of 0, for the branches of Count.
func mixedRun(text string, i int) (end, cost int) {
	// Most runs are words, short or without digits: found so by a first
	// pass that only looks for a digit, as every word starts one here.
	end = i
	hasDigit := false
	for ; end < len(text) && isAlnum(text[end]); end++ {
		hasDigit = hasDigit || text[end] <= '9' // digits sort before letters
	}
	if end-i < mixedMin || !hasDigit {
		return end, 0
	}
	var lower, upper bool
	pieces, digits, groups := 0, 0, 0 // groups: runs of digits
	var prev byte
	for _, c := range []byte(text[i:end]) {
		switch {
		case '0' <= c && c <= '9':
			if !('0' <= prev && prev <= '9') {
				groups++
				pieces++
				digits = 0
			} else if digits == 3 {
				pieces++
				digits = 0
			}
			digits++
		case 'a' <= c && c <= 'z':
			lower = true
			if prev == 0 || '0' <= prev && prev <= '9' {
				pieces++
			}
		default:
			upper = true
			if prev == 0 || '0' <= prev && prev <= '9' || 'a' <= prev && prev <= 'z' {
				pieces++
			}
		}
		prev = c
	}
	n := end - i
	switch {
	case !lower && !upper || 5*pieces < 2*n && groups < 3:
		return end, 0
	case lower && upper:
		return end, max(pieces, (10*n+12)/13)
	default:
		return end, max(pieces, (5*n+7)/8)
	}
}

// Tuning of the estimate; see the package documentation.
const (
	letterRun = 8  // a run of letters costs one token plus one per this many more
	punctRun  = 3  // a run of punctuation costs one token per this many marks
	mixedMin  = 12 // a run of letters and digits this long is counted by mixedRun
)

func isPunct(c byte) bool {
	return c < utf8.RuneSelf && c > ' ' && !isLetter(c) && !('0' <= c && c <= '9')
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
