// Package editor is the file editor environment: views of files bounded by
// regular expressions that follow the code as it changes, line edits that
// are refused when the file changed under them, search, and file creation,
// all confined to a project root.
//
// # Commands
//
//	view <file> /<start>/ /<end>/ [label]   (an optional "to" between the patterns)
//	edit <file> <start>-<end>               then the new lines
//	search "<pattern>" <glob>
//	create <file>                           then the content lines
//	close <id>
//	next_match <id>
//	prev_match <id>
//
// Patterns are Go RE2 regular expressions matched against one line at a
// time, without its line ending; \/ is a slash inside a pattern. A file name
// with spaces is written in double quotes. For edit and create, everything
// after the first line is the content, byte for byte; a final newline ends
// the last line rather than adding an empty one. Responses are worded as
// the editor design lists them: "Added view [1] src/main.c /^int main\(/
// to /^}$/", "Edited src/main.c lines 121-121", "Matches:" and
// "path:line: text" lines, "Created notes.md", "Closed view [1]",
// "Showing match 2/2".
//
// # Views
//
// Every screen re-reads each viewed file. All lines matching the start
// pattern are matches; the view shows the one selected with next_match and
// prev_match ("(match 2/3)"), from its line to the first line after it that
// matches the end pattern, at most 1,000 lines; past that it is cut and
// marked "[TRUNCATED: end pattern not found within 1000 lines]". At most
// five views are kept: opening a sixth closes the oldest, and the response
// says so. A view whose file is gone shows "[ERROR: file not found]", one
// whose start pattern no longer matches "[BROKEN: patterns not found]";
// either is shown once, then removed. Files with a NUL byte in their first
// 8 KB are binary and refused. Lines longer than 1,000 bytes are cut on the
// screen with a note of how many bytes were left out.
//
// # Edits
//
// An edit replaces whole lines, and only lines one view shows. Before
// writing, the lines the view last showed are compared with the file: if
// any differ (the file changed since the screen), the edit is refused, the
// response lists the expected and actual lines, and the file is not
// touched. New lines end like the last line they replace (LF or CRLF);
// every byte outside the edited lines is kept, tabs and a missing final
// newline included. The file is written to a temporary file in the same
// directory, given the original mode and renamed into place, so a failed
// write leaves the original intact; a symbolic link is written through and
// stays a link. When an edit changes a view's first or last line, that
// boundary's pattern becomes the new line's literal text (escaped), so the
// view keeps following it. An edit with no view of the file answers with
// the recovery steps of the help-system design, naming the view command;
// errors go in responses, never on the screen.
//
// # Search and create
//
// search lists "path:line: text" for every line matching the pattern in the
// files matching the glob, sorted by path and line, at most 100 lines (the
// response says how many more). In globs, * and ? stay inside one path
// segment, ** spans directories, {a,b} gives alternatives, and a glob
// without a slash matches file names at any depth (*.go is every Go file).
// .git directories and binary files are skipped. create refuses a file
// that exists, pointing to view and edit instead, and makes missing parent
// directories.
//
// # Confinement
//
// Every path is resolved inside the project root. [New] reaches the files
// through [RootFs], an afero filesystem over an [os.Root], so "..", absolute
// paths outside the root, sibling directories such as ../root-evil, and
// symbolic links leading out are all refused with a message saying so.
// [NewFs] runs the editor over any afero filesystem (tests use an in-memory
// one); the editor itself refuses ".." and absolute paths there too.
//
// # Registering
//
// The editor is an [envs.Env], [envs.Closer] and [envs.Summarizer] named
// [Name]; its help usage is recorded in the session given to [New]:
//
//	ed, err := editor.New(projectDir, sess)
//	if err != nil {
//		return err
//	}
//	err = orch.Register(editor.Name, ed)
package editor
