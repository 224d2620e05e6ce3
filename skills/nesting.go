package skills

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/token"
)

// Bounds on the shape of a front matter, checked on its tokens before
// they are parsed. go-yaml's parser takes memory that grows with the
// square of the nesting (a path of every level is built for each node)
// and time that grows with the square of a mapping's keys, so 64 KiB of
// "[" would take gigabytes. The format needs two levels (metadata, then
// its values) and a handful of keys.
const (
	// MaxNesting bounds how deep a front matter's lists and mappings
	// nest, in brackets ([ ], { }) and by indentation together.
	MaxNesting = 64
	// MaxKeys bounds the keys of one mapping written by indentation.
	MaxKeys = 1000
)

// level is a list or mapping written by indentation, open at a point of
// the tokens.
type level struct {
	column   int  // where its entries start
	sequence bool // a list ("- " entries); else a mapping
	keys     int  // the keys of a mapping so far
	explicit bool // a "? " key is waiting for its ":"
}

// checkShape returns the first token of tks that takes the front matter
// past MaxNesting or one of its mappings past MaxKeys, with the message
// that says so; nil when none does. It reads the tokens go-yaml's lexer
// made, so quotes, comments and block scalars ("|", ">") count as the
// parser counts them, and its count of the levels is never below the
// parser's: an entry starts a deeper level unless one is open at its
// column.
func checkShape(tks token.Tokens) (*token.Token, string) {
	var open []level
	flow := 0                 // brackets open
	var previous *token.Token // the last token that is not a comment
	for _, tk := range tks {
		if tk.Type == token.CommentType {
			continue
		}
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow = max(flow-1, 0)
		case token.SequenceEntryType:
			if flow > 0 {
				break
			}
			open = closeAfter(open, tk.Position.Column)
			if n := len(open); n == 0 || open[n-1].column < tk.Position.Column || !open[n-1].sequence {
				open = append(open, level{column: tk.Position.Column, sequence: true})
			}
		case token.MappingKeyType, token.MappingValueType:
			if flow > 0 {
				break
			}
			column := keyColumn(tk, previous)
			open = closeAfter(open, column)
			if n := len(open); n > 0 && open[n-1].column == column && open[n-1].sequence {
				open = open[:n-1] // a list that was the last key's value ends
			}
			n := len(open)
			if n == 0 || open[n-1].column < column {
				open = append(open, level{column: column})
				n++
			}
			m := &open[n-1]
			switch {
			case tk.Type == token.MappingKeyType:
				m.keys++
				m.explicit = true
			case m.explicit:
				m.explicit = false // the value of the "? " key counted
			default:
				m.keys++
			}
			if m.keys > MaxKeys {
				return tk, fmt.Sprintf("a mapping in the front matter has more than %d keys: the fields are %s, and metadata needs a few", MaxKeys, strings.Join(known, ", "))
			}
		}
		if len(open)+flow > MaxNesting {
			return tk, fmt.Sprintf("the front matter nests lists and mappings more than %d levels deep (in brackets [ ], { } or by indentation): the fields need two; write metadata as lines of key: value", MaxNesting)
		}
		previous = tk
	}
	return nil, ""
}

// closeAfter closes the levels whose entries start right of column.
func closeAfter(open []level, column int) []level {
	for len(open) > 0 && open[len(open)-1].column > column {
		open = open[:len(open)-1]
	}
	return open
}

// keyColumn is where the key of tk, a "? " or ":" indicator, starts: the
// column of the key before a ":" on its line, else the indicator's own.
func keyColumn(tk, previous *token.Token) int {
	if tk.Type != token.MappingValueType || previous == nil || previous.Position.Line != tk.Position.Line {
		return tk.Position.Column
	}
	switch previous.Type {
	case token.SequenceEntryType, token.MappingKeyType, token.MappingValueType,
		token.SequenceStartType, token.MappingStartType, token.CollectEntryType:
		return tk.Position.Column // an empty key
	}
	return previous.Position.Column
}
