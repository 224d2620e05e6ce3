package bpe

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer"

	"github.com/unfold-dev/unfold/internal/textgen"
)

// The reference this package must agree with: tiktoken-go's codecs, and its
// split patterns compiled by regexp2, which picks the same generated
// matcher tiktoken-go runs.
var (
	refOnce    sync.Once
	refCodecs  map[Encoding]tokenizer.Codec
	refSplit   map[Encoding]*regexp2.Regexp
	refLoadErr error
)

// refPatterns are tiktoken-go v0.10.0's split patterns, codec/o200k_base.go
// and codec/cl100k_base.go.
var refPatterns = map[Encoding]string{
	O200k:  `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	Cl100k: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
}

var counters = []*Counter{O200kBase(), Cl100kBase()}

func loadRef(t testing.TB) {
	t.Helper()
	refOnce.Do(func() {
		refCodecs = map[Encoding]tokenizer.Codec{}
		refSplit = map[Encoding]*regexp2.Regexp{}
		for enc, name := range map[Encoding]tokenizer.Encoding{O200k: tokenizer.O200kBase, Cl100k: tokenizer.Cl100kBase} {
			c, err := tokenizer.Get(name)
			if err != nil {
				refLoadErr = err
				return
			}
			refCodecs[enc] = c
			refSplit[enc] = regexp2.MustCompile(refPatterns[enc], regexp2.None)
		}
	})
	if refLoadErr != nil {
		t.Fatal(refLoadErr)
	}
}

// refCount is tiktoken-go's count of text.
func refCount(t testing.TB, enc Encoding, text string) int {
	loadRef(t)
	n, err := refCodecs[enc].Count(text)
	if err != nil {
		t.Fatalf("tiktoken-go %s: Count(%q): %v", enc, text, err)
	}
	return n
}

// refChunks is how tiktoken-go splits text.
func refChunks(t testing.TB, enc Encoding, text string) []string {
	loadRef(t)
	var chunks []string
	m, err := refSplit[enc].FindStringMatch(text)
	for ; m != nil && err == nil; m, err = refSplit[enc].FindNextMatch(m) {
		chunks = append(chunks, m.String())
	}
	if err != nil {
		t.Fatalf("regexp2 %s on %q: %v", enc, text, err)
	}
	return chunks
}

// chunks is how c splits text, with invalid bytes replaced as Count does.
func chunks(c *Counter, text string) []string {
	text = replaceInvalid(text)
	var out []string
	for i := 0; i < len(text); {
		e := c.chunk(text, i)
		if e == i {
			i++
			continue
		}
		out = append(out, text[i:e])
		i = e
	}
	return out
}

// checkAgainstRef fails the test unless c splits and counts text as
// tiktoken-go does, and LowerBound is at most the count.
func checkAgainstRef(t testing.TB, c *Counter, text string) {
	t.Helper()
	enc := c.Encoding()
	if got, want := chunks(c, text), refChunks(t, enc, text); !equal(got, want) {
		t.Fatalf("%s: chunks of %q: got %q, want %q", enc, text, got, want)
	}
	got, want := c.Count(text), refCount(t, enc, text)
	if got != want {
		t.Fatalf("%s: Count(%q): got %d, want %d", enc, text, got, want)
	}
	if lb := c.LowerBound(text); lb > got {
		t.Fatalf("%s: LowerBound(%q) = %d, above Count %d", enc, text, lb, got)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
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

// TestEdgeCases compares chunks and counts with tiktoken-go's on texts at
// the edges of the split patterns.
func TestEdgeCases(t *testing.T) {
	for _, c := range counters {
		for _, tc := range edgeCases {
			t.Run(fmt.Sprintf("%s/%s", c.Encoding(), tc.name), func(t *testing.T) {
				checkAgainstRef(t, c, tc.text)
			})
		}
	}
}

// TestRandomTexts compares chunks and counts with tiktoken-go's on texts
// drawn from the palette.
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

// TestDocuments compares counts with tiktoken-go's on the sample files and
// on generated markdown, whole and cut at arbitrary bytes.
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
