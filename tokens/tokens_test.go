package tokens_test

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tokens/bpe"
)

// maxEstimateError is the documented bound on the estimate's error against
// o200k_base on the sample texts.
const maxEstimateError = 0.12

func samples(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) < 5 {
		t.Fatalf("want the five sample texts in testdata, got %v %v", files, err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = string(b)
	}
	return out
}

func TestEstimateWithinDocumentedError(t *testing.T) {
	for name, text := range samples(t) {
		t.Run(name, func(t *testing.T) {
			exact := bpe.O200kBase().Count(text)
			est := tokens.Estimate.Count(text)
			rel := float64(est-exact) / float64(exact)
			t.Logf("o200k %d, estimate %d (%+.1f%%)", exact, est, 100*rel)
			if rel > maxEstimateError || rel < -maxEstimateError {
				t.Errorf("estimate %d is %+.1f%% off the exact %d; the documented bound is %.0f%%", est, 100*rel, exact, 100*maxEstimateError)
			}
		})
	}
}

func TestEstimateShapes(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello", 1},
		{"hello world", 2},
		{"internationalization", 3},
		{"12345", 2},
		{"a.b", 2},
		{"\n\n\t", 1},
		{"日本語", 3},
		{"\xff\xfe", 2},
	} {
		if got := tokens.Estimate.Count(tc.text); got != tc.want {
			t.Errorf("Estimate(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestCounterFunc(t *testing.T) {
	c := tokens.CounterFunc(func(s string) int { return len(strings.Fields(s)) })
	if got := c.Count("a b c"); got != 3 {
		t.Errorf("got %d, want 3", got)
	}
}

func BenchmarkEstimate(b *testing.B) {
	var all strings.Builder
	for _, f := range []string{"prose", "code.go", "data.json", "shell", "markdown"} {
		data, err := os.ReadFile(filepath.Join("testdata", f+".txt"))
		if err != nil {
			b.Fatal(err)
		}
		all.Write(data)
	}
	text := strings.Repeat(all.String(), 150) // about 1 MB
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tokens.Estimate.Count(text)
	}
}

// TestEstimateAddsUpAtHeadings: the estimate's counts add up across a blank
// line before a printable ASCII character other than '/' (tokens.Additive),
// for cuts of the samples into two, the second part starting with each such
// character in turn.
func TestEstimateAddsUpAtHeadings(t *testing.T) {
	if _, ok := tokens.Estimate.(tokens.Additive); !ok {
		t.Fatal("Estimate is not tokens.Additive")
	}
	for name, text := range samples(t) {
		for cut := 0; cut < len(text); cut += 97 {
			first := string(rune('!' + cut%94))
			if first == "/" {
				first = "#"
			}
			a, b := text[:cut], first+text[cut:]
			if whole, parts := tokens.Estimate.Count(a+"\n\n"+b), tokens.Estimate.Count(a+"\n\n")+tokens.Estimate.Count(b); whole != parts {
				t.Fatalf("%s cut at %d: the joined text counts %d, the parts %d", name, cut, whole, parts)
			}
		}
	}
}

// TestEstimateRandomRuns: runs of letters and digits with no words in them
// (base64, hex digests, random identifiers) cost a byte-pair encoding far
// more than words of their length; the estimate stays at or a little above
// o200k_base on them, so a budget counted with it holds.
func TestEstimateRandomRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for _, tc := range []struct {
		name string
		text func() string
	}{
		{"base64", func() string {
			raw := make([]byte, 6000)
			for i := range raw {
				raw[i] = byte(rng.IntN(256))
			}
			return base64.StdEncoding.EncodeToString(raw)
		}},
		{"base64 lines", func() string {
			raw := make([]byte, 6000)
			for i := range raw {
				raw[i] = byte(rng.IntN(256))
			}
			s := base64.StdEncoding.EncodeToString(raw)
			var b strings.Builder
			for ; len(s) > 76; s = s[76:] {
				b.WriteString(s[:76] + "\n")
			}
			return b.String() + s
		}},
		{"sha256 digests", func() string {
			var b strings.Builder
			for i := range 200 {
				h := sha256.Sum256([]byte(fmt.Sprint(i)))
				fmt.Fprintf(&b, "%x  file%d.txt\n", h, i)
			}
			return b.String()
		}},
		{"identifiers", func() string {
			var b strings.Builder
			for range 200 {
				fmt.Fprintf(&b, "id: %s\n", random(24, alnum))
			}
			return b.String()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.text()
			exact := bpe.O200kBase().Count(text)
			est := tokens.Estimate.Count(text)
			ratio := float64(est) / float64(exact)
			t.Logf("o200k %d, estimate %d (%.2f)", exact, est, ratio)
			if ratio < 0.97 || ratio > 1.2 {
				t.Errorf("estimate %d is %.2f times the exact %d, want 0.97 to 1.2", est, ratio, exact)
			}
			for cut := 0; cut < len(text); cut += 101 {
				a, b := text[:cut]+"\n\n", "#"+text[cut:]
				if whole, parts := tokens.Estimate.Count(a+b), tokens.Estimate.Count(a)+tokens.Estimate.Count(b); whole != parts {
					t.Fatalf("cut at %d: the joined text counts %d, the parts %d", cut, whole, parts)
				}
			}
		})
	}
}
