//go:build !unix

package prompt_test

import "time"

// processTime is not measured here; benchmarks then report no processor
// time.
func processTime() time.Duration { return 0 }
