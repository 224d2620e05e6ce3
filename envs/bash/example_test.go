package bash_test

import (
	"context"
	"fmt"
	"os"

	"github.com/unfold-dev/unfold/envs/bash"
)

// A shell keeps its state between commands: variables, the working
// directory, background jobs.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	sh, err := bash.New(bash.WithDir(dir))
	if err != nil {
		panic(err)
	}
	defer sh.Close()
	ctx := context.Background()
	for _, cmd := range []string{"greeting=hello", `echo "$greeting, world"`, "false"} {
		resp, err := sh.Execute(ctx, cmd)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s -> success %v, output %q\n", cmd, resp.Success, resp.Output)
	}
	// Output:
	// greeting=hello -> success true, output ""
	// echo "$greeting, world" -> success true, output "hello, world"
	// false -> success false, output ""
}
