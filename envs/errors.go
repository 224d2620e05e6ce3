package envs

import (
	"errors"
	"fmt"
)

// ErrClosed is returned, wrapped, by Execute on an environment that has been
// closed. Test for it with errors.Is.
var ErrClosed = errors.New("environment is closed")

// Failure is a handler error whose message is the whole response, for text
// that already says what went wrong and how to recover (errors go in
// responses, not screens). Other handler errors are shown as "Error: <message>".
type Failure struct {
	Message string
}

func (f *Failure) Error() string { return f.Message }

// Fail returns a *Failure with a formatted message.
func Fail(format string, args ...any) error {
	return &Failure{Message: fmt.Sprintf(format, args...)}
}
