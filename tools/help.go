package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/internal/utf8cut"
)

// HelpName is the name of the tool NewHelp returns.
const HelpName = "help"

// HelpIndex is what a help tool describes: the environments a prompt offers,
// its tools and the sections the model can open. The tools package does not
// know prompts or environments, so whoever assembles the prompt fills it in
// (the agent package does, at every call).
type HelpIndex struct {
	// About is a paragraph that opens a full listing: how the front end
	// that offers the tool works (its resources, say).
	About        string        `json:"about,omitempty"`
	Environments []HelpEntry   `json:"environments,omitempty"`
	Tools        []HelpEntry   `json:"tools,omitempty"`
	Sections     []HelpSection `json:"sections,omitempty"`
}

// HelpEntry is an environment or a tool: its name, what it does, how to
// use it (for an environment, the tool or the code block that reaches it)
// and, for an environment, the help its screen shows (its commands).
type HelpEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Usage       string `json:"usage,omitempty"`
	Help        string `json:"help,omitempty"`
}

// HelpSection is a summarized section the model can open with open_sections.
type HelpSection struct {
	Key      string `json:"key"`
	Title    string `json:"title"`
	Summary  string `json:"summary"`
	HasTools bool   `json:"has_tools"` // opening it offers more tools
}

// HelpInput is the input of the help tool.
type HelpInput struct {
	Query string `json:"query,omitempty" description:"Optional: what you want to do or know, such as \"edit a file\" or \"run tests\". Leave it out to list everything."`
}

// HelpOutput is what the help tool returns: the entries that match the query
// (all of them without one) and recommendations, best first.
type HelpOutput struct {
	Query           string        `json:"query,omitempty"`
	About           string        `json:"about,omitempty"`
	Environments    []HelpEntry   `json:"environments,omitempty"`
	Tools           []HelpEntry   `json:"tools,omitempty"`
	Sections        []HelpSection `json:"sections,omitempty"`
	Recommendations []string      `json:"recommendations,omitempty"`
	Note            string        `json:"note,omitempty"`
}

// maxRecommendations bounds the recommendations one answer gives.
const maxRecommendations = 3

// maxQueryWords bounds the different words of a query that are matched: a
// query is a few words, and one that carries a pasted text (megabytes, from
// a model caught in a loop) must not hold the call for each word times each
// entry. The words after them are ignored, and the answer says so.
const maxQueryWords = 64

// maxShownQuery bounds the bytes of the query quoted back, as
// open_sections bounds a key it does not know.
const maxShownQuery = 200

const helpDescription = "List what this prompt offers: environments and how to use them, tools, and summarized sections you can open with open_sections. Give a query to filter and get recommendations."

// NewHelp returns the help tool, named [HelpName]. index is called at every call, so the
// answer follows the prompt as sections open and tools appear; it must be
// safe to call from the goroutine running the tool. A nil index is an error.
func NewHelp(index func() HelpIndex) (*Tool, error) {
	if index == nil {
		return nil, errors.New("tools: new help: nil index function")
	}
	t, err := New(HelpName, helpDescription, func(ctx context.Context, _ Context, in HelpInput) (HelpOutput, error) {
		return answerHelp(ctx, index(), in.Query)
	})
	if err != nil {
		return nil, err
	}
	// It only reads the index.
	return t.WithHints(Hints{ReadOnly: true, Idempotent: true}), nil
}

// answerHelp filters idx by query and ranks what matched. It stops with
// ctx's error when ctx is done: an index can be long (a gateway's tools).
func answerHelp(ctx context.Context, idx HelpIndex, query string) (HelpOutput, error) {
	query = strings.TrimSpace(query)
	words, used := queryWords(query)
	if len(words) == 0 {
		return HelpOutput{Query: shownQuery(query), About: idx.About, Environments: idx.Environments, Tools: idx.Tools, Sections: idx.Sections}, nil
	}
	var note string
	if used < len(query) {
		note = fmt.Sprintf("Only the first %d different words of the query were used; the %d bytes after them were ignored. A query is a few words, such as \"edit a file\".", maxQueryWords, len(query)-used)
	}
	type candidate struct {
		score int
		order int
		rec   string
	}
	var cands []candidate
	out := HelpOutput{Query: shownQuery(query), Note: note}
	for _, e := range idx.Environments {
		if err := ctx.Err(); err != nil {
			return HelpOutput{}, err
		}
		if s := score(words, e.Name, e.Description+" "+e.Usage+" "+e.Help); s > 0 {
			out.Environments = append(out.Environments, e)
			rec := fmt.Sprintf("Use the %s environment: %s", e.Name, e.Description)
			if e.Usage != "" {
				rec += " (" + e.Usage + ")"
			}
			cands = append(cands, candidate{s, len(cands), rec})
		}
	}
	for _, t := range idx.Tools {
		if err := ctx.Err(); err != nil {
			return HelpOutput{}, err
		}
		if s := score(words, t.Name, t.Description); s > 0 {
			out.Tools = append(out.Tools, t)
			cands = append(cands, candidate{s, len(cands), fmt.Sprintf("Call the %s tool: %s", t.Name, firstSentence(t.Description))})
		}
	}
	for _, sec := range idx.Sections {
		if err := ctx.Err(); err != nil {
			return HelpOutput{}, err
		}
		if s := score(words, sec.Key, sec.Title+" "+sec.Summary); s > 0 {
			out.Sections = append(out.Sections, sec)
			what := "to read it"
			if sec.HasTools {
				what = "to get its tools"
			}
			cands = append(cands, candidate{s, len(cands), fmt.Sprintf("Call open_sections with key %q %s: %s", sec.Key, what, sec.Summary)})
		}
	}
	if len(cands) == 0 {
		shown := fmt.Sprintf("%q", out.Query)
		if len(out.Query) < len(query) {
			shown = fmt.Sprintf("%q (the query is %d bytes long; only its first %d are shown)", out.Query+"…", len(query), len(out.Query))
		}
		nothing := fmt.Sprintf("Nothing matched %s; this is everything the prompt offers.", shown)
		if note != "" {
			nothing += " " + note
		}
		return HelpOutput{
			Query: out.Query, About: idx.About, Environments: idx.Environments, Tools: idx.Tools, Sections: idx.Sections,
			Note: nothing,
		}, nil
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return a.order - b.order
	})
	for _, c := range cands[:min(len(cands), maxRecommendations)] {
		out.Recommendations = append(out.Recommendations, c.rec)
	}
	return out, nil
}

// shownQuery is the query as an answer quotes it: at most maxShownQuery
// bytes, cut between characters.
func shownQuery(query string) string {
	return utf8cut.Prefix(query, maxShownQuery)
}

// synonyms widen a query word to the words the built-in environments and
// tools use for the same thing.
var synonyms = map[string][]string{
	"file":    {"editor", "edit", "view", "read", "write"},
	"files":   {"editor", "edit", "view", "read", "write"},
	"read":    {"view", "editor", "open"},
	"write":   {"edit", "editor", "create"},
	"change":  {"edit", "editor"},
	"run":     {"command", "shell", "bash", "execute"},
	"command": {"shell", "bash", "run"},
	"shell":   {"bash", "command"},
	"script":  {"python", "bash"},
	"code":    {"python", "editor"},
	"docs":    {"reference", "documentation", "section"},
	"more":    {"open", "section", "summarized"},
	"test":    {"tests", "bash", "run"},
	"tests":   {"test", "bash", "run"},
}

var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "do": true, "i": true, "how": true,
	"can": true, "what": true, "is": true, "of": true, "in": true, "for": true, "and": true,
	"or": true, "with": true, "my": true, "me": true, "it": true, "on": true, "be": true,
}

// queryWords splits a query into lower-case words, without stop words or
// repeats, and stops at maxQueryWords of them: used is how many bytes of q
// were looked at (len(q) when none was left out). One pass over q, and
// the memory is bounded by the words kept, not by the length of q.
func queryWords(q string) (words []string, used int) {
	seen := make(map[string]bool, maxQueryWords)
	for i := 0; i < len(q); {
		r, size := utf8.DecodeRuneInString(q[i:])
		if !isQueryRune(r) {
			i += size
			continue
		}
		start := i
		for i < len(q) {
			r, size = utf8.DecodeRuneInString(q[i:])
			if !isQueryRune(r) {
				break
			}
			i += size
		}
		w := strings.ToLower(q[start:i])
		if stopWords[w] || seen[w] {
			continue
		}
		if len(words) == maxQueryWords {
			return words, start
		}
		seen[w] = true
		words = append(words, w)
	}
	return words, len(q)
}

// isQueryRune reports whether r belongs to a query word.
func isQueryRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'
}

// score rates how well an entry matches the query words: a word in the name
// counts three, in the text one; a synonym counts half as much, rounded down
// but at least one.
func score(words []string, name, text string) int {
	name, text = strings.ToLower(name), strings.ToLower(text)
	total := 0
	for _, w := range words {
		switch {
		case strings.Contains(name, w):
			total += 3
		case containsWord(text, w):
			total++
		default:
			for _, s := range synonyms[w] {
				if strings.Contains(name, s) {
					total++
					break
				}
			}
		}
	}
	return total
}

// containsWord reports whether w starts a word of text.
func containsWord(text, w string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], w)
		if j < 0 {
			return false
		}
		at := i + j
		if at == 0 || !isWordByte(text[at-1]) {
			return true
		}
		i = at + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// String is the message the model reads: one block per kind of entry,
// recommendations first, and each environment's own help last.
func (h HelpOutput) String() string {
	var b strings.Builder
	if h.Note != "" {
		b.WriteString(h.Note + "\n\n")
	}
	if h.About != "" {
		b.WriteString(h.About + "\n\n")
	}
	if len(h.Recommendations) > 0 {
		b.WriteString("Recommended:\n")
		for _, r := range h.Recommendations {
			b.WriteString("- " + r + "\n")
		}
		b.WriteString("\n")
	}
	if len(h.Environments) > 0 {
		b.WriteString("Environments:\n")
		for _, e := range h.Environments {
			b.WriteString("- " + e.Name + ": " + e.Description)
			if e.Usage != "" {
				b.WriteString(" (" + e.Usage + ")")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if len(h.Tools) > 0 {
		b.WriteString("Tools:\n")
		for _, t := range h.Tools {
			b.WriteString("- " + t.Name + ": " + firstSentence(t.Description) + "\n")
		}
		b.WriteString("\n")
	}
	if len(h.Sections) > 0 {
		b.WriteString("Sections you can open with open_sections:\n")
		for _, s := range h.Sections {
			b.WriteString(fmt.Sprintf("- %s (%s): %s", s.Key, s.Title, s.Summary))
			if s.HasTools {
				b.WriteString(" [offers tools]")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	for _, e := range h.Environments {
		if e.Help != "" {
			b.WriteString("## " + e.Name + "\n\n" + e.Help + "\n\n")
		}
	}
	if b.Len() == 0 {
		return "This prompt offers no environments, tools or sections to open."
	}
	return strings.TrimRight(b.String(), "\n")
}
