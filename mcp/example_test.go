package mcp_test

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
)

// ExampleNew serves a declarative environment and lists its tool with an
// SDK client over the in-memory transport: the description carries the
// environment's help, long for the command not used yet.
func ExampleNew() {
	ctx := context.Background()
	sess := session.New()
	o, _ := orchestrator.New(orchestrator.WithSession(sess))
	defer o.Close()
	greeter, _ := envs.NewDeclarative("greeter", sess, envs.DeclarativeSpec{
		Description: "Greets people",
		Commands: []envs.Command{{
			Signature:   "greet <name>",
			Description: "Say hello to name.",
			Example:     "greet Ada",
			Handler:     func(_ context.Context, name string) (string, error) { return "Hello, " + name + "!", nil },
		}},
	})
	_ = o.Register("greeter", greeter)

	s, err := mcp.New(func(context.Context) (*orchestrator.Orchestrator, error) { return o, nil }, mcp.Options{})
	if err != nil {
		panic(err)
	}
	serverT, clientT := sdk.NewInMemoryTransports()
	ss, _ := s.Connect(ctx, serverT)
	defer ss.Close()
	cs, _ := sdk.NewClient(&sdk.Implementation{Name: "example"}, nil).Connect(ctx, clientT, nil)
	defer cs.Close()

	list, _ := cs.ListTools(ctx, nil)
	for _, t := range list.Tools {
		if t.Name == "greeter" {
			_, help, _ := strings.Cut(t.Description, "\n\n")
			fmt.Println(help)
		}
	}
	res, _ := cs.CallTool(ctx, &sdk.CallToolParams{Name: "greeter", Arguments: map[string]any{"command": "greet Ada"}})
	fmt.Println(res.Content[0].(*sdk.TextContent).Text)
	// Output:
	// Commands:
	//   greet <name>
	//     Say hello to name.
	//     Example:
	//       ```greeter
	//       greet Ada
	//       ```
	// Hello, Ada!
}
