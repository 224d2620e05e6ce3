package tools

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/internal/utf8cut"
)

// MaxNameLen is the longest tool name the major model APIs accept.
const MaxNameLen = 64

// ErrInvalidName is wrapped by the errors [ValidName] and [New] return for a
// name that does not match ^[a-zA-Z0-9_-]{1,64}$.
var ErrInvalidName = errors.New("invalid tool name")

// ValidName reports an error when name does not match ^[a-zA-Z0-9_-]{1,64}$,
// saying which rule it breaks. The error wraps [ErrInvalidName].
func ValidName(name string) error {
	if err := checkName(name); err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	return nil
}

// checkName is ValidName without the package prefix, so New can add its own.
func checkName(name string) error {
	const rule = "names must match ^[a-zA-Z0-9_-]{1,64}$ (ASCII letters, digits, '_' and '-')"
	if name == "" {
		return fmt.Errorf("%w: the name is empty; %s", ErrInvalidName, rule)
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w %s: %d bytes, at most %d allowed; %s",
			ErrInvalidName, quoteName(name), len(name), MaxNameLen, rule)
	}
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		if !nameChar(r) {
			return fmt.Errorf("%w %s: character %q at byte %d is not allowed; %s",
				ErrInvalidName, quoteName(name), r, i, rule)
		}
		i += size
	}
	return nil
}

func nameChar(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-'
}

// quoteName quotes a name for an error message, cutting long ones short so a
// hostile name cannot blow up the message.
func quoteName(name string) string {
	const max = 80
	if len(name) <= max {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q...", truncate(name, max))
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	return utf8cut.Prefix(s, n)
}
