package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/peterh/liner"
)

// lineReader reads the REPL's input one line at a time.
type lineReader interface {
	// ReadLine returns the next line without its line ending, after showing
	// prompt where a person types. It returns io.EOF at the end of the
	// input, errInterrupted when Ctrl-C dropped the line being typed, and
	// errLineTooLong for a line over maxReplInput bytes, which it skips.
	ReadLine(prompt string) (string, error)
	// Close gives the terminal back as it was and saves the history.
	Close() error
}

var (
	errLineTooLong = errors.New("line too long")
	errInterrupted = errors.New("interrupted")
)

// newLineReader returns a line editor with history when stdin and stdout are
// the process's terminal, and a plain reader of lines otherwise (a pipe, a
// file), which prints prompts only when stdin is a terminal. The editor
// keeps its history in historyFile when it is not empty; problems with that
// file are reported on stderr and do not stop the REPL.
func newLineReader(stdin io.Reader, stdout io.Writer, historyFile string, stderr io.Writer) lineReader {
	if stdin == io.Reader(os.Stdin) && stdout == io.Writer(os.Stdout) && isTerminal(os.Stdin) && isTerminal(os.Stdout) {
		return newLineEditor(historyFile, stderr)
	}
	return &plainReader{br: bufio.NewReaderSize(stdin, 64<<10), out: stdout, prompt: isTerminal(stdin)}
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// plainReader reads lines from a pipe or a file.
type plainReader struct {
	br     *bufio.Reader
	out    io.Writer
	prompt bool // print prompts
}

func (p *plainReader) ReadLine(prompt string) (string, error) {
	if p.prompt {
		fmt.Fprint(p.out, prompt)
	}
	return readReplLine(p.br, maxReplInput)
}

func (p *plainReader) Close() error { return nil }

// readReplLine reads one line without its newline; a line longer than limit
// is consumed and reported as errLineTooLong without being kept.
func readReplLine(br *bufio.Reader, limit int) (string, error) {
	var b strings.Builder
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if b.Len()+len(chunk) > limit+2 {
				over = true
				b.Reset()
			} else {
				b.Write(chunk)
			}
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil, io.EOF:
			if err == io.EOF && b.Len() == 0 && !over {
				return "", io.EOF
			}
			if over {
				return "", errLineTooLong
			}
			return strings.TrimSuffix(strings.TrimSuffix(b.String(), "\n"), "\r"), nil
		default:
			return "", err
		}
	}
}

// maxHistoryLine is the longest line kept in the history: longer ones
// (pasted text) are run but not recalled.
const maxHistoryLine = 4000

// lineEditor edits lines on the terminal, with a history of the lines typed.
type lineEditor struct {
	st      *liner.State
	history *historyFile // nil for none
	last    string       // the last line in the editor's history
}

func newLineEditor(path string, stderr io.Writer) *lineEditor {
	e := &lineEditor{st: liner.NewLiner()}
	e.st.SetCtrlCAborts(true)
	if path == "" {
		return e
	}
	e.history = &historyFile{path: path}
	lines, err := e.history.load(liner.HistoryLimit)
	if err != nil {
		fmt.Fprintf(stderr, "unfold repl: history %s: %v\n", path, err)
	}
	if len(lines) > 0 {
		e.st.ReadHistory(strings.NewReader(strings.Join(lines, "\n") + "\n"))
		e.last = lines[len(lines)-1]
	}
	return e
}

func (e *lineEditor) ReadLine(prompt string) (string, error) {
	line, err := e.st.Prompt(prompt)
	switch {
	case errors.Is(err, liner.ErrPromptAborted):
		fmt.Println()
		return "", errInterrupted
	case err == io.EOF:
		fmt.Println()
		return "", io.EOF
	case err != nil:
		return "", err
	case len(line) > maxReplInput:
		return "", errLineTooLong
	}
	if strings.TrimSpace(line) != "" && len(line) <= maxHistoryLine && line != e.last {
		e.st.AppendHistory(line)
		e.last = line
		if e.history != nil {
			e.history.add(line)
		}
	}
	return line, nil
}

// Close gives the terminal back and adds the lines typed to the history
// file (see [historyFile.save]).
func (e *lineEditor) Close() error {
	err := e.st.Close()
	if e.history == nil {
		return err
	}
	return errors.Join(err, e.history.save())
}
