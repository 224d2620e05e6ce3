package term

// Wait is what a look at a process tells of its waiting to read the
// terminal. The values are ordered: a larger one is the surer.
type Wait uint8

const (
	// NotWaiting: the process does not wait to read the terminal, or
	// could not be looked at.
	NotWaiting Wait = iota
	// MayWait: the process waits in an event loop (poll(2), epoll(7))
	// with the terminal among what it watches for input. A program that
	// asks a question waits so (node's readline, prompt_toolkit), but so
	// does one that forwards the terminal while it works (script, ssh,
	// docker run -it), and an event loop that read the terminal once and
	// still has it registered (node after rl.close()): the caller weighs
	// it with what the program printed.
	MayWait
	// Waits: the process is blocked in read(2) on the terminal, or in a
	// line editor's pselect6(2) on it alone, until a key comes.
	Waits
)
