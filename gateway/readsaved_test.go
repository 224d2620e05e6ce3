package gateway_test

import (
	"testing"

	"github.com/unfold-dev/unfold/gateway"
)

// TestReadSavedWith words a cut result's note after the session's
// environments and resources.
func TestReadSavedWith(t *testing.T) {
	const name = "context/output/x.txt"
	for _, tc := range []struct {
		envs      []string
		resources bool
		want      string
	}{
		{[]string{"bash", "editor", "python"}, false, "view it with the editor, or search it with grep"},
		{[]string{"bash", "editor"}, true, "view it with the editor, search it with grep, or read it as the resource unfold://context/output/x.txt"},
		{[]string{"python"}, false, "read it with python"},
		{[]string{"python", "bash"}, false, "search it with grep"},
		{nil, true, "read it as the resource unfold://context/output/x.txt"},
		{[]string{"sqlite"}, false, "no tool of this session reads it; call the tool again asking for less (a range of lines, a head or a tail, a narrower query)"},
	} {
		if got := gateway.ReadSavedWith(tc.envs, tc.resources)(name); got != tc.want {
			t.Errorf("ReadSavedWith(%v, %v) = %q, want %q", tc.envs, tc.resources, got, tc.want)
		}
	}
}
