package envs_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/unfold-dev/unfold/envs"
)

func ExampleDeclarative() {
	var greeted []string // guarded by the Declarative: handlers run one at a time
	greeter, err := envs.NewDeclarative("greeter", nil, envs.DeclarativeSpec{
		Description: "Greets people by name",
		Commands: []envs.Command{
			{
				Signature:   "greet <name>",
				Description: "Say hello to someone.\nThe name is everything after the command.",
				Example:     "greet Ada Lovelace",
				Handler: func(_ context.Context, name string) (string, error) {
					if name == "" {
						return "", fmt.Errorf("whom should I greet? Try: greet Ada")
					}
					greeted = append(greeted, name)
					return "Hello, " + name + "!", nil
				},
			},
			{
				Signature:   "count",
				Description: "Show how many people were greeted.",
				Handler: func(context.Context, string) (string, error) {
					return fmt.Sprint(len(greeted)), nil
				},
			},
		},
	})
	if err != nil {
		panic(err)
	}
	show := func() {
		s, _ := greeter.Screen()
		fmt.Println(s.Content)
		fmt.Println(strings.Repeat("-", 20))
	}
	show()
	for _, cmd := range []string{"greet Ada", "greet", "wave"} {
		r, _ := greeter.Execute(context.Background(), cmd)
		fmt.Printf("%s -> success=%v\n%s\n", cmd, r.Success, r.Output)
	}
	fmt.Println(strings.Repeat("-", 20))
	show()
	// Output:
	// Greets people by name
	//
	// Commands:
	//   greet <name>
	//     Say hello to someone.
	//     The name is everything after the command.
	//     Example:
	//       ```greeter
	//       greet Ada Lovelace
	//       ```
	//
	//   count - Show how many people were greeted
	// --------------------
	// greet Ada -> success=true
	// Hello, Ada!
	// greet -> success=false
	// Error: whom should I greet? Try: greet Ada
	// wave -> success=false
	// Unknown command: wave
	// Available: count, greet
	// --------------------
	// Greets people by name
	//
	// Commands:
	//   greet <name> - Say hello to someone
	//
	//   count - Show how many people were greeted
	// --------------------
}
