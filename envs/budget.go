package envs

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/tokens"
)

// DefaultBudget is how many tokens a response's output may take by
// default, as [tokens.Estimate] counts them.
const DefaultBudget = 8000

// noteTokens is what the note that replaces a cut middle costs, at most.
const noteTokens = 80

// Fit returns resp with its output cut to l.Budget tokens ([tokens.Estimate]
// counts them) when it takes more: the head and the tail are kept, a note
// in between says how much was left out, and the whole output is saved
// with l.Save (or [SaveTemp]); its name is in the note and in OutputFile.
// Nothing is lost: when saving fails, the note says so and the output is
// returned whole. An environment whose outputs may pass their memory
// limit fits its responses with [Spool.Fit] instead, which saves the
// whole of those outputs too.
func (l Limits) Fit(resp Response) Response {
	budget := l.Budget
	if budget <= 0 || len(resp.Output) <= budget {
		// Every token of the estimate takes a byte at least.
		return resp
	}
	total := tokens.Estimate.Count(resp.Output)
	if total <= budget {
		return resp
	}
	save := l.Save
	if save == nil {
		save = SaveTemp
	}
	name, err := save(strings.NewReader(resp.Output))
	if err != nil {
		resp.Output += fmt.Sprintf("\n[This output (%d tokens) is over the budget of %d tokens, but could not be saved to a file (%v), so it is shown whole.]", total, budget, err)
		return resp
	}
	avail := max(budget-noteTokens, 2)
	head, tail := cut(resp.Output, avail/2, avail-avail/2)
	middle := resp.Output[len(head) : len(resp.Output)-len(tail)]
	lines := strings.Count(resp.Output, "\n") + 1
	left := fmt.Sprintf("%d of %d lines (%d of %d tokens)", strings.Count(middle, "\n"), lines, tokens.Estimate.Count(middle), total)
	resp.Output = head + budgetNote(head, tail, left, budget, "the whole output is saved in "+name, l.readHow(name), "") + tail
	resp.OutputFile = name
	return resp
}

// budgetNote is the note between head and tail of an output cut to the
// budget: left says how much was left out ("3 of 10 lines (...)"), saved
// where the output is ("the whole output is saved in NAME"), how how to
// read it (see Limits.Read). extra, when not empty, is a sentence added at
// its end.
func budgetNote(head, tail, left string, budget int, saved, how, extra string) string {
	note := fmt.Sprintf("[... %s left out here to fit the budget of %d tokens; %s: %s.%s]",
		left, budget, saved, how, extra)
	if head != "" && !strings.HasSuffix(head, "\n") {
		note = "\n" + note
	}
	if tail != "" {
		note += "\n"
	}
	return note
}

// cut returns the longest head of s, in whole lines, that takes at most
// headTokens tokens, and the longest tail, not overlapping it, that takes
// at most tailTokens; when not even one line fits, a part of the first
// (or last) line is taken.
func cut(s string, headTokens, tailTokens int) (head, tail string) {
	count := tokens.Estimate.Count
	end, used := 0, 0
	for end < len(s) {
		line := s[end:]
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		}
		c := count(line)
		if used+c > headTokens {
			if end == 0 {
				// Not even one line fits: a part of it does.
				end += len(prefixWithin(line, headTokens))
			}
			break
		}
		used += c
		end += len(line)
	}
	head = s[:end]
	start, used := len(s), 0
	for start > end {
		line := s[end:start]
		if i := strings.LastIndexByte(line[:len(line)-1], '\n'); i >= 0 {
			line = line[i+1:]
		}
		c := count(line)
		if used+c > tailTokens {
			if start == len(s) {
				start -= len(suffixWithin(line, tailTokens))
			}
			break
		}
		used += c
		start -= len(line)
	}
	return head, s[start:]
}

// prefixWithin returns the longest prefix of s, ending at a character
// boundary, that takes at most n tokens (about).
func prefixWithin(s string, n int) string {
	return within(s, n, func(k int) string {
		for k > 0 && k < len(s) && !utf8.RuneStart(s[k]) {
			k--
		}
		return s[:k]
	})
}

// suffixWithin returns the longest suffix of s, starting at a character
// boundary, that takes at most n tokens (about).
func suffixWithin(s string, n int) string {
	return within(s, n, func(k int) string {
		i := len(s) - k
		for i < len(s) && i > 0 && !utf8.RuneStart(s[i]) {
			i++
		}
		return s[i:]
	})
}

// within shrinks a piece of s, taken by part(k bytes), until it takes at
// most n tokens. Tokens take a byte or more, so n bytes never exceed n
// tokens; the first guess is four bytes a token, as in plain text.
func within(s string, n int, part func(k int) string) string {
	if n <= 0 {
		return ""
	}
	k := min(len(s), 4*n)
	for {
		p := part(k)
		c := tokens.Estimate.Count(p)
		if c <= n || k <= n {
			if c > n {
				return part(n)
			}
			return p
		}
		k = max(n, k*n/c*9/10)
	}
}

// SaveTemp saves output to a new file in the system's temporary directory
// and returns its path: the default of [Limits.Save].
func SaveTemp(output io.Reader) (string, error) { return SaveIn("", "unfold-output-*.txt", output) }

// SaveIn saves output to a new file in dir, named after pattern as
// os.CreateTemp names it, and returns its path; on failure no file is
// left.
func SaveIn(dir, pattern string, output io.Reader) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, output); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
