// Package textgen makes text of the kinds prompts carry, for tests and
// benchmarks that need a lot of it.
package textgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Markdown returns about size bytes of markdown of the kinds prompts
// carry: headings, prose, task lists, code blocks, tables, links, text in
// other scripts and emoji. The same size always gives the same text.
func Markdown(size int) string {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the a of to and in is for that with on as by this be are from or it an at
		function return error value config server request response token budget prompt section render
		environment command output screen session event reducer snapshot orchestrator parser don't
		it's we'll they're I've HTTP JSONDecoder getUserID XMLHttpRequest naïve café déjà-vu`)
	pick := func() string { return words[r.IntN(len(words))] }
	var b strings.Builder
	b.Grow(size + 4096)
	for n := 0; b.Len() < size; n++ {
		switch n % 10 {
		case 0:
			w := pick()
			fmt.Fprintf(&b, "## %d. %s %s (%s.%s-%d)\n\n", n, strings.ToUpper(w[:1])+w[1:], pick(), pick(), pick(), n)
		case 1, 2:
			for range 3 + r.IntN(4) {
				s := make([]string, 8+r.IntN(12))
				for k := range s {
					s[k] = pick()
				}
				fmt.Fprintf(&b, "%s, %d%% of %s. ", strings.Join(s, " "), r.IntN(100), pick())
			}
			b.WriteString("\n\n")
		case 3:
			for k := range 4 {
				fmt.Fprintf(&b, "- [ ] %s `%s_%d()` — %s\n", pick(), pick(), k, pick())
			}
			b.WriteString("\n")
		case 4:
			fmt.Fprintf(&b, "```go\nfunc %s%d(ctx context.Context, in []byte) (int, error) {\n\tif len(in) > %d {\n\t\treturn 0, fmt.Errorf(\"%s: %%w\", ErrTooLong)\n\t}\n\treturn strconv.Atoi(string(in[:%d]))\n}\n```\n\n",
				pick(), n, r.IntN(4096), pick(), r.IntN(64))
		case 5:
			b.WriteString("| name | value | notes |\n| --- | ---: | --- |\n")
			for range 3 {
				fmt.Fprintf(&b, "| %s | %.3f | %s %s |\n", pick(), r.Float64()*1000, pick(), pick())
			}
			b.WriteString("\n")
		case 6:
			fmt.Fprintf(&b, "See [%s](https://example.com/%s/%d?q=%s#L%d) and <mailto:%s@example.org>.\n\n", pick(), pick(), n, pick(), r.IntN(900), pick())
		case 7:
			fmt.Fprintf(&b, "> 注意: %s を確認してください。Ελληνικά κείμενο, русский текст, عربي %d 🚀✨ café naïve\n\n", pick(), n)
		case 8:
			fmt.Fprintf(&b, "```python\ndef %s_%d(xs):\n    return {k: v ** 2 for k, v in enumerate(xs) if v %% %d}\n```\n\n", pick(), n, 2+r.IntN(7))
		case 9:
			fmt.Fprintf(&b, "    $ %s --%s=%d  \n    \n\n---\n\n", pick(), pick(), r.IntN(1<<20))
		}
	}
	return b.String()
}
