package gateway

import (
	"errors"
	"fmt"
	"strings"
)

// errEnvLine is the error of a line of a dotenv file that does not parse.
var errEnvLine = errors.New("not a KEY=value line")

// parseDotenv reads the KEY=value lines of a dotenv file as node's dotenv
// and VS Code's envFile readers do, without expanding anything: $NAME and
// ${NAME} stay as written. The rules (docs/gateway.md):
//   - blank lines and lines starting with # are skipped;
//   - a line is KEY=value, optionally after "export "; KEY is letters,
//     digits, '_', '.' and '-', not starting with a digit, '.' or '-';
//     spaces around KEY and value are dropped;
//   - a value in single quotes or backquotes is taken as written; one in
//     double quotes has \n, \r, \t, \" and \\ read as escapes; either
//     may span lines, and only spaces and a # comment may follow it;
//   - an unquoted value ends at the line's end or at a # after a space.
//
// An error starts with the line's number, and names it by that alone and quotes nothing of the
// file, whose lines may hold secrets.
func parseDotenv(text string) (map[string]string, error) {
	env := map[string]string{}
	text = strings.TrimPrefix(text, "\ufeff") // as editors on Windows save it
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	bad := func(i int, problem string) error {
		return fmt.Errorf("%d: %w: %s; write KEY=value, the KEY of letters, digits and '_', the value unquoted or in quotes", i+1, errEnvLine, problem)
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || line[0] == '#' {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			line = strings.TrimSpace(rest)
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, bad(i, "no '=' on the line")
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if key == "" {
			return nil, bad(i, "no KEY before '='")
		}
		if !envKey(key) {
			return nil, bad(i, "the KEY holds a character other than letters, digits, '_', '.' and '-', or starts with a digit")
		}
		if value == "" || !strings.ContainsRune(`'"`+"`", rune(value[0])) {
			if at := strings.Index(value, " #"); at >= 0 {
				value = value[:at]
			} else if at := strings.Index(value, "\t#"); at >= 0 {
				value = value[:at]
			}
			env[key] = strings.TrimSpace(value)
			continue
		}
		// A quoted value: up to its closing quote, on this line or a
		// later one, each line looked at once (a backslash ending a
		// line escapes only its line break).
		quote, start := value[0], i
		var b strings.Builder
		part, rest := value[1:], ""
		for {
			if end := closing(part, quote); end >= 0 {
				b.WriteString(part[:end])
				rest = strings.TrimSpace(part[end+1:])
				break
			}
			if i+1 == len(lines) {
				return nil, bad(start, "its quote is not closed")
			}
			b.WriteString(part)
			b.WriteByte('\n')
			i++
			part = lines[i]
		}
		text := b.String()
		if rest != "" && rest[0] != '#' {
			return nil, bad(i, "text after the closing quote")
		}
		if quote == '"' {
			text = unescapeDouble(text)
		}
		env[key] = text
	}
	return env, nil
}

// envKey reports whether key is a name parseDotenv takes.
func envKey(key string) bool {
	for i, r := range key {
		switch {
		case r == '_' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z':
		case i > 0 && (r == '.' || r == '-' || '0' <= r && r <= '9'):
		default:
			return false
		}
	}
	return true
}

// closing is the index in s of the quote that closes a value opened with
// quote, -1 when s has none; in double quotes, \" is no closing quote.
func closing(s string, quote byte) int {
	for i := 0; i < len(s); i++ {
		switch {
		case quote == '"' && s[i] == '\\':
			i++
		case s[i] == quote:
			return i
		}
	}
	return -1
}

// unescapeDouble reads the escapes of a double-quoted value: \n, \r, \t,
// \" and \\; a backslash before anything else is kept.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\r`, "\r", `\t`, "\t", `\"`, `"`).Replace(s)
}
