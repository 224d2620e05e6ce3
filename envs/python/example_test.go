package python_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/unfold-dev/unfold/envs/python"
)

func Example() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	r, err := python.New(python.WithDir(dir))
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	for _, code := range []string{
		"import math\nradius = 2",
		"print('area:')\nmath.pi * radius ** 2",
		"raise ValueError('negative radius')",
	} {
		resp, err := r.Execute(ctx, code)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s\n(success %v)\n", resp.Output, resp.Success)
	}
	// Output:
	// (success true)
	// area:
	// 12.566370614359172
	// (success true)
	// Traceback (most recent call last):
	//   File "<cell-3>", line 1, in <module>
	//     raise ValueError('negative radius')
	// ValueError: negative radius
	// (success false)
}
