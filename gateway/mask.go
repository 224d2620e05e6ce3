package gateway

import (
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// minMasked is the shortest value of a variable that messages mask: a
// shorter one (a port's digit, a flag) is no secret, and masking it would
// garble every message that holds those characters.
const minMasked = 4

// minOpaque is the shortest value masked for its look alone (see
// looksSecret).
const minOpaque = 16

// secretWords are the parts of a variable's name that say its value is a
// secret, anywhere in it (MYSQL_PASSWD, GITHUB_TOKEN); secretParts say so
// as a whole part between '_', '-' or '.' (DB_PW, MYSQL_PWD, GITHUB_PAT).
var (
	secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASS", "AUTH", "CREDENTIAL", "PRIVATE"}
	secretParts = []string{"PW", "PWD", "PAT"}
)

// noteVars records the values that the ${VAR} references in s were
// replaced with (from lookup, not defaults written in the file), so that
// the server's messages show ${VAR} instead: a key in a URL's path or
// query, or in a header, does not reach the model, the prompt or a log.
// field is where s is written ("env.API_KEY", "url"): a value in a URL
// or a header, or given to a variable whose name says secret, is masked
// whatever its own variable is called (see addMask).
func (c *ServerConfig) noteVars(field, s string, v vars) {
	inURL := field == "url" || strings.HasPrefix(field, "headers.")
	for _, m := range varRef().FindAllStringSubmatch(s, -1) {
		if !v.fromEnv(m) {
			continue
		}
		if val, ok := v.lookup(m[2]); ok {
			c.addMask(m[2], val, inURL || looksSecret(field, val))
		}
	}
}

// addMask records that messages show the value val of the variable name
// as ${name}, when it looks like a secret (see looksSecret) or always is
// one (a value put in a URL or a header). Other values (a port, a flag,
// a path, "production") stay as they are, so that messages holding the
// same words read as the server wrote them.
func (c *ServerConfig) addMask(name, val string, always bool) {
	if len(val) < minMasked || !always && !looksSecret(name, val) {
		return
	}
	ref := "${" + name + "}"
	if c.masks == nil {
		c.masks = map[string]string{}
	}
	c.masks[val] = ref
	if pw := urlPassword(val); len(pw) >= minMasked {
		c.masks[pw] = ref // on its own, as a client's error may quote it
	}
	// As a URL prints it, escaped: in its path, a segment or a query.
	c.masks[(&url.URL{Path: val}).EscapedPath()] = ref
	c.masks[url.PathEscape(val)] = ref
	c.masks[url.QueryEscape(val)] = ref
}

// looksSecret reports whether the value val of the variable name looks
// like a secret: its name holds one of secretWords (API_KEY, GH_TOKEN,
// DB_PASSWORD) or is made of parts one of which is in secretParts (DB_PW;
// but not PWD alone, the working directory), the value is a URL with a
// password (postgres://app:pw@db), or it is opaque, minOpaque bytes or
// more without spaces holding both letters and digits (a generated key,
// a JWT).
func looksSecret(name, val string) bool {
	upper := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	if upper != "PWD" {
		parts := strings.FieldsFunc(upper, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
		for _, p := range parts {
			if slices.Contains(secretParts, p) {
				return true
			}
		}
	}
	if urlPassword(val) != "" {
		return true
	}
	if len(val) < minOpaque || strings.ContainsFunc(val, unicode.IsSpace) {
		return false
	}
	return strings.ContainsFunc(val, unicode.IsLetter) && strings.ContainsFunc(val, unicode.IsDigit)
}

// urlPassword is the password of val when it is a URL with one, or "".
func urlPassword(val string) string {
	if !strings.Contains(val, "://") || !strings.Contains(val, "@") {
		return ""
	}
	u, err := url.Parse(val)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
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
