package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/unfold-dev/unfold/tools"
)

type addIn struct {
	A int `json:"a" description:"first addend"`
	B int `json:"b" description:"second addend"`
}

func Example() {
	add := tools.MustNew("add", "Add two integers.", func(ctx context.Context, tc tools.Context, in addIn) (int, error) {
		return in.A + in.B, nil
	})
	fmt.Println(string(add.InputSchema()))

	// The model sent good arguments.
	res, err := add.Call(context.Background(), tools.Context{}, json.RawMessage(`{"a": 2, "b": 3}`))
	fmt.Println(res.Success, res.Message, err)

	// The model sent bad arguments: it reads what to fix; the program sees no error.
	res, err = add.Call(context.Background(), tools.Context{}, json.RawMessage(`{"a": "2"}`))
	fmt.Println(res.Success, res.Message, err)
	// Output:
	// {"type":"object","properties":{"a":{"type":"integer","description":"first addend"},"b":{"type":"integer","description":"second addend"}},"required":["a","b"],"additionalProperties":false}
	// true 5 <nil>
	// false Invalid arguments: a: expected integer, but got string; b: missing required property <nil>
}

func ExampleHalt() {
	errDisk := errors.New("disk full")
	save := tools.MustNew("save", "Save a note.", func(ctx context.Context, tc tools.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		if in.Text == "" {
			// The model can fix this: a failed result.
			return "", errors.New("text is empty; write the note first")
		}
		// The program must handle this: a Go error.
		return "", tools.Halt(errDisk)
	})

	res, err := save.Call(context.Background(), tools.Context{}, json.RawMessage(`{"text": ""}`))
	fmt.Printf("%q %v\n", res.Message, err)

	_, err = save.Call(context.Background(), tools.Context{}, json.RawMessage(`{"text": "hi"}`))
	fmt.Println(errors.Is(err, errDisk))
	// Output:
	// "text is empty; write the note first" <nil>
	// true
}
