package visibility_test

import (
	"fmt"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

func ExampleResolve() {
	sess := session.New()
	if err := visibility.Register(sess); err != nil {
		panic(err)
	}
	// The section declares SUMMARY; the session later opens it.
	sel := visibility.Const(visibility.Summary)

	m, why, _ := visibility.Resolve(sess, "docs.api", sel, nil)
	fmt.Println(m, why)

	if err := sess.Dispatch(visibility.SetOverride{Path: "docs.api", Mode: visibility.Full}); err != nil {
		panic(err)
	}
	m, why, _ = visibility.Resolve(sess, "docs.api", sel, nil)
	fmt.Println(m, why)

	if err := sess.Dispatch(visibility.ClearOverride{Path: "docs.api"}); err != nil {
		panic(err)
	}
	m, why, _ = visibility.Resolve(sess, "docs.api", sel, nil)
	fmt.Println(m, why)
	// Output:
	// SUMMARY declared
	// FULL override
	// SUMMARY declared
}

func ExampleFromParams() {
	type listing struct{ Files []string }
	// Long listings render as their summary.
	sel := visibility.FromParams(func(p listing) visibility.Mode {
		if len(p.Files) > 2 {
			return visibility.Summary
		}
		return visibility.Full
	})
	for _, p := range []listing{{Files: []string{"a"}}, {Files: []string{"a", "b", "c"}}} {
		m, why, err := visibility.Resolve(nil, "files", sel, p)
		fmt.Println(m, why, err)
	}
	// Output:
	// FULL selector <nil>
	// SUMMARY selector <nil>
}
