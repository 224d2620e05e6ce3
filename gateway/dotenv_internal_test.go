package gateway

import (
	"strings"
	"testing"
)

// TestDotenvLongQuotedValue reads a quoted value of 40,000 lines, 80 KB:
// each line is looked at once and copied into one growing value, not the
// value copied again for every line (which took half a minute for 160 KB
// and extrapolated to 25 minutes for the 1 MiB an envFile may hold).
func TestDotenvLongQuotedValue(t *testing.T) {
	const lines = 40000
	text := "A=\"" + strings.Repeat("x\n", lines) + "\"\nB=2\n"
	var env map[string]string
	allocs := testing.AllocsPerRun(1, func() {
		var err error
		if env, err = parseDotenv(text); err != nil {
			t.Fatal(err)
		}
	})
	if len(env["A"]) != 2*lines || env["B"] != "2" {
		t.Fatalf("got A of %d bytes and B %q, want %d and 2", len(env["A"]), env["B"], 2*lines)
	}
	if allocs > 200 {
		t.Errorf("parsing made %.0f allocations, want the value built once (under 200), not once per line", allocs)
	}
}

// TestDotenvBOM reads a file saved with a byte order mark.
func TestDotenvBOM(t *testing.T) {
	env, err := parseDotenv("\ufeffKEY=value\r\nOTHER=2\r\n")
	if err != nil || env["KEY"] != "value" || env["OTHER"] != "2" {
		t.Errorf("got %v, %v; want KEY=value and OTHER=2", env, err)
	}
}

// TestLooksSecret: names and values that say secret, and those that do
// not.
func TestLooksSecret(t *testing.T) {
	for _, tc := range []struct {
		name, val string
		want      bool
	}{
		{"MYSQL_PWD", "hunter2hunter", true},
		{"DB_PW", "s3cr3t", true},
		{"GITHUB_PAT", "abc", true},
		{"MYSQL_PASSWD", "x", true},
		{"DATABASE_URL", "postgres://app:correcthorse@db/app", true},
		{"CACHE", "redis://:hunter@cache", true},
		{"PWD", "/home/me/project", false},
		{"PATH_PREFIX", "/srv", false},
		{"DATABASE_URL", "postgres://db/app", false},
		{"PORT", "8080", false},
		{"NODE_ENV", "production", false},
	} {
		if got := looksSecret(tc.name, tc.val); got != tc.want {
			t.Errorf("looksSecret(%s, %q) = %v, want %v", tc.name, tc.val, got, tc.want)
		}
	}
	var c ServerConfig
	c.addMask("DATABASE_URL", "mongodb://admin:letmein@db", false)
	if got := c.mask("auth failed for letmein at mongodb://admin:letmein@db"); got != "auth failed for ${DATABASE_URL} at ${DATABASE_URL}" {
		t.Errorf("got %q, want the URL and its password masked", got)
	}
}
