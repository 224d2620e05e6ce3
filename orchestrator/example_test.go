package orchestrator_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/orchestrator"
)

// upper is a tiny environment: it upper-cases commands and shows the last
// one on its screen.
type upper struct{ last string }

func (u *upper) Execute(_ context.Context, cmd string) (envs.Response, error) {
	u.last = cmd
	return envs.Response{Output: strings.ToUpper(cmd), Success: true}, nil
}

func (u *upper) Screen() (envs.Screen, error) {
	return envs.Screen{Content: "Last: " + u.last, MaxLines: 5}, nil
}

func ExampleOrchestrator_Execute() {
	o, err := orchestrator.New()
	if err != nil {
		panic(err)
	}
	defer o.Close()
	if err := o.Register("upper", &upper{}); err != nil {
		panic(err)
	}

	res := o.Execute(context.Background(), "upper", "hello")
	fmt.Println(res.Response.Output, res.Response.Success)
	fmt.Println(res.Screens["upper"].Content)

	res = o.Execute(context.Background(), "lower", "hello")
	fmt.Println(res.Response.Output)
	// Output:
	// HELLO true
	// Last: hello
	// Unknown environment: lower
	// Available: upper
}

func ExampleTruncate() {
	fmt.Println(orchestrator.Truncate("one\ntwo\nthree\nfour\nfive", 3))
	// Output:
	// one
	// two
	// [... 3 more lines cut: this screen shows at most 3 lines]
}
