package visibility

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Mode is how a section renders.
type Mode uint8

const (
	// Full renders the section's body and its children. It is the zero value.
	Full Mode = iota
	// Summary renders the section's summary in place of its body and children.
	Summary
)

// String returns "FULL" or "SUMMARY".
func (m Mode) String() string {
	switch m {
	case Full:
		return "FULL"
	case Summary:
		return "SUMMARY"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

func (m Mode) valid() bool { return m == Full || m == Summary }

// MarshalJSON encodes the mode as "full" or "summary".
func (m Mode) MarshalJSON() ([]byte, error) {
	switch m {
	case Full:
		return []byte(`"full"`), nil
	case Summary:
		return []byte(`"summary"`), nil
	}
	return nil, fmt.Errorf("visibility: invalid mode %d", uint8(m))
}

// UnmarshalJSON decodes "full" or "summary" (any case).
func (m *Mode) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("visibility: mode must be a string, \"full\" or \"summary\"")
	}
	mode, err := ParseMode(s)
	if err != nil {
		return err
	}
	*m = mode
	return nil
}

// ParseMode parses "full" or "summary", in any case.
func ParseMode(s string) (Mode, error) {
	switch {
	case strings.EqualFold(s, "full"):
		return Full, nil
	case strings.EqualFold(s, "summary"):
		return Summary, nil
	}
	return Full, fmt.Errorf("visibility: unknown mode %q: want full or summary", s)
}

// Why says which rule decided a section's mode.
type Why uint8

const (
	// Declared: the section's constant selector, or none (FULL).
	Declared Why = iota
	// Selected: the section's selector function, of params or session state.
	Selected
	// Overridden: a session override.
	Overridden
	// Budget: a token budget decided: it demoted the section to its
	// summary, or showed a summarized section in full because its content
	// costs no more than its summary.
	Budget
	// NoSummary: a session override asked for SUMMARY, but the section
	// has no summary, so it shows FULL. Prompts change between the runs
	// of a session: an override the section cannot honour any more is
	// not applied, as one of a path no section has.
	NoSummary
)

var whyNames = [...]string{"declared", "selector", "override", "budget", "no summary"}

// String returns "declared", "selector", "override", "budget" or
// "no summary".
func (w Why) String() string {
	if int(w) < len(whyNames) {
		return whyNames[w]
	}
	return fmt.Sprintf("Why(%d)", uint8(w))
}

// MarshalJSON encodes the reason as its string.
func (w Why) MarshalJSON() ([]byte, error) { return json.Marshal(w.String()) }
