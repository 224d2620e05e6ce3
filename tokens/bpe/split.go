package bpe

import "unicode/utf8"

// The pre-tokenizers split text into chunks as OpenAI's tiktoken does with
// its split patterns,
//
//	o200k_base:
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
//	cl100k_base:
//	'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+
//	| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
//
// read as a backtracking matcher reads them (fancy-regex in tiktoken, the
// JavaScript engine in its JavaScript ports): from each position, the first
// alternative that matches wins, and within it each quantifier takes as
// much as it can and gives back one rune at a time until the rest matches.
// The functions here give the same chunks without a matcher. What that
// reading implies, where a quicker one would go wrong:
//
//   - \s*[\r\n]+ (o200k_base) and \s*[\r\n] (cl100k_base) end after the
//     last line break of a run of whitespace, not the first: "\n  \nx"
//     splits into "\n  \n", "x".
//   - cl100k_base takes a run of whitespace that reaches the end of the text
//     whole (\s++$), line breaks or not; o200k_base ends it after its last
//     line break and puts the rest in a chunk of its own.
//   - Every rune is in some chunk: control characters, DEL (U+007F) among
//     them, match [^\s\p{L}\p{N}] like other symbols.
//   - (?i:...) matches the letters of the contractions in either case, and
//     's' also as 'ſ' (U+017F), its simple case folding equivalent; nothing
//     else folds.
//   - \s is the White_Space property (see clsSpace).
//
// tiktoken-go v0.10.0 splits with an older cl100k_base pattern, the same
// as the current one but for \s++$ (tiktoken's possessive rewrite, which
// counts the same: no cl100k_base token holds a line break followed by
// other whitespace at its end), and with matchers generated from the
// patterns that depart from them on the first and third points above.
//
// Each function takes the text and the index of a rune where no chunk has
// started yet, and returns the end of the chunk that starts there (every
// rune starts one). They never look back before i, so a chunk depends only
// on the text from its start.

// o200kChunk returns the end of the o200k_base chunk starting at s[i].
func o200kChunk(s string, i int) int {
	c, n := classAt(s, i)
	if c&(clsUpper|clsLower|clsPrefix) != 0 {
		if e := o200kWord(s, i, c, n); e > i {
			return e
		}
	}
	switch {
	case c&clsNumber != 0:
		return numberRun(s, i)
	case c&clsPunct != 0 || s[i] == ' ' && i+1 < len(s) && classOfNext(s, i+1)&clsPunct != 0:
		return punctRun(s, i, true)
	case c&clsSpace != 0:
		return spaceRun(s, i, false)
	}
	return i
}

// cl100kChunk returns the end of the cl100k_base chunk starting at s[i].
func cl100kChunk(s string, i int) int {
	if s[i] == '\'' {
		if e := contraction(s, i); e > i {
			return e
		}
	}
	c, n := classAt(s, i)
	switch {
	case c&clsLetter != 0:
		return run(s, i, clsLetter)
	case c&clsPrefix != 0 && i+n < len(s) && classOfNext(s, i+n)&clsLetter != 0:
		return run(s, i+n, clsLetter)
	case c&clsNumber != 0:
		return numberRun(s, i)
	case c&clsPunct != 0 || s[i] == ' ' && i+1 < len(s) && classOfNext(s, i+1)&clsPunct != 0:
		return punctRun(s, i, false)
	case c&clsSpace != 0:
		return spaceRun(s, i, true)
	}
	return i
}

// classOfNext returns the classes of the rune at s[i].
func classOfNext(s string, i int) class {
	c, _ := classAt(s, i)
	return c
}

// o200kWord matches the two word alternatives of o200k_base at s[i], whose
// rune has classes c and length n, and returns the end, or i. Each
// alternative first tries to take the rune as the optional prefix, then
// not; the first that matches wins.
func o200kWord(s string, i int, c class, n int) int {
	// Most words are ASCII: an optional prefix, upper-case letters, then
	// lower-case ones, then an ASCII byte or the end of the text.
	if s[i] < utf8.RuneSelf {
		j := i
		if c&clsPrefix != 0 {
			j++
		}
		k := j
		for k < len(s) && 'A' <= s[k] && s[k] <= 'Z' {
			k++
		}
		e := k
		for e < len(s) && 'a' <= s[e] && s[e] <= 'z' {
			e++
		}
		if e == len(s) || s[e] < utf8.RuneSelf {
			// Upper-case ASCII letters are not in the tail set, so
			// with no lower-case tail only the second alternative,
			// head and no tail, can match.
			if e > k || k > j {
				return contractionAfter(s, e)
			}
			return i
		}
	}

	if c&clsPrefix != 0 {
		if e := wordHeadTail(s, i+n); e >= 0 {
			return contractionAfter(s, e)
		}
	}
	if e := wordHeadTail(s, i); e >= 0 {
		return contractionAfter(s, e)
	}
	if c&clsPrefix != 0 {
		if e := run(s, i+n, clsUpper); e > i+n {
			return contractionAfter(s, run(s, e, clsLower))
		}
	}
	if e := run(s, i, clsUpper); e > i {
		return contractionAfter(s, run(s, e, clsLower))
	}
	return i
}

// wordHeadTail matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
// at s[j] and returns its end, or -1. The head is greedy: when no tail
// follows it, the matcher gives back head runes until the last one that
// also belongs to the tail set, which then is the whole tail.
func wordHeadTail(s string, j int) int {
	lastLower := -1
	k := j
	for k < len(s) {
		c, n := classAt(s, k)
		if c&clsUpper == 0 {
			break
		}
		k += n
		if c&clsLower != 0 {
			lastLower = k
		}
	}
	if e := run(s, k, clsLower); e > k {
		return e
	}
	return lastLower
}

// run returns the end of the run of runes in class m that starts at s[j].
func run(s string, j int, m class) int {
	for j < len(s) {
		if b := s[j]; b < utf8.RuneSelf {
			if asciiClass[b]&m == 0 {
				break
			}
			j++
			continue
		}
		c, n := classAtSlow(s, j)
		if c&m == 0 {
			break
		}
		j += n
	}
	return j
}

// contractionAfter extends a word ending at e by a contraction that
// follows it, if any.
func contractionAfter(s string, e int) int {
	if e < len(s) && s[e] == '\'' {
		return contraction(s, e)
	}
	return e
}

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i], which is an
// apostrophe, and returns its end, or i.
func contraction(s string, i int) int {
	if i+1 >= len(s) {
		return i
	}
	switch s[i+1] {
	case 's', 'S', 't', 'T', 'm', 'M', 'd', 'D':
		return i + 2
	case 'r', 'R', 'v', 'V':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return i + 3
		}
	case 'l', 'L':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return i + 3
		}
	case 0xc5: // 'ſ' is C5 BF
		if i+2 < len(s) && s[i+2] == 0xbf {
			return i + 3
		}
	}
	return i
}

// numberRun matches \p{N}{1,3} at s[i].
func numberRun(s string, i int) int {
	for range 3 {
		if i >= len(s) {
			break
		}
		c, n := classAt(s, i)
		if c&clsNumber == 0 {
			break
		}
		i += n
	}
	return i
}

// punctRun matches " ?[^\s\p{L}\p{N}]+[\r\n]*", or with slash
// " ?[^\s\p{L}\p{N}]+[\r\n/]*", at s[i]. The caller has checked that it
// matches.
func punctRun(s string, i int, slash bool) int {
	if s[i] == ' ' {
		i++
	}
	i = run(s, i, clsPunct)
	for i < len(s) && (s[i] == '\r' || s[i] == '\n' || slash && s[i] == '/') {
		i++
	}
	return i
}

// spaceRun matches the whitespace alternatives at s[i], which is
// whitespace: \s*[\r\n]+|\s+(?!\S)|\s+ for o200k_base, and with
// wholeAtEnd \s++$|\s*[\r\n]|\s+(?!\S)|\s for cl100k_base. Of the
// maximal run of whitespace from s[i]:
//
//   - with wholeAtEnd, a run that reaches the end of the text is whole;
//   - a run holding a line break ends after its last line break;
//   - else a run at the end of the text is whole;
//   - else the run leaves its last rune to the chunk after it, unless it is
//     only one rune long.
func spaceRun(s string, i int, wholeAtEnd bool) int {
	last := i   // start of the run's last rune
	breaks := i // end of the run's last line break, or i
	j := i
	for j < len(s) {
		b := s[j]
		if b < utf8.RuneSelf {
			if asciiClass[b]&clsSpace == 0 {
				break
			}
			last = j
			j++
			if b == '\r' || b == '\n' {
				breaks = j
			}
			continue
		}
		c, n := classAtSlow(s, j)
		if c&clsSpace == 0 {
			break
		}
		last = j
		j += n
	}
	switch {
	case wholeAtEnd && j == len(s):
		return j
	case breaks > i:
		return breaks
	case j == len(s) || last == i:
		return j
	}
	return last
}
