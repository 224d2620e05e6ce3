package interactive_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/interactive"
	"github.com/unfold-dev/unfold/internal/procs"
)

// TestInitFailureNamesLimit: an init command that fails the start says
// which limit cut it off, or that it left the program at its
// continuation prompt, not only that no prompt came.
func TestInitFailureNamesLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec interactive.Spec
		want string
	}{
		{"hard_timeout", interactive.Spec{Command: "sqlite3", Prompt: `sqlite> `, Description: "SQLite", Init: []string{".shell sleep 1000"}, Timeout: 2 * time.Second, Hard: true},
			`Failed to start sqlite3: init command ".shell sleep 1000": the prompt did not come back within 2s, the spec's hard timeout, so it was interrupted`},
		{"continuation", interactive.Spec{Command: "sqlite3", Prompt: `sqlite> `, Description: "SQLite", Init: []string{"select 1"}},
			`Failed to start sqlite3: init command "select 1": it left the program at its continuation prompt, waiting for the rest of the command (a missing ; or closing bracket?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.spec)
			resp, err := e.ExecuteLimited(context.Background(), "select 2;", envs.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(resp.Output, tc.want) || resp.Success || resp.Running {
				t.Errorf("got %+v, want output starting %q", resp, tc.want)
			}
		})
	}
}

// TestCPULimitNamed: a program its CPU time limit ends says so, with the
// limit, not only the signal.
func TestCPULimitNamed(t *testing.T) {
	spec := sqliteSpec
	spec.Resources = procs.Limits{CPUSeconds: 1}
	e := newEnv(t, spec)
	resp := run(t, e, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<3000000000) SELECT count(*) FROM c;", 2*time.Minute)
	const want = "[sqlite3 was killed by signal 9 (killed): it used up its processor time limit (cpu_seconds, 1 s, counted over the program's whole run). It starts again with the next command.]"
	if !strings.HasSuffix(resp.Output, want) || resp.Success {
		t.Errorf("got %+v, want output ending %q", resp, want)
	}
}
