package bpe_test

import (
	"fmt"

	"github.com/unfold-dev/unfold/tokens/bpe"
)

func Example() {
	c := bpe.O200kBase()
	fmt.Println(c.Count("tiktoken is great!"))
	// Output: 6
}

func ExampleCounter_LowerBound() {
	c := bpe.Cl100kBase()
	text := "Antidisestablishmentarianism, 1234567 times."
	fmt.Println(c.LowerBound(text), "<=", c.Count(text))
	// Output: 7 <= 13
}
