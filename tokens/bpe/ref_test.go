package bpe

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer"

	"github.com/unfold-dev/unfold/internal/textgen"
)

// The reference this package must agree with is OpenAI's tiktoken: its
// split patterns, read as a backtracking matcher reads them, then its
// byte-pair merge.
//
// The patterns are run here by regexp2's interpreter. tiktoken-go registers
// code generated from its own pattern strings with regexp2, and that code
// departs from the patterns (see split.go); MustCompile hands it out for
// those exact strings, Compile never does, and the reference wraps each
// pattern in a group besides, so that no registered string can match it.
// TestReference checks that the matcher running is the interpreter.
var (
	refOnce    sync.Once
	refSplit   map[Encoding]*regexp2.Regexp // tiktoken's patterns, interpreted
	goSplit    map[Encoding]*regexp2.Regexp // tiktoken-go's generated matchers
	refRanks   map[Encoding]map[string]int  // the tokens and their ranks
	goCodecs   map[Encoding]tokenizer.Codec
	refLoadErr error
)

// refPatterns are OpenAI's tiktoken's split patterns
// (tiktoken_ext/openai_public.py). Its cl100k_base pattern has possessive
// quantifiers, which regexp2 does not take, so they are written as the
// atomic groups they stand for (x?+ is (?>x?)), and $, which there means
// the end of the text, as \z.
var refPatterns = map[Encoding]string{
	O200k:  `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	Cl100k: `'(?i:[sdmt]|ll|ve|re)|(?>[^\r\n\p{L}\p{N}]?)(?>\p{L}+)|(?>\p{N}{1,3})| ?(?>[^\s\p{L}\p{N}]+)(?>[\r\n]*)|(?>\s+)\z|\s*[\r\n]|\s+(?!\S)|\s`,
}

// goPatterns are tiktoken-go v0.10.0's split patterns, codec/o200k_base.go
// and codec/cl100k_base.go, for which it registers generated matchers.
var goPatterns = map[Encoding]string{
	O200k:  refPatterns[O200k],
	Cl100k: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
}

var counters = []*Counter{O200kBase(), Cl100kBase()}

func loadRef(t testing.TB) {
	t.Helper()
	refOnce.Do(func() { refLoadErr = buildRef() })
	if refLoadErr != nil {
		t.Fatal(refLoadErr)
	}
}

func buildRef() error {
	refSplit = map[Encoding]*regexp2.Regexp{}
	goSplit = map[Encoding]*regexp2.Regexp{}
	refRanks = map[Encoding]map[string]int{}
	goCodecs = map[Encoding]tokenizer.Codec{}
	for enc, name := range map[Encoding]tokenizer.Encoding{O200k: tokenizer.O200kBase, Cl100k: tokenizer.Cl100kBase} {
		re, err := regexp2.Compile("(?:"+refPatterns[enc]+")", regexp2.None)
		if err != nil {
			return err
		}
		refSplit[enc] = re
		goSplit[enc] = regexp2.MustCompile(goPatterns[enc], regexp2.None)
		codec, err := tokenizer.Get(name)
		if err != nil {
			return err
		}
		goCodecs[enc] = codec
		tokens, err := libraryTokens(name, vocabSize[enc])
		if err != nil {
			return err
		}
		ranks := make(map[string]int, len(tokens))
		for id, tok := range tokens {
			ranks[tok] = id
		}
		refRanks[enc] = ranks
	}
	return nil
}

// findAll returns the matches of re in text, one after the other.
func findAll(t testing.TB, re *regexp2.Regexp, text string) []string {
	var out []string
	m, err := re.FindStringMatch(text)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatalf("regexp2 on %q: %v", text, err)
	}
	return out
}

// refChunks is how tiktoken splits text.
func refChunks(t testing.TB, enc Encoding, text string) []string {
	loadRef(t)
	return findAll(t, refSplit[enc], text)
}

// refCount is tiktoken's count of text: the reference merge of each of
// its chunks.
func refCount(t testing.TB, enc Encoding, text string) int {
	n := 0
	for _, chunk := range refChunks(t, enc, text) {
		n += refMerge(refRanks[enc], chunk)
	}
	return n
}

// refMerge is tiktoken's byte-pair merge, written plainly: start from the
// bytes of chunk, and merge the adjacent parts whose concatenation is the
// token of lowest rank, the leftmost on a tie, until no two adjacent parts
// make a token. It returns the number of parts left.
func refMerge(ranks map[string]int, chunk string) int {
	if _, ok := ranks[chunk]; ok {
		return 1
	}
	parts := make([]string, len(chunk))
	for i := range len(chunk) {
		parts[i] = chunk[i : i+1]
	}
	rank := func(k int) int { // rank of parts k and k+1 merged, or -1
		if k < 0 || k+1 >= len(parts) {
			return -1
		}
		if r, ok := ranks[parts[k]+parts[k+1]]; ok {
			return r
		}
		return -1
	}
	pair := make([]int, len(parts))
	for k := range pair {
		pair[k] = rank(k)
	}
	for {
		best := -1
		for k, r := range pair {
			if r >= 0 && (best < 0 || r < pair[best]) {
				best = k
			}
		}
		if best < 0 {
			return len(parts)
		}
		parts[best] += parts[best+1]
		parts = slices.Delete(parts, best+1, best+2)
		pair = slices.Delete(pair, best+1, best+2)
		pair[best] = rank(best)
		if best > 0 {
			pair[best-1] = rank(best - 1)
		}
	}
}

// chunks is how c splits text, with invalid bytes replaced as Count does.
func chunks(c *Counter, text string) []string {
	text = replaceInvalid(text)
	var out []string
	for i := 0; i < len(text); {
		e := c.chunk(text, i)
		if e == i {
			out = append(out, "") // no chunk: shows in the comparison
			_, n := utf8.DecodeRuneInString(text[i:])
			e = i + n
		}
		out = append(out, text[i:e])
		i = e
	}
	return out
}

// checkAgainstRef fails the test unless c splits and counts text as
// tiktoken does, and LowerBound is at most the count. Where tiktoken-go's
// matcher splits text as tiktoken does, the count must be tiktoken-go's
// too.
func checkAgainstRef(t testing.TB, c *Counter, text string) {
	t.Helper()
	enc := c.Encoding()
	want := refChunks(t, enc, text)
	if got := chunks(c, text); !slices.Equal(got, want) {
		t.Fatalf("%s: chunks of %q: got %q, want %q", enc, text, got, want)
	}
	got := c.Count(text)
	if n := refCount(t, enc, text); got != n {
		t.Fatalf("%s: Count(%q): got %d, want %d", enc, text, got, n)
	}
	if slices.Equal(findAll(t, goSplit[enc], text), want) {
		n, err := goCodecs[enc].Count(text)
		if err != nil {
			t.Fatalf("tiktoken-go %s: Count(%q): %v", enc, text, err)
		}
		if got != n {
			t.Fatalf("%s: Count(%q): got %d, tiktoken-go %d on the same chunks", enc, text, got, n)
		}
	}
	if lb := c.LowerBound(text); lb > got {
		t.Fatalf("%s: LowerBound(%q) = %d, above Count %d", enc, text, lb, got)
	}
}

// palette holds runes and bytes from every class the split patterns tell
// apart, with the edges of each: generated texts draw from it.
var palette = []string{
	// ASCII letters, contractions and their case variants
	"a", "z", "A", "Z", "s", "S", "t", "T", "d", "D", "m", "M", "l", "L", "re", "RE", "vE", "ll", "lL", "'", "''",
	// digits and numbers elsewhere: Arabic-Indic, superscript, Roman, fraction, mathematical, astral
	"0", "7", "9", "\u0661", "\u00b2", "\u216b", "\u00bd", "\U0001d7ce",
	// whitespace: ASCII, NEL, no-break, ogham, en quad, ideographic, narrow no-break, line separator
	" ", " ", " ", "\t", "\n", "\n", "\r", "\r\n", "\v", "\f", "\u0085", "\u00a0", "\u1680", "\u2000", "\u3000", "\u202f", "\u2028",
	// ASCII punctuation and controls, DEL among them
	".", ",", "!", "/", "//", "-", "#", "`", "(", ")", "_", "\x00", "\x1c", "\x1f", "\x7f",
	// letters outside ASCII: lower, upper, title, modifier, other, astral
	"\u00e9", "\u00df", "\u00c9", "\u01c5", "\u02b0", "\u05d0", "\u4e2d", "\u3042", "\U0001d400", "\U00020000",
	// case-folding neighbours of the contractions: long s, Kelvin sign, dotted I, dotless i
	"\u017f", "\u212a", "\u0130", "\u0131",
	// combining marks: acute, grave, enclosing circle, spacing (Mc)
	"\u0301", "\u0300", "\u20dd", "\u0903",
	// symbols: emoji, sparkles, replacement character
	"\U0001f680", "\u2728", "\ufffd",
	// invalid UTF-8: stray bytes, truncated sequences, surrogate, overlong
	"\xff", "\x80", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf", "\xf0\x9f\x9a",
}

// randomText returns a text of up to n pieces drawn from the palette, with
// runs of one piece now and then.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range r.IntN(n + 1) {
		p := palette[r.IntN(len(palette))]
		if r.IntN(8) == 0 {
			p = strings.Repeat(p, 2+r.IntN(6))
		}
		b.WriteString(p)
	}
	return b.String()
}

// edgeCases are texts at the edges of the split patterns, named.
var edgeCases = []struct{ name, text string }{
	{"empty", ""},
	{"word", "hello"},
	{"words", "hello world"},
	{"capitalized", "Hello World"},
	{"upper", "HELLO WORLD"},
	{"camel", "getUserID JSONDecoder XMLHttpRequest iPhone"},
	{"contractions", "don't it's we'll they're I've I'm he'd"},
	{"contractions upper", "DON'T IT'S WE'LL THEY'RE I'VE I'M HE'D"},
	{"contractions mixed case", "don'T it'S we'Ll we'lL they'rE I'Ve I'M he'D"},
	{"contraction long s", "it'ſ it'ſt 'ſ"},
	{"contraction alone", "'s 't 're 've 'm 'll 'd 'x 'l 'r 'v"},
	{"contraction at end", "don'"},
	{"contraction after digits", "90's 1990'S"},
	{"contraction Kelvin sign", "it'\u212a"},
	{"apostrophes", "''' rock 'n' roll 'tis"},
	{"digits", "1 12 123 1234 12345 123456 1234567"},
	{"digits in words", "abc123def v2.4.0 x1y22z333"},
	{"digits outside ASCII", "\u0661\u0662\u0663\u0664 \u00b2\u00b3 \u216b\u216b 12\u00b2"},
	{"spaces before word", "a  b   c    d"},
	{"spaces before newline", "a  \n  b"},
	{"spaces at end", "a   "},
	{"spaces only", "     "},
	{"tab before word", "\tfoo \t\tbar"},
	{"newlines", "a\n\nb\n\n\n\nc"},
	{"crlf", "a\r\nb\r\n\r\nc\r"},
	{"newline space newline", "\n  \nx"},
	{"newlines spaces newlines", "\n\n  \n\n  x"},
	{"spaces newline spaces", "  \n  \n  x"},
	{"blank lines with spaces", "a\n  \n  b"},
	{"blank lines with spaces then rule", "  \n    \n\n---"},
	{"blank lines with tabs", "\t\n\t\n\tx"},
	{"crlf runs with spaces", "a\r\n  \r\n  b\r\n\r\n"},
	{"lone cr runs", "a\r \r\rb\r"},
	{"newline spaces at end", "x\n  "},
	{"newlines spaces at end", "x\n\n \n\t"},
	{"spaces newline space at end", "x \n "},
	{"punctuation newline spaces at end", "end.\n  "},
	{"newline unicode spaces newline", "a\u00a0\n\u3000\nb\u2028\n \u2029c"},
	{"vertical tab form feed newline", "a\v\n\f\nb \v\n"},
	{"space then punctuation", "a !b  !c \t!d"},
	{"punctuation runs", "!!! ... --- === ,,, ?!"},
	{"punctuation then newlines", "end.\n\nnext:\r\n"},
	{"slashes", "a/b //c ///\n// x/\n/y https://example.com/a/b"},
	{"markdown", "## Title\n\n- [ ] item `code_1()` — done\n| a | b |\n|---|---:|\n"},
	{"no-break spaces", "a\u00a0b \u00a0c\u00a0\u00a0d \u202fe\u3000f"},
	{"unicode spaces only", "\u2000\u2001\u2002\u3000"},
	{"next line", "a\u0085b \u0085\u0085c"},
	{"vertical tab form feed", "a\vb\fc \v\fd"},
	{"combining marks", "e\u0301 cafe\u0301 \u0301abc A\u0301B \u0301\u0301 x\u20dd"},
	{"marks alone", "\u0301 \u0300\u0301 .\u0301"},
	{"mark then upper", "\u0301A \u0301AB"},
	{"title case", "\u01c5ungla \u01c4UNGLA \u01c6ungla"},
	{"modifier letters", "\u02b0a \u02b0\u02b0 A\u02b0"},
	{"accents", "café naïve déjà-vu Ärger ÉCOLE Straße"},
	{"greek cyrillic arabic", "Ελληνικά κείμενο, русский текст, عربي"},
	{"cjk", "注意: 確認してください。中文字符"},
	{"emoji", "🚀✨ 👍🏽 👨‍👩‍👧 🇫🇷"},
	{"astral letters digits", "\U0001d400\U0001d41a \U0001d7ce\U0001d7cf\U0001d7d0\U0001d7d1 \U00020000\U00020001"},
	{"invalid bytes", "a\xffb \xff\xfe \x80x"},
	{"truncated sequences", "x\xe2\x82y \xc3 \xf0\x9f\x9a"},
	{"surrogate overlong", "\xed\xa0\x80 \xc0\xaf"},
	{"replacement character", "\ufffd \ufffdabc"},
	{"invalid before word", "\xffword \xff Word"},
	{"nul", "a\x00b \x00\x00 \x00x"},
	{"del", "\x7f a\x7fb \x7f\x7f x\x7f"},
	{"del before word", " \x7fword \x7f"},
	{"del runs", "\x7f\x7f\x7f\n\x7f!\x7f \x7f\x7f\n"},
	{"controls", "\x01\x1c\x1f a\x1cb"},
	{"special tokens", "<|endoftext|> <|endofprompt|> <|fim_prefix|>"},
	{"long word", strings.Repeat("abcdefghij", 30)},
	{"long upper", strings.Repeat("ABCDEFGHIJ", 30)},
	{"long digits", strings.Repeat("0123456789", 30)},
	{"long punctuation", strings.Repeat("-", 500)},
	{"long mixed punctuation", strings.Repeat("=-*/", 200)},
	{"long spaces", strings.Repeat(" ", 500) + "x"},
	{"long newlines", strings.Repeat("\n", 300)},
	{"long cjk", strings.Repeat("中文", 200)},
	{"long invalid", strings.Repeat("\xff", 300)},
	{"base64", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="},
}

// TestEdgeCases compares chunks and counts with tiktoken's on texts at the
// edges of the split patterns.
func TestEdgeCases(t *testing.T) {
	for _, c := range counters {
		for _, tc := range edgeCases {
			t.Run(fmt.Sprintf("%s/%s", c.Encoding(), tc.name), func(t *testing.T) {
				checkAgainstRef(t, c, tc.text)
			})
		}
	}
}

// TestRandomTexts compares chunks and counts with tiktoken's on texts drawn
// from the palette.
func TestRandomTexts(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	r := rand.New(rand.NewPCG(7, 11))
	for _, c := range counters {
		t.Run(string(c.Encoding()), func(t *testing.T) {
			for range n {
				checkAgainstRef(t, c, randomText(r, 40))
			}
		})
	}
}

// TestDocuments compares chunks and counts with tiktoken's on the sample
// files and on generated markdown, whole and cut at arbitrary bytes.
func TestDocuments(t *testing.T) {
	docs := map[string]string{"mixed markdown": textgen.Markdown(200 << 10)}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample files: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)] = string(b)
	}
	r := rand.New(rand.NewPCG(3, 5))
	for _, c := range counters {
		for name, doc := range docs {
			t.Run(fmt.Sprintf("%s/%s", c.Encoding(), name), func(t *testing.T) {
				checkAgainstRef(t, c, doc)
				for range 20 {
					i := r.IntN(len(doc))
					j := i + r.IntN(min(len(doc)-i, 2000)+1)
					checkAgainstRef(t, c, doc[i:j])
				}
			})
		}
	}
}

// TestReference checks the reference itself: that it reads the patterns as
// a backtracking matcher does, where tiktoken-go's generated matchers do
// not, so that it cannot be those matchers.
func TestReference(t *testing.T) {
	loadRef(t)
	for _, tc := range []struct {
		name     string
		enc      Encoding
		text     string
		ref, gen []string
	}{
		{"last line break", O200k, "\n  \nx", []string{"\n  \n", "x"}, []string{"\n", "  \n", "x"}},
		{"last line break", Cl100k, "\n  \nx", []string{"\n  \n", "x"}, []string{"\n", "  \n", "x"}},
		{"del", O200k, "a\x7fb", []string{"a", "\x7fb"}, []string{"a", "b"}},
		{"del", Cl100k, "a\x7f", []string{"a", "\x7f"}, []string{"a"}},
		{"whitespace at end", O200k, "x\n  ", []string{"x", "\n", "  "}, []string{"x", "\n", "  "}},
		{"whitespace at end", Cl100k, "x\n  ", []string{"x", "\n  "}, []string{"x", "\n", "  "}},
		{"long s folds", O200k, "it'\u017f", []string{"it'\u017f"}, []string{"it'\u017f"}},
	} {
		t.Run(string(tc.enc)+"/"+tc.name, func(t *testing.T) {
			if got := findAll(t, refSplit[tc.enc], tc.text); !slices.Equal(got, tc.ref) {
				t.Errorf("reference: got %q, want %q", got, tc.ref)
			}
			if got := findAll(t, goSplit[tc.enc], tc.text); !slices.Equal(got, tc.gen) {
				t.Errorf("tiktoken-go: got %q, want %q", got, tc.gen)
			}
		})
	}
}

// TestRefMerge checks the reference merge on chunks whose counts are known
// (from gpt-tokenizer 4.0.0, as in TestJavaScriptCounts).
func TestRefMerge(t *testing.T) {
	loadRef(t)
	for _, tc := range []struct {
		enc   Encoding
		chunk string
		want  int
	}{
		{Cl100k, "hello", 1},
		{Cl100k, " antidisestablishmentarianism", 6},
		{O200k, " antidisestablishmentarianism", 6},
		{O200k, " supercalifragilistic", 6},
		{O200k, "\xff", 1}, // every byte is a token
	} {
		if got := refMerge(refRanks[tc.enc], tc.chunk); got != tc.want {
			t.Errorf("%s: refMerge(%q): got %d, want %d", tc.enc, tc.chunk, got, tc.want)
		}
		if n, _ := goCodecs[tc.enc].Count(tc.chunk); n != tc.want {
			t.Errorf("%s: tiktoken-go Count(%q): got %d, want %d", tc.enc, tc.chunk, n, tc.want)
		}
	}
}

// TestTrailingWhitespace checks why cl100k_base's \s++$, which tiktoken
// added to the pattern tiktoken-go and js-tiktoken still use, changes no
// count: it joins a run of whitespace at the end of the text that the older
// pattern cuts after its last line break, and no token holds a line break
// followed by whitespace without one at its end, so the merge never joins
// the two pieces.
func TestTrailingWhitespace(t *testing.T) {
	v, err := Cl100kBase().vocab()
	if err != nil {
		t.Fatal(err)
	}
	for r := range vocabSize[Cl100k] {
		tok := v.token(uint32(r))
		for p := range len(tok) - 1 {
			if tok[p] != '\r' && tok[p] != '\n' {
				continue
			}
			if rest := tok[p+1:]; onlyOtherSpace(rest) {
				t.Errorf("token %d %q ends in a line break and %q", r, tok, rest)
			}
		}
	}
}

// onlyOtherSpace reports whether s holds whitespace other than line breaks,
// perhaps with the first bytes of one more such rune at its end.
func onlyOtherSpace(s string) bool {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 && !utf8.FullRuneInString(s) {
			return true // a cut rune could be whitespace
		}
		if r == '\r' || r == '\n' || !unicode.IsSpace(r) {
			return false
		}
		s = s[n:]
	}
	return true
}
