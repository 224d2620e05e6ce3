//go:build !unix

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "soak: needs a unix system (it samples /proc and signals processes)")
	os.Exit(2)
}
