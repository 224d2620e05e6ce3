package gateway

import (
	"net/url"
	"slices"
	"strings"
)

// minMasked is the shortest value of a variable that messages mask: a
// shorter one (a port's digit, a flag) is no secret, and masking it would
// garble every message that holds those characters.
const minMasked = 4

// noteVars records the values that the ${VAR} references in s were
// replaced with (from lookup, not defaults written in the file), so that
// the server's messages show ${VAR} instead: a key in a URL's path or
// query, or in a header, does not reach the model, the prompt or a log.
func (c *ServerConfig) noteVars(s string, v vars) {
	for _, m := range varRef().FindAllStringSubmatch(s, -1) {
		if !v.fromEnv(m) {
			continue
		}
		if val, ok := v.lookup(m[2]); ok {
			c.addMask(val, "${"+m[2]+"}")
		}
	}
}

// addMask records that messages show val as ref, when val is long enough to
// be a secret.
func (c *ServerConfig) addMask(val, ref string) {
	if len(val) < minMasked {
		return
	}
	if c.masks == nil {
		c.masks = map[string]string{}
	}
	c.masks[val] = ref
	// As a URL prints it, escaped: in its path, a segment or a query.
	c.masks[(&url.URL{Path: val}).EscapedPath()] = ref
	c.masks[url.PathEscape(val)] = ref
	c.masks[url.QueryEscape(val)] = ref
}

// mask returns s with the values of the configuration's variables
// replaced by their ${VAR} references, the longest first (a value that
// holds another is masked whole).
func (c ServerConfig) mask(s string) string {
	if len(c.masks) == 0 {
		return s
	}
	vals := make([]string, 0, len(c.masks))
	for v := range c.masks {
		vals = append(vals, v)
	}
	slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, c.masks[v])
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// maskedValues returns the values mask replaces.
func (c ServerConfig) maskedValues() []string {
	vals := make([]string, 0, len(c.masks))
	for v := range c.masks {
		vals = append(vals, v)
	}
	return vals
}

// longestMasked is the length of the longest value mask replaces.
func (c ServerConfig) longestMasked() int {
	n := 0
	for v := range c.masks {
		n = max(n, len(v))
	}
	return n
}

// maskedError is an error whose text has the configuration's variables
// masked; it unwraps to the error as it was, for errors.Is and errors.As.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// maskErr returns err with its text masked (see mask); err itself when
// nothing in it is masked.
func (c ServerConfig) maskErr(err error) error {
	if err == nil {
		return nil
	}
	msg := c.mask(err.Error())
	if msg == err.Error() {
		return err
	}
	return &maskedError{msg: msg, err: err}
}
