package editor_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/envs/editor"
	"github.com/unfold-dev/unfold/session"
)

// A view bounded by patterns follows the code it shows; an edit changes
// only lines a view shows, as they were shown.
func ExampleNew() {
	ed, err := editor.NewFs(afero.NewMemMapFs(), session.New())
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, cmd := range []string{
		"create main.go\npackage main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"view main.go /^func main/ /^}/",
		"edit main.go 4-4\n\tprintln(\"hello\")\n\tprintln(\"world\")",
	} {
		resp, err := ed.Execute(ctx, cmd)
		if err != nil {
			panic(err)
		}
		fmt.Println(resp.Success, resp.Output)
	}
	screen, err := ed.Screen()
	if err != nil {
		panic(err)
	}
	views, _, _ := strings.Cut(screen.Content, "\n\nCommands:")
	fmt.Println(views)
	// Output:
	// true Created main.go
	// true Added view [1] main.go /^func main/ to /^}/
	// true Edited main.go lines 4-4
	// Views:
	//   [1] main.go /^func main/ to /^}/ (match 1/1)
	//       3  func main() {
	//       4  	println("hello")
	//       5  	println("world")
	//       6  }
}
