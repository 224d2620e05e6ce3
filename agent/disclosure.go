package agent

import "fmt"

// Disclosure says where an opened section reaches the model;
// [ParseDisclosure] reads one by name.
type Disclosure int

const (
	// DisclosureDefault is DisclosureAppend for a model whose provider
	// caches prompt prefixes (Features.CachesPrefixes), DisclosureRerender
	// otherwise.
	DisclosureDefault Disclosure = iota
	// DisclosureRerender renders the system message again when a section
	// opens, the section in place, and offers its tools in the tool list
	// where the render puts them.
	DisclosureRerender
	// DisclosureAppend keeps the system message and the tool list of the
	// run's start: an opened section's content is the answer to the
	// open_sections call, and its tools reach the model through the
	// provider's deferred tools ([Request.Deferred]) or at the end of the
	// tool list. The conversation only grows, so a provider's prompt
	// cache keeps serving all of it.
	DisclosureAppend
)

// String returns "default", "rerender" or "append".
func (d Disclosure) String() string {
	switch d {
	case DisclosureRerender:
		return "rerender"
	case DisclosureAppend:
		return "append"
	}
	return "default"
}

// ParseDisclosure reads "append", "rerender", or "" or "default".
func ParseDisclosure(s string) (Disclosure, error) {
	switch s {
	case "", "default":
		return DisclosureDefault, nil
	case "rerender":
		return DisclosureRerender, nil
	case "append":
		return DisclosureAppend, nil
	}
	return 0, fmt.Errorf("agent: unknown disclosure %q: want append or rerender", s)
}
